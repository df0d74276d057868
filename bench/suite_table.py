#!/usr/bin/env python3
"""Prints the markdown table of a benchmark suite run (bench/suite.py, a tirtune-bench/1 file) for
docs/BENCHMARKS.md: the command and machine, then one row per workload (group, workload, tirtune's
GFLOP/s, the record tirtune kept (a tuned kernel or a library call such as dnnl.conv2d; runs from
before the suite recorded it have no such column), each baseline's GFLOP/s and ratio, trials and
seconds until tirtune's best so far reached 90% of its final best, status) and the geometric
mean of the ratios per baseline, over all workloads and over operators and subgraphs apart; then
the rows below 1.0 against each baseline, saying whether tirtune ran the baseline's own kernel
there (with the quartiles of the pairs' ratios) or one of its own; then the whole tuning loop's
trials per second and the shares of search, build and run in it.

Ratio: the median over the timing pairs of baseline latency / tirtune latency (> 1: tirtune is
faster); GFLOP/s: tirtune's FLOP count of the workload over the median latency.

Usage: bench/suite_table.py RESULTS.json
"""

import json
import math
import statistics
import sys

# Baseline columns in this order; others follow alphabetically.
KNOWN = {"onednn": "oneDNN", "onednn_fused": "oneDNN fused", "metaschedule": "MetaSchedule"}


def fmt_gflops(flops, latency):
    return f"{flops / latency / 1e9:.1f}" if latency else "–"


def ratio_of(timing, tirtune_latency):
    """The suite's median per-pair ratio; for other files, the ratio of the latencies."""
    if timing.get("ratio") is not None:
        return timing["ratio"]
    return timing["latency_s"] / tirtune_latency


def geomean(values):
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def short(text, limit=70):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def loop_summary(done):
    """The whole tuning loop's throughput (trials per second of `tirtune tune`) and the shares of
    search (candidate generation with the cost model), build and run (verify and time) in it."""
    timed = [w["tirtune"] for w in done
             if w["tirtune"].get("tuning_s") and w["tirtune"].get("trials")]
    if not timed:
        return
    rates = [t["trials"] / t["tuning_s"] for t in timed]
    total = sum(t["tuning_s"] for t in timed)
    parts = {k: sum(t.get(f"{k}_s", 0) for t in timed) for k in ("search", "build", "run")}
    print(f"\nWhole tuning loop: {sum(t['trials'] for t in timed)} trials in {total / 60:.0f} min;"
          f" {statistics.median(rates):.2f} trials/s per workload (median; "
          f"{min(rates):.2f}–{max(rates):.2f}); of the tuning time, "
          + ", ".join(f"{k} {v / total:.0%}" for k, v in parts.items())
          + f", other (cost-model training, database, start-up) "
          f"{max(0, total - sum(parts.values())) / total:.0%}.")


def pair_ratios(w, baseline):
    """The per-pair ratios baseline / tirtune of a workload's timing pairs (the i-th sample of
    each side is the i-th pair), or [] when the file has no samples."""
    ours = w["tirtune"].get("samples_s") or []
    theirs = w.get("baselines", {}).get(baseline, {}).get("samples_s") or []
    return [b / t for t, b in zip(ours, theirs) if t > 0]


def below_one(done, baselines):
    """The rows under 1.0 against each baseline, apart by what tirtune ran: the baseline
    library's own kernel (the same primitive on both sides, so the ratio is the spread of the
    host: the pairs' quartiles say by how much) or a kernel of its own."""
    for b in baselines:
        low = [w for w in done if w.get("baselines", {}).get(b)
               and ratio_of(w["baselines"][b], w["tirtune"]["latency_s"]) < 1.0]
        if not low:
            continue
        label = KNOWN.get(b, b)
        print(f"\nBelow 1.0 vs {label}: {len(low)} row(s).")
        for w in low:
            kept = w["tirtune"].get("kernel", "?")
            r = ratio_of(w["baselines"][b], w["tirtune"]["latency_s"])
            pairs = sorted(pair_ratios(w, b))
            spread = ""
            if len(pairs) >= 4:
                q = statistics.quantiles(pairs, n=4)
                spread = f"; its {len(pairs)} pairs' ratios {q[0]:.3f}–{q[2]:.3f} between quartiles"
            own = kept.startswith("dnnl.") and b.startswith("onednn")
            what = (f"runs oneDNN's own kernel ({kept})" if own
                    else "runs a tuned kernel" if kept == "tuned" else f"runs {kept}")
            print(f"- {w['name']}: {r:.3f}, {what}{spread}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    if doc.get("schema") != "tirtune-bench/1":
        sys.exit(f"{sys.argv[1]}: not a tirtune-bench/1 file")
    # The suite's order (its `index`), failures in their place.
    done = doc.get("workloads", [])
    failed = doc.get("failed", [])
    rows = sorted(done + failed, key=lambda w: w.get("index", 0))
    names = {b for w in done for b in w.get("baselines", {})}
    names |= {b for w in done for b in w.get("errors", {})}
    baselines = [b for b in KNOWN if b in names] + sorted(names - set(KNOWN))

    machine, versions, budget = doc.get("machine", {}), doc.get("versions", {}), doc["budget"]
    settings = doc.get("settings", {})
    print(f"`{doc['command']}`\n")
    cpu = machine.get("cpu", "?") + (f" (LLVM: {machine['llvm_cpu']})"
                                     if "llvm_cpu" in machine else "")
    print(f"{doc['created_at']}; budget {budget['name']} ({budget['trials']} trials); "
          f"{settings.get('threads', machine.get('threads', '?'))} threads on {cpu}, "
          f"{machine.get('os', '?')}; {settings.get('pairs', '?')} timing pair(s); "
          + ", ".join(f"{k} {v}" for k, v in versions.items()) + "\n")
    if settings.get("nice"):
        print("**Smoke run at nice 19 on a shared machine: the numbers are not results.**\n")

    peak = machine.get("peak_gflops")
    if peak:
        print(f"Measured peak of the pinned CPUs (bench_peak_fma): {peak:.1f} GFLOP/s; tirtune's "
              f"GFLOP/s are followed by their share of it.\n")
    kernels = any("kernel" in w.get("tirtune", {}) for w in done)
    header = ["group", "workload", "tirtune GFLOP/s"] + (["kept"] if kernels else [])
    for b in baselines:
        label = KNOWN.get(b, b)
        header += [f"{label} GFLOP/s", f"ratio vs {label}"]
    header += ["trials / s to 90%", "status"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))

    ratios = {b: {"operator": [], "subgraph": [], "network": []} for b in baselines}
    notes = []
    for w in rows:
        if w.get("status") == "failed":
            row = [w.get("group", "?"), w["name"], "–"] + (["–"] if kernels else [])
            row += ["–", "–"] * len(baselines)
            row += ["–", f"failed ({w.get('stage', '?')}): {short(w.get('error', ''), 50)}"]
            notes.append(f"{w['name']}: {w.get('error', '')}")
            print("| " + " | ".join(row) + " |")
            continue
        t = w["tirtune"]
        row = [w["group"], w["name"], fmt_gflops(w["flops"], t["latency_s"])]
        if peak and w.get("kind") != "network":  # a model's FLOPs count only some operators
            row[2] += f" ({w['flops'] / t['latency_s'] / 1e9 / peak:.0%})"
        if kernels:
            row.append(t.get("kernel", "?"))
        for b in baselines:
            timing = w.get("baselines", {}).get(b)
            if timing:
                r = ratio_of(timing, t["latency_s"])
                ratios[b][w["kind"]].append(r)
                row += [fmt_gflops(w["flops"], timing["latency_s"]), f"{r:.3f}"]
            else:
                row += ["–", "–"]
        reach = "–" if t.get("trials_to_90") is None else \
            f"{t['trials_to_90']} / {t.get('seconds_to_90') or 0:.0f} s"
        status = w.get("status", "ok")
        for b, error in w.get("errors", {}).items():
            status = f"{KNOWN.get(b, b)} failed"
            notes.append(f"{w['name']}: {KNOWN.get(b, b)}: {error}")
        row += [reach, status]
        print("| " + " | ".join(row) + " |")

    # Geometric means: all workloads, then each kind that has rows.
    kinds = [k for k in ("operator", "subgraph", "network")
             if any(ratios[b][k] for b in baselines)]
    for label, selected in [("all", kinds)] + ([(k + "s", [k]) for k in kinds]
                                                if len(kinds) > 1 else []):
        row = [f"**geometric mean, {label}**", "", ""] + ([""] if kernels else [])
        for b in baselines:
            values = [r for k in selected for r in ratios[b][k]]
            g = geomean(values)
            row += ["", "–" if g is None else f"**{g:.3f}** ({len(values)})"]
        print("| " + " | ".join(row + ["", ""]) + " |")

    reached = [w["tirtune"]["trials_to_90"] for w in done
               if w["tirtune"].get("trials_to_90") is not None]
    if reached:
        print(f"\nTrials to 90% of the final best: median {statistics.median(reached):g}, "
              f"max {max(reached)} over {len(reached)} workloads.")
    below_one(done, baselines)
    loop_summary(done)
    if notes:
        print("\nFailures:\n")
        for note in notes:
            print(f"- {note}")


if __name__ == "__main__":
    main()
