#!/usr/bin/env python3
"""The benchmark suite of ../shared/BENCHMARKS.md in one command: every operator, subgraph and GEMM
shape there (the `benchmark_shapes` of `tirtune workload list --json`), tuned at one budget and
timed against its baselines, written as one tirtune-bench/1 file (docs/BENCH_FORMAT.md).

For each workload:
  1. `tirtune tune --workload W --trials N --target "llvm -num-cores=T" --json` into DB/tirtune.db,
     pinned to the first T CPUs (taskset);
  2. with --with-metaschedule, TVM MetaSchedule on the same operator at the same budget
     (bench/metaschedule_tune.py, the TVM of .bench-venv; workloads it has a TE definition of);
  3. the best kernel timed with `tirtune time --trace` (verified against the reference, default
     timer) and each baseline timed in its own process, alternating, PAIRS times: oneDNN
     (bench_dnnl, the output checked against a reference before timing), for subgraphs also
     oneDNN with the tail fused as post-ops, and MetaSchedule's kernel; a kernel under
     --short-ms (1 ms) gets SHORT_PAIRS_FACTOR (3) times as many pairs, since its time moves most
     from one process to the next (a 0.15 ms product ran 0.13-0.32 ms by process on one host);
  4. ratio = median over the pairs of baseline latency / tirtune latency (> 1: tirtune faster);
     trials and seconds until the best so far reached 90% / 95% of the final best, from the DB.

With --models A.onnx,B.onnx, each model comes after the operators: `tirtune tune --model` with
--model-trials (default 2,000, the networks' quick budget; ../shared/BENCHMARKS.md's full one is
about 900 per task) into the same database, then bench/vs_onnxruntime.sh compiles it with the best
records, checks its outputs against onnxruntime's on the same inputs and times both in
alternating pinned processes (onnxruntime from PyPI, installed into --venv when missing). It is a
"network" workload of the results file.

A workload that fails (no verified kernel, a baseline that crashes or computes the wrong result)
is recorded with what went wrong and the suite goes on; the exit status is 1 if any failed. The
results file is rewritten after every workload. `bench/suite_table.py RESULTS` makes the table.

A long run can be stopped (Ctrl-C, a machine going away) and continued with --resume and the
same --db and -o: the workloads already in the results file are kept, the others (and the failed
ones) are tuned with `tirtune tune --resume`, which counts the trials the database already holds
for a workload against the budget, so an interrupted tuning goes on where it stopped.

Examples:
  python3 bench/suite.py --budget quick -o results.json --db suite-db
  python3 bench/suite.py --budget quick -o results.json --db suite-db --resume   # after a stop
  python3 bench/suite.py --trials 8 --pairs 1 --only 'gemm:256|softmax:256' -o /tmp/r.json --nice
  python3 bench/suite.py --budget full --models resnet18.onnx,resnet50.onnx -o full.json --db db
  python3 bench/suite.py --check-baselines     # every baseline against its reference, small shapes
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

BUDGETS = {"quick": 200, "full": 1000}

# The row groups of ../shared/BENCHMARKS.md in its order, and the operators of the suite.
GROUP_ORDER = ["GEMM", "GMM", "C1D", "C2D", "C3D", "GRP", "DIL", "DEP", "T2D", "CAP", "NRM", "SFM",
               "CBR", "TBG", "MBG"]
OPERATOR_GROUPS = {
    "gemm": "GEMM", "batch_matmul": "GMM", "conv1d": "C1D", "conv2d": "C2D", "conv3d": "C3D",
    "depthwise_conv2d": "DEP", "conv2d_transpose": "T2D", "capsule_conv2d": "CAP", "norm": "NRM",
    "softmax": "SFM", "cbr": "CBR", "tbg": "TBG", "mbg": "MBG",
}
SUBGRAPHS = {"cbr", "tbg", "mbg"}

# Small shapes on which --check-baselines compares every output element of every baseline with
# its reference (each benchmark run checks a sample of the real shape's output as well).
SMALL_SHAPES = [
    "gemm:5,7,9", "gemm:64,48,80", "batch_matmul:3,5,7,9", "conv1d:1,9,4,6,3,2,1",
    "conv1d:2,9,4,6,3,1,2,2,2", "conv2d:1,7,7,4,6,3,2,1", "conv2d:2,9,8,8,12,3,1,1,2,4",
    "conv2d:1,9,9,16,32,3,2,1,1,4", "conv3d:1,5,6,7,4,6,3,1,1", "conv3d:1,5,6,7,4,8,3,2,1,1,2",
    "depthwise_conv2d:1,9,9,8,3,2,1", "depthwise_conv2d:1,9,9,16,3,1,2,2",
    "conv2d_transpose:1,4,4,8,4,4,2,1", "conv2d_transpose:2,5,3,6,5,3,2,0", "norm:3,5,7",
    "softmax:5,9", "cbr:1,7,7,4,6,3,2,1", "cbr:1,7,7,16,32,3,1,1", "tbg:2,5,3,4", "mbg:5,7,9",
]


def log(msg):
    print(f"suite {time.strftime('%H:%M:%S')}: {msg}", file=sys.stderr, flush=True)


class Failure(Exception):
    """A step of one workload failed; the message says which and why."""


class Unsupported(Exception):
    """A baseline cannot express the workload (not a failure)."""


def group_of(name, args):
    """The row group: conv2d with groups > 1 is GRP, with dilation > 1 DIL."""
    if name == "conv2d" and len(args) >= 10 and args[9] > 1:
        return "GRP"
    if name == "conv2d" and len(args) >= 9 and args[8] > 1:
        return "DIL"
    return OPERATOR_GROUPS[name]


def tail_of(text, lines=4):
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:]) or "(no output)"


class Suite:
    """One run of the suite: the programs, the settings and the work directory."""

    def __init__(self, opts):
        self.opts = opts
        self.root = root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        build = os.path.join(root, opts.build_dir)  # an absolute build dir stays as it is
        self.tirtune = os.path.abspath(opts.tirtune or os.path.join(build, "src", "tirtune"))
        self.dnnl = os.path.abspath(opts.bench_dnnl or os.path.join(build, "bench", "bench_dnnl"))
        self.cpus = opts.cpus or f"0-{opts.threads - 1}"
        self.target = f"llvm -num-cores={opts.threads}"
        self.trials = opts.trials if opts.trials is not None else BUDGETS[opts.budget]
        self.budget_name = opts.budget if opts.trials is None else "custom"
        self.venv_python = os.path.join(root, opts.venv, "bin", "python")
        # Set by prepare() and along the run.
        self.work = self.db = None
        self.dnnl_operators = set()
        self.tvm_version = None
        self.llvm_cpu = None

    # --- processes ------------------------------------------------------------------------------

    def command(self, argv, pinned=True):
        prefix = ["nice", "-n", "19"] if self.opts.nice else []
        if pinned:
            prefix += ["taskset", "-c", self.cpus]
        return prefix + argv

    def run(self, argv, env=None, timeout=None, pinned=True, log_path=None):
        """Runs a command; returns its stdout. Raises Failure with the end of its stderr."""
        full_env = dict(os.environ, **(env or {}))
        # What to call the program in messages: the script, for an interpreter running one.
        name = os.path.basename(argv[1] if os.path.basename(argv[0]).startswith("python")
                                and len(argv) > 1 else argv[0])
        try:
            p = subprocess.run(self.command(argv, pinned), capture_output=True, text=True,
                               env=full_env, timeout=timeout, cwd=self.root)
        except subprocess.TimeoutExpired:
            raise Failure(f"{name} ran past {timeout} s") from None
        except OSError as e:
            raise Failure(f"cannot run {argv[0]}: {e}") from None
        if log_path:
            with open(log_path, "a") as f:
                f.write(f"$ {shlex.join(argv)}\n{p.stderr}")
        if p.returncode != 0:
            raise Failure(f"{name} exited with status {p.returncode}: "
                          f"{tail_of(p.stderr or p.stdout)}")
        return p.stdout

    def run_json(self, argv, **kw):
        """Runs a command that prints one JSON document (or ends with one JSON line)."""
        out = self.run(argv, **kw)
        for text in (out, (out.strip().splitlines() or [""])[-1]):
            try:
                return json.loads(text)
            except ValueError:
                pass
        raise Failure(f"{os.path.basename(argv[0])} printed no JSON: {tail_of(out)}")

    # --- what the run is about ------------------------------------------------------------------

    def workloads(self):
        listing = json.loads(self.run([self.tirtune, "workload", "list", "--json"], pinned=False))
        specs = []
        for w in listing:
            if w["name"] not in OPERATOR_GROUPS:
                continue
            for shape in w["benchmark_shapes"]:
                spec = w["name"] + ":" + ",".join(str(x) for x in shape)
                specs.append((GROUP_ORDER.index(group_of(w["name"], shape)), spec, w["name"],
                              shape))
        specs.sort(key=lambda s: s[0])  # stable: the library's order within a group
        only = re.compile(self.opts.only) if self.opts.only else None
        return [(spec, name, shape) for _, spec, name, shape in specs
                if not only or only.search(spec)]

    def machine(self):
        m = {"cpu": "unknown", "cores": os.cpu_count() or 0, "threads": self.opts.threads,
             "cpus": self.cpus}
        try:
            with open("/proc/cpuinfo") as f:
                names = [line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name")]
            if names:
                m["cpu"] = names[0]
        except OSError:
            pass
        try:
            with open("/etc/os-release") as f:
                for line in f:
                    if line.startswith("PRETTY_NAME="):
                        m["os"] = line.split("=", 1)[1].strip().strip('"')
        except OSError:
            pass
        try:
            with open("/proc/meminfo") as f:
                kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
            m["memory_gib"] = round(kb / 2**20, 1)
        except (OSError, StopIteration, ValueError):
            pass
        m["kernel"] = platform.release()
        # The measured float32 peak of the pinned CPUs, for GFLOP/s as a fraction of it.
        peak = os.path.join(os.path.dirname(self.dnnl), "bench_peak_fma")
        if os.access(peak, os.X_OK):
            try:
                m["peak_gflops"] = self.run_json(
                    [peak, "--threads", str(self.opts.threads)])["peak_gflops"]
            except (Failure, KeyError) as e:
                log(f"no peak measurement: {e}")
        else:
            log(f"no peak measurement: {peak} not built")
        return m

    def versions(self):
        v = {}
        try:
            v["tirtune"] = self.run([self.tirtune, "--version"], pinned=False).split()[-1]
        except Failure:
            pass
        try:
            commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=self.root,
                                    capture_output=True, text=True).stdout.strip()
            if commit:
                v["tirtune_commit"] = commit
        except OSError:
            pass
        if self.opts.baselines and os.path.exists(self.dnnl):
            try:
                v.update(self.run_json([self.dnnl, "--version"], pinned=False))
            except Failure:
                pass
        return v

    # --- one workload ---------------------------------------------------------------------------

    def tune(self, spec, logs):
        start = time.monotonic()
        out = self.run_json(
            [self.tirtune, "tune", "--workload", spec, "--trials", str(self.trials), "--db",
             self.db, "--target", self.target, "--json"]
            + (["--resume"] if self.opts.resume else []), log_path=logs)
        seconds = time.monotonic() - start
        task = out["tasks"][0]
        return out, task, seconds

    def curve(self, workload_id, target, flops, started):
        """The workload's trials and their statuses in the database (with --resume, those of
        earlier runs too), and the trials and seconds until the best so far reached 90% / 95% of
        the final best: the records in commit order, as src/report/tuning_curve.cc counts
        them, and the seconds from the start of the tuning (`started`, or the first record's
        commit when earlier runs made it), so that the first batch's time counts."""
        db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        rows = db.execute(
            "SELECT r.status, r.median_secs, r.created_at FROM tuning_record r "
            "JOIN target t ON t.id = r.target_id WHERE r.workload_id = ? AND t.key = ? "
            "ORDER BY r.id", (workload_id, target)).fetchall()
        db.close()
        trials, elapsed, statuses = [], 0.0, {}
        first = min(started, rows[0][2]) if rows else started
        for status, median, created in rows:
            statuses[status] = statuses.get(status, 0) + 1
            elapsed = max(elapsed, created - first)
            ok = status == "ok" and median is not None and median > 0
            trials.append((elapsed, flops / median if ok else None))
        speeds = [s for _, s in trials if s is not None]
        out = {"trials": len(rows), "statuses": statuses}
        for pct in (90, 95):
            goal = pct / 100 * max(speeds) if speeds else None
            hit = next((i for i, (_, s) in enumerate(trials) if s is not None and s >= goal),
                       None) if speeds else None
            out[f"trials_to_{pct}"] = None if hit is None else hit + 1
            out[f"seconds_to_{pct}"] = None if hit is None else round(trials[hit][0], 2)
        return out

    def metaschedule_tune(self, spec, work_dir, logs):
        """Returns the baseline's tuning fields; raises Unsupported when bench/metaschedule_tune.py
        cannot express the workload, Failure when tuning fails."""
        printed = os.path.join(work_dir, "workload.json")
        os.makedirs(work_dir, exist_ok=True)
        with open(printed, "w") as f:
            f.write(self.run([self.tirtune, "workload", "print", spec, "--json"], pinned=False))
        ms = [self.venv_python, os.path.join(self.root, "bench", "metaschedule_tune.py")]
        try:
            self.run(ms + ["check", "--workload", spec, "--tirtune-json", printed], pinned=False)
        except Failure as e:  # no TE definition of the operator, or one that does not match
            raise Unsupported(str(e).split("metaschedule_tune.py: ")[-1]) from None
        env = {"TVM_NUM_THREADS": str(self.opts.threads)}
        start = time.monotonic()
        out = self.run_json(ms + ["tune", "--workload", spec, "--trials", str(self.trials),
                                  "--threads", str(self.opts.threads), "--work-dir", work_dir,
                                  "--timeout", str(self.opts.ms_timeout)],
                            env=env, log_path=logs)
        return {"trials": out["records"], "valid_trials": out["valid_records"],
                "tuning_s": round(time.monotonic() - start, 1),
                "tuning_best_s": None if out["tuning_best_ms"] is None
                else out["tuning_best_ms"] / 1e3}

    def timers(self, spec, name, trace, ms_dir):
        """The timing commands of one workload: (label, argv, env) with tirtune first."""
        flush = ["--flush-cache"] if self.opts.flush_cache else []
        omp = {"OMP_NUM_THREADS": str(self.opts.threads), "OMP_PROC_BIND": "true"}
        timers = [("tirtune", [self.tirtune, "time", "--workload", spec, "--trace", trace,
                               "--target", self.target, "--json"] + flush, {})]
        if name in self.dnnl_operators:
            if "onednn" in self.opts.baselines:
                timers.append(("onednn", [self.dnnl, spec] + flush, omp))
            if name in SUBGRAPHS and "onednn_fused" in self.opts.baselines:
                timers.append(("onednn_fused", [self.dnnl, "--fused", spec] + flush, omp))
        if ms_dir:
            timers.append(("metaschedule",
                           [self.venv_python, os.path.join(self.root, "bench",
                                                           "metaschedule_tune.py"),
                            "time", "--workload", spec, "--work-dir", ms_dir] + flush,
                           {"TVM_NUM_THREADS": str(self.opts.threads)}))
        return timers

    def workload(self, index, count, spec, name, shape):
        """Tunes and times one workload; returns its results entry (status "failed" when tirtune
        has no verified result, "baseline_failed" when a baseline has none)."""
        tag = f"[{index}/{count}] {spec}"
        entry = {"name": spec, "index": index, "group": group_of(name, shape),
                 "kind": "subgraph" if name in SUBGRAPHS else "operator"}
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", spec)
        logs = os.path.join(self.work, "logs", safe + ".log")

        # Step 1. Tune.
        log(f"{tag}: tuning, {self.trials} trials")
        started = time.time()
        try:
            out, task, tune_s = self.tune(spec, logs)
        except Failure as e:
            return dict(entry, status="failed", stage="tune", error=str(e))
        entry["flops"] = task["flops"]
        self.llvm_cpu = self.llvm_cpu or (re.findall(r"-mcpu=(\S+)", out["target"]) or [None])[0]
        tirtune = {"tuning_s": round(tune_s, 1)}
        tirtune.update({f"{k}_s": round(out[f"{k}_seconds"], 1) for k in ("search", "build", "run")
                        if f"{k}_seconds" in out})
        tirtune.update(self.curve(task["workload_id"], out["target"], task["flops"],
                                  started))
        if "best_trace" not in task:
            return dict(entry, status="failed", stage="tune", tirtune_tuning=tirtune,
                        error=f"no verified kernel in {tirtune['trials']} trials: "
                        f"{tirtune['statuses']}")
        tirtune["tuning_best_s"] = task["best_seconds"]
        # The kept record: a library call (its composite, e.g. "dnnl.conv2d") or a tuned kernel.
        offloads = [i["attrs"].get("composite", "?") for i in task["best_trace"].get("insts", [])
                    if i.get("kind") == "Offload"]
        tirtune["kernel"] = offloads[0] if offloads else "tuned"
        trace = os.path.join(self.work, "traces", safe + ".json")
        with open(trace, "w") as f:
            json.dump(task["best_trace"], f)
        log(f"{tag}: tuned in {tune_s:.1f} s, {tirtune['trials']} trials {tirtune['statuses']}, "
            f"best {task['best_seconds'] * 1e3:.4g} ms in tuning ({tirtune['kernel']}), "
            f"90% at trial {tirtune['trials_to_90']}")

        # Step 2. MetaSchedule, at the same budget.
        baselines, errors = {}, {}
        ms_dir = None
        if self.opts.with_metaschedule and self.tvm_version:
            work_dir = os.path.join(self.work, "metaschedule", safe)
            log(f"{tag}: MetaSchedule tuning, {self.trials} trials")
            try:
                baselines["metaschedule"] = self.metaschedule_tune(spec, work_dir, logs)
                ms_dir = work_dir
            except Unsupported as e:
                entry["notes"] = [f"metaschedule: not compared: {e}"]
                log(f"{tag}: no MetaSchedule comparison: {e}")
            except Failure as e:
                errors["metaschedule"] = f"tuning: {e}"
                log(f"{tag}: MetaSchedule failed: {e}")

        # Step 3. Time ours and every baseline, alternating.
        timers = self.timers(spec, name, trace, ms_dir)
        log(f"{tag}: timing {', '.join(t[0] for t in timers)}, {self.opts.pairs} pair(s), "
            f"{self.opts.pairs * self.opts.short_pairs_factor} under {self.opts.short_ms} ms")
        try:
            samples, details = self.time_pairs(tag, timers, errors, logs)
        except Failure as e:
            return dict(entry, status="failed", stage="time", tirtune_tuning=tirtune,
                        error=f"tirtune time: {e}")
        ours = samples.pop("tirtune")
        tirtune.update({"latency_s": statistics.median(ours), "verified": True,
                        "samples_s": ours,
                        "verified_against": details["tirtune"].get("verified_against")})
        entry["tirtune"] = tirtune

        # Step 4. Each baseline's median per-pair ratio, in the order of the timers.
        entry["baselines"] = {}
        for label, theirs in samples.items():
            if label in errors or not theirs:
                continue
            b = dict(baselines.get(label, {}), latency_s=statistics.median(theirs),
                     samples_s=theirs,
                     ratio=round(statistics.median(t / o for o, t in zip(ours, theirs)), 4))
            b.update({k: details[label][k] for k in ("primitive", "onednn_impl", "tail_primitive",
                                                     "onednn_tail_impl") if k in details[label]})
            entry["baselines"][label] = b
        if errors:
            entry["errors"] = errors
        entry["status"] = "baseline_failed" if errors else "ok"
        gflops = task["flops"] / tirtune["latency_s"] / 1e9
        said = "; ".join(f"{k} {v['latency_s'] * 1e3:.4g} ms, ratio {v['ratio']:.3f}"
                         for k, v in entry["baselines"].items())
        log(f"{tag}: tirtune {tirtune['latency_s'] * 1e3:.4g} ms ({gflops:.1f} GFLOP/s)"
            + (f"; {said}" if said else "; no baseline"))
        return entry

    def model(self, index, count, path):
        """Tunes one ONNX model's fused functions into the run's database, then compiles it
        with their best records and compares it with onnxruntime (bench/vs_onnxruntime.sh:
        outputs on the same inputs, then latency in alternating pairs); returns its results
        entry, a "network" workload."""
        name = model_name(path)
        tag = f"[{index}/{count}] {name}"
        logs = os.path.join(self.work, "logs", re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".log")
        entry = {"name": name, "index": index, "group": "Network", "kind": "network",
                 "model": os.path.abspath(path)}
        log(f"{tag}: tuning the model, {self.opts.model_trials} trials over its tasks")
        start = time.monotonic()
        try:
            out = self.run_json(
                [self.tirtune, "tune", "--model", path, "--trials", str(self.opts.model_trials),
                 "--db", self.db, "--target", self.target, "--json"]
                + (["--resume"] if self.opts.resume else []), log_path=logs)
        except Failure as e:
            return dict(entry, status="failed", stage="tune", error=str(e))
        tune_s = time.monotonic() - start
        statuses = {}
        for task in out["tasks"]:
            for k, v in task.get("statuses", {}).items():
                statuses[k] = statuses.get(k, 0) + v
        log(f"{tag}: {len(out['tasks'])} task(s) tuned in {tune_s:.1f} s; comparing with "
            f"onnxruntime, {self.opts.pairs} pair(s)")
        doc_path = os.path.join(self.work, "logs", name + ".onnxruntime.json")
        script = os.path.join(self.root, "bench", "vs_onnxruntime.sh")
        argv = ["bash", script, os.path.abspath(path), "--db", self.db, "--target", self.target,
                "--pairs", str(self.opts.pairs), "--threads", str(self.opts.threads),
                "--tuning-seconds", f"{tune_s:.1f}", "--json-out", doc_path]
        env = {"BUILD_DIR": os.path.dirname(os.path.dirname(self.tirtune)), "VENV": self.opts.venv}
        try:
            self.run(argv + (["--nice"] if self.opts.nice else []), env=env, pinned=False,
                     timeout=self.opts.time_timeout, log_path=logs)
            with open(doc_path) as f:
                w = json.load(f)["workloads"][0]
        except (Failure, OSError, ValueError) as e:
            return dict(entry, status="failed", stage="time", error=f"vs_onnxruntime: {e}")
        entry.update({k: w[k] for k in ("flops", "notes", "accuracy") if k in w})
        entry["tirtune"] = dict(w["tirtune"], trials=sum(statuses.values()), statuses=statuses,
                                tuning_s=round(tune_s, 1),
                                **{f"{k}_s": round(out[f"{k}_seconds"], 1)
                                   for k in ("search", "build", "run") if f"{k}_seconds" in out})
        entry["baselines"] = w["baselines"]
        if not w["tirtune"].get("verified"):
            return dict(entry, status="failed", stage="time",
                        error="the compiled model's outputs differ from onnxruntime's")
        entry["status"] = "ok"
        b = w["baselines"]["onnxruntime"]
        log(f"{tag}: tirtune {w['tirtune']['latency_s'] * 1e3:.4g} ms; onnxruntime "
            f"{b['latency_s'] * 1e3:.4g} ms, ratio {b['ratio']:.3f}")
        return entry

    def time_pairs(self, tag, timers, errors, logs):
        """Runs every timer once per pair, in order (--pairs pairs, --short-pairs-factor times as
        many when the first pair timed tirtune's kernel under --short-ms); returns the median
        seconds each measured and each one's last JSON. A failing baseline goes into `errors` and
        is not run again; a failing tirtune raises Failure."""
        samples = {label: [] for label, _, _ in timers}
        details = {}
        pair = 0
        pairs = self.opts.pairs
        while pair < pairs:
            pair += 1
            for label, argv, env in timers:
                if label in errors:
                    continue
                try:
                    result = self.run_json(argv, env=env, timeout=self.opts.time_timeout,
                                           log_path=logs)
                except Failure as e:
                    if label == "tirtune":
                        raise
                    errors[label] = str(e)
                    log(f"{tag}: {label} failed: {e}")
                    continue
                samples[label].append(result["median_seconds"])
                details[label] = result
            if pair == 1 and samples["tirtune"][0] * 1e3 < self.opts.short_ms:
                pairs = self.opts.pairs * self.opts.short_pairs_factor
        return samples, details

    # --- the whole run --------------------------------------------------------------------------

    def prepare(self):
        if self.opts.baselines:  # all of them come from bench_dnnl
            if not os.access(self.dnnl, os.X_OK):
                sys.exit(f"suite: {self.dnnl} not found: build the bench_dnnl target (needs "
                         f"libdnnl-dev), or pass --baselines ''")
            listed = self.run([self.dnnl, "--list"], pinned=False)
            self.dnnl_operators = {line.split()[0] for line in listed.splitlines() if line}
        if self.opts.with_metaschedule:
            try:
                self.tvm_version = subprocess.run(
                    [self.venv_python, "-c", "import tvm; print(tvm.__version__)"],
                    capture_output=True, text=True, check=True).stdout.strip()
            except (OSError, subprocess.CalledProcessError):
                log(f"--with-metaschedule: no TVM in {self.opts.venv} (bench/vs_metaschedule.sh "
                    f"installs it); MetaSchedule skipped")
        if self.opts.db:
            self.work = os.path.abspath(self.opts.db)
            os.makedirs(self.work, exist_ok=True)
        else:
            self.work = tempfile.mkdtemp(prefix="tirtune-suite-")
        self.db = os.path.join(self.work, "tirtune.db")
        if os.path.exists(self.db) and not self.opts.resume:
            sys.exit(f"suite: {self.db} exists: its records would mix with this run's; remove "
                     f"it, choose another --db directory, or continue that run with --resume")
        for d in ("logs", "traces"):
            os.makedirs(os.path.join(self.work, d), exist_ok=True)

    def main(self, argv):
        if not os.access(self.tirtune, os.X_OK):
            sys.exit(f"suite: {self.tirtune} not found: build tirtune (--build-dir, --tirtune)")
        specs = self.workloads()
        if not specs and not self.opts.models:
            sys.exit(f"suite: no workload matches --only '{self.opts.only}'")
        self.prepare()
        versions = self.versions()
        if self.tvm_version:
            versions["tvm"] = self.tvm_version
        settings = {"pairs": self.opts.pairs, "short_ms": self.opts.short_ms,
                    "short_pairs_factor": self.opts.short_pairs_factor,
                    "threads": self.opts.threads,
                    "target": self.target, "flush_cache": self.opts.flush_cache,
                    "nice": self.opts.nice}
        if self.opts.models:
            settings["model_trials"] = self.opts.model_trials
        results = self.previous_results(settings) if self.opts.resume else None
        done = set()
        if results:
            done = {w["name"] for w in results["workloads"]}
            results["failed"] = [f for f in results["failed"] if f["name"] not in
                                 set(self.job_names(specs))]  # tried again below
            results.setdefault("resumed", []).append({
                "at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "command": shlex.join(["python3", "bench/suite.py"] + argv),
                "versions": versions})
            log(f"resuming {self.opts.output}: {len(done)} workload(s) done, "
                f"{sum(name not in done for name in self.job_names(specs))} to go")
        results = results or {
            "schema": "tirtune-bench/1",
            "created_at": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": shlex.join(["python3", "bench/suite.py"] + argv),
            "budget": {"name": self.budget_name, "trials": self.trials},
            "machine": self.machine(), "versions": versions,
            "settings": settings, "workloads": [], "failed": [],
        }
        models = (f" and {len(self.opts.models)} model(s), {self.opts.model_trials} trials each"
                  if self.opts.models else "")
        log(f"{len(specs)} workload(s), {self.trials} trials each{models}, {self.opts.pairs} "
            f"timing pair(s), CPUs {self.cpus}; database {self.db}")
        start = time.monotonic() - results.get("seconds", 0)
        count = len(specs) + len(self.opts.models)
        jobs = [(spec, lambda i, s=spec, n=name, sh=shape: self.workload(i, count, s, n, sh))
                for spec, name, shape in specs]
        jobs += [(model_name(m), lambda i, m=m: self.model(i, count, m))
                 for m in self.opts.models]
        try:
            for i, (spec, job) in enumerate(jobs, 1):
                if spec in done:
                    continue
                entry = job(i)
                if entry["status"] == "failed":
                    log(f"[{i}/{count}] {spec}: FAILED ({entry['stage']}): {entry['error']}")
                    results["failed"].append(entry)
                else:
                    results["workloads"].append(entry)
                if self.llvm_cpu:
                    results["machine"]["llvm_cpu"] = self.llvm_cpu
                results["seconds"] = round(time.monotonic() - start, 1)
                self.write(results)
        finally:
            if not self.opts.db:
                shutil.rmtree(self.work, ignore_errors=True)
        failed = len(results["failed"]) + sum(w["status"] != "ok" for w in results["workloads"])
        log(f"done in {results.get('seconds', 0):.0f} s: {count - failed} ok, {failed} "
            f"failed; {self.opts.output}")
        if self.opts.db:
            log(f"report: tirtune report --db {self.db} --bench {self.opts.output} -o report.html")
        return 1 if failed else 0

    def job_names(self, specs):
        """The results-file names of the operator workloads `specs`, then of the models."""
        return [spec for spec, _, _ in specs] + [model_name(m) for m in self.opts.models]

    def previous_results(self, settings):
        """The results file a --resume continues, or None when there is none yet; exits when it
        was made with other settings or another budget, since its rows would not compare."""
        path = self.opts.output
        if not os.path.exists(path):
            log(f"--resume: no {path} yet; starting it")
            return None
        try:
            with open(path) as f:
                results = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"suite: --resume: cannot read {path}: {e}")
        if not isinstance(results, dict) or results.get("schema") != "tirtune-bench/1" or \
                not isinstance(results.get("workloads"), list):
            sys.exit(f"suite: --resume: {path} is not a tirtune-bench/1 results file")
        trials = results.get("budget", {}).get("trials")
        if trials != self.trials:
            sys.exit(f"suite: --resume: {path} was run with {trials} trials per workload, "
                     f"this run asks for {self.trials}")
        # Settings a file written before they existed ran as: every kernel got --pairs pairs.
        theirs = dict({"short_ms": settings["short_ms"], "short_pairs_factor": 1},
                      **results.get("settings", {}))
        for key, value in settings.items():
            if theirs.get(key) != value:
                sys.exit(f"suite: --resume: {path} was run with {key} = {theirs.get(key)!r}, "
                         f"this run has {value!r}")
        results.setdefault("failed", [])
        return results

    def write(self, results):
        tmp = self.opts.output + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
        os.replace(tmp, self.opts.output)

    def check_baselines(self):
        """Every baseline against its reference on every element of small outputs."""
        if not os.access(self.dnnl, os.X_OK):
            sys.exit(f"suite: {self.dnnl} not found: build the bench_dnnl target")
        bad = 0
        for spec in SMALL_SHAPES:
            name = spec.split(":")[0]
            variants = [[], ["--fused"]] if name in SUBGRAPHS else [[]]
            for extra in variants:
                label = " ".join(extra + [spec])
                try:
                    out = self.run_json([self.dnnl, "--check"] + extra + [spec],
                                        env={"OMP_NUM_THREADS": str(self.opts.threads)})
                    c = out["check"]
                    log(f"ok    {label}: {c['elements']} elements, max |error| "
                        f"{c['max_abs_error']:.2g} of max |ref| {c['max_abs_reference']:.3g} "
                        f"({out.get('onednn_impl', out.get('primitive'))})")
                except Failure as e:
                    bad += 1
                    log(f"WRONG {label}: {e}")
        return 1 if bad else 0


def model_name(path):
    """A model's workload name in the results file: its file name without the extension."""
    return os.path.splitext(os.path.basename(path))[0]


def parse(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--budget", choices=sorted(BUDGETS), default="quick",
                   help="quick: 200 trials per workload, full: 1000 (default quick)")
    p.add_argument("--trials", type=int, help="trials per workload, instead of the budget's")
    p.add_argument("--only", metavar="REGEX",
                   help="the workloads whose spec matches (re.search), e.g. 'gemm:|softmax:256'")
    p.add_argument("--models", default="", metavar="FILE.onnx[,...]",
                   help="also tune these ONNX models (--model-trials over all their tasks), "
                        "compile them with their best records and compare them with onnxruntime "
                        "(bench/vs_onnxruntime.sh, which installs it into --venv)")
    p.add_argument("--model-trials", type=int, default=2000,
                   help="trials per model, over all its tasks (default 2000)")
    p.add_argument("--db", metavar="DIR",
                   help="keep the tuning database (DIR/tirtune.db), traces and logs here "
                        "(default: a temporary directory, removed)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run of --db and -o: keep the workloads already in the "
                        "results file, tune the others with `tirtune tune --resume`")
    p.add_argument("--pairs", type=int, default=3, help="alternating timing rounds (default 3)")
    p.add_argument("--short-ms", type=float, default=1.0,
                   help="a kernel whose first pair timed it under this many milliseconds gets "
                        "--short-pairs-factor times the pairs (default 1)")
    p.add_argument("--short-pairs-factor", type=int, default=3,
                   help="how many times the pairs such a kernel gets (default 3; 1: the same)")
    p.add_argument("--threads", type=int, default=2, help="threads of every side (default 2)")
    p.add_argument("--cpus", help="taskset CPU list (default: the first THREADS CPUs)")
    p.add_argument("-o", "--output", default="suite-results.json",
                   help="the tirtune-bench/1 results file (default suite-results.json)")
    p.add_argument("--build-dir", default="build/release",
                   help="where tirtune and bench_dnnl were built, from the repository root "
                        "(default build/release)")
    p.add_argument("--tirtune", help="the tirtune binary (default BUILD_DIR/src/tirtune)")
    p.add_argument("--bench-dnnl", help="the oneDNN baseline program (default "
                                        "BUILD_DIR/bench/bench_dnnl)")
    p.add_argument("--baselines", default="onednn,onednn_fused",
                   help="comma-separated: onednn (bench_dnnl), onednn_fused (subgraphs with the "
                        "tail as post-ops); '' for none (default: both)")
    p.add_argument("--with-metaschedule", action="store_true",
                   help="also tune with TVM MetaSchedule from --venv at the same budget")
    p.add_argument("--venv", default=".bench-venv",
                   help="the virtualenv holding TVM and onnxruntime")
    p.add_argument("--ms-timeout", type=float, default=30,
                   help="MetaSchedule's seconds per candidate build and run (default 30)")
    p.add_argument("--flush-cache", action="store_true",
                   help="flush caches between timing repeats, on every side")
    p.add_argument("--time-timeout", type=float, default=900,
                   help="seconds allowed to one timing process (default 900)")
    p.add_argument("--nice", action="store_true",
                   help="run every process at nice 19 (for smoke tests on a shared machine; "
                        "never for results)")
    p.add_argument("--check-baselines", action="store_true",
                   help="check every baseline against its reference on small shapes, and stop")
    opts = p.parse_args(argv)
    opts.baselines = [b for b in opts.baselines.split(",") if b]
    opts.models = [m for m in opts.models.split(",") if m]
    for m in opts.models:
        if not os.path.isfile(m):
            p.error(f"--models: no file {m}")
    if opts.model_trials < 1:
        p.error("--model-trials must be positive")
    for b in opts.baselines:
        if b not in ("onednn", "onednn_fused"):
            p.error(f"--baselines: unknown baseline '{b}'")
    try:
        re.compile(opts.only or "")
    except re.error as e:
        p.error(f"--only: not a regular expression: {e}")
    if opts.resume and not opts.db:
        p.error("--resume needs the --db directory of the run it continues")
    if opts.trials is not None and opts.trials < 1:
        p.error("--trials must be positive")
    if opts.pairs < 1 or opts.threads < 1 or opts.short_pairs_factor < 1:
        p.error("--pairs, --short-pairs-factor and --threads must be positive")
    return opts


def main():
    opts = parse(sys.argv[1:])
    suite = Suite(opts)
    if opts.check_baselines:
        return suite.check_baselines()
    try:
        return suite.main(sys.argv[1:])
    except KeyboardInterrupt:
        log(f"interrupted; the workloads finished so far are in {opts.output}")
        return 130


if __name__ == "__main__":
    sys.exit(main())
