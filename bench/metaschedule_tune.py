#!/usr/bin/env python3
"""The TVM MetaSchedule side of bench/vs_metaschedule.sh.

Defines a tirtune workload (NAME:ARGS, the same tensors, layouts and padding as
`tirtune workload print NAME:ARGS`) in TVM TE, and has two steps, each run in its own process:

  tune  --workload W --trials N --threads T --work-dir D
        tunes it with MetaSchedule (`tune_tir`, max_trials_global = N) for the target
        {"kind": "llvm", "mcpu": <host>, "num-cores": T}, builds the best schedule, exports it to
        D/best.so, checks that library against numpy and prints one JSON object (tuning wall time,
        the best time MetaSchedule measured, the TVM version, the target).
  time  --workload W --work-dir D
        loads D/best.so and times it with TVM's time_evaluator (warm-up, REPEAT repeats of at
        least MIN_REPEAT_MS each, median) and prints one JSON object (best_ms, gflops).

  check --workload W --tirtune-json F
        compares the TE definition's buffer shapes and FLOPs with tirtune's (F holds the output of
        `tirtune workload print W --json`).

Threads: the caller sets TVM_NUM_THREADS (and pins the CPUs); the tuning's runner processes
inherit it. Supported workloads: gemm, dense, batch_matmul, conv1d, conv2d, depthwise_conv2d.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time


def fail(msg):
    print(f"metaschedule_tune.py: {msg}", file=sys.stderr)
    sys.exit(1)


try:
    import numpy as np
    import tvm
    from tvm import te
    from tvm.s_tir import meta_schedule as ms
except Exception as e:  # noqa: BLE001 - any import failure means the same thing here
    fail(f"cannot import TVM MetaSchedule (apache-tvm 0.27, tvm.s_tir.meta_schedule): {e!r}")


# ---------------------------------------------------------------------------------------------
# Workloads: TE definitions that mirror tirtune's operator library, plus numpy references.


def _ints(args, n_min, n_max, spec):
    vals = [int(x) for x in args.split(",")] if args else []
    if not n_min <= len(vals) <= n_max:
        fail(f"{spec}: expected {n_min} to {n_max} integers")
    return vals


def _pad_nd(data, pads, name="pad_temp"):
    """Zero padding of the given axes (pads[i] on both sides); returns data itself when no pad."""
    if not any(pads):
        return data
    shape = [s + 2 * p for s, p in zip(data.shape, pads)]

    def body(*idx):
        conds = []
        src = []
        for i, p, s in zip(idx, pads, data.shape):
            if p:
                conds += [i >= p, i < s + p]
                src.append(i - p)
            else:
                src.append(i)
        return tvm.tirx.if_then_else(tvm.tirx.all(*conds), data[tuple(src)],
                                     tvm.tirx.const(0.0, "float32"))

    return te.compute(shape, body, name=name)


def _np_pad(x, pads):
    return np.pad(x, [(p, p) for p in pads])


def make_workload(spec):
    """Returns (TE tensors [inputs..., output], flops, numpy reference of the inputs)."""
    name, _, args = spec.partition(":")
    f32 = "float32"
    if name == "gemm":  # C[M,N] = A[M,K] B[K,N]
        m, n, k = _ints(args, 3, 3, spec)
        a = te.placeholder((m, k), f32, name="A")
        b = te.placeholder((k, n), f32, name="B")
        r = te.reduce_axis((0, k), name="k")
        c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
        return [a, b, c], 2.0 * m * n * k, lambda x, y: x @ y
    if name == "dense":  # Y[M,N] = X[M,K] W[N,K]^T
        m, n, k = _ints(args, 3, 3, spec)
        x = te.placeholder((m, k), f32, name="data")
        w = te.placeholder((n, k), f32, name="weight")
        r = te.reduce_axis((0, k), name="k")
        y = te.compute((m, n), lambda i, j: te.sum(x[i, r] * w[j, r], axis=r), name="T_dense")
        return [x, w, y], 2.0 * m * n * k, lambda x_, w_: x_ @ w_.T
    if name == "batch_matmul":  # C[B,N,M] = A[B,N,K] B[B,K,M]
        bs, n, m, k = _ints(args, 4, 4, spec)
        a = te.placeholder((bs, n, k), f32, name="A")
        b = te.placeholder((bs, k, m), f32, name="B")
        r = te.reduce_axis((0, k), name="k")
        c = te.compute((bs, n, m), lambda q, i, j: te.sum(a[q, i, r] * b[q, r, j], axis=r),
                       name="C")
        return [a, b, c], 2.0 * bs * n * m * k, lambda x, y: x @ y
    if name in ("conv1d", "conv2d"):
        nd = 1 if name == "conv1d" else 2
        vals = _ints(args, 3 + nd + 3, 3 + nd + 5, spec)
        batch, spatial, ci, co = vals[0], vals[1:1 + nd], vals[1 + nd], vals[2 + nd]
        kernel, stride, pad = vals[3 + nd:6 + nd]
        dil = vals[6 + nd] if len(vals) > 6 + nd else 1
        groups = vals[7 + nd] if len(vals) > 7 + nd else 1
        if ci % groups or co % groups:
            fail(f"{spec}: channels not divisible by groups")
        cig, cog = ci // groups, co // groups
        out = [(s + 2 * pad - dil * (kernel - 1) - 1) // stride + 1 for s in spatial]
        data = te.placeholder((batch, *spatial, ci), f32, name="data")
        weight = te.placeholder((*([kernel] * nd), cig, co), f32, name="weight")
        padded = _pad_nd(data, [0, *([pad] * nd), 0])
        rk = [te.reduce_axis((0, kernel), name=f"r{a}") for a in ("hw" if nd == 2 else "l")]
        rc = te.reduce_axis((0, cig), name="rc")

        def body(n_, *rest):
            pos, c_ = rest[:nd], rest[nd]
            src = [p * stride + r * dil for p, r in zip(pos, rk)]
            return te.sum(padded[(n_, *src, c_ // cog * cig + rc)] * weight[(*rk, rc, c_)],
                          axis=[*rk, rc])

        oname = "conv1d_nlc" if nd == 1 else "conv2d_nhwc"
        conv = te.compute((batch, *out, co), body, name=oname)
        flops = 2.0 * batch * math.prod(out) * co * (kernel ** nd) * cig

        def ref(x, w):
            xp = _np_pad(x.astype(np.float64), [0, *([pad] * nd), 0])
            y = np.zeros((batch, *out, co))
            for g in range(groups):
                xs = xp[..., g * cig:(g + 1) * cig]
                ws = w[..., g * cog:(g + 1) * cog].astype(np.float64)
                for taps in np.ndindex(*([kernel] * nd)):
                    sl = tuple(slice(t * dil, t * dil + (o - 1) * stride + 1, stride)
                               for t, o in zip(taps, out))
                    y[..., g * cog:(g + 1) * cog] += xs[(slice(None), *sl)] @ ws[taps]
            return y

        return [data, weight, conv], flops, ref
    if name == "depthwise_conv2d":  # N,H,W,C,kernel,stride,pad[,dilation]; weight [k, k, C]
        vals = _ints(args, 7, 8, spec)
        batch, h, w, c, kernel, stride, pad = vals[:7]
        dil = vals[7] if len(vals) > 7 else 1
        oh, ow = [(s + 2 * pad - dil * (kernel - 1) - 1) // stride + 1 for s in (h, w)]
        data = te.placeholder((batch, h, w, c), f32, name="data")
        weight = te.placeholder((kernel, kernel, c), f32, name="weight")
        padded = _pad_nd(data, [0, pad, pad, 0])
        rh = te.reduce_axis((0, kernel), name="rh")
        rw = te.reduce_axis((0, kernel), name="rw")
        conv = te.compute(
            (batch, oh, ow, c),
            lambda n_, y, x, c_: te.sum(
                padded[n_, y * stride + rh * dil, x * stride + rw * dil, c_] * weight[rh, rw, c_],
                axis=[rh, rw]),
            name="depthwise_conv2d_nhwc")
        flops = 2.0 * batch * oh * ow * c * kernel * kernel

        def ref(x, wt):
            xp = _np_pad(x.astype(np.float64), [0, pad, pad, 0])
            y = np.zeros((batch, oh, ow, c))
            for i in range(kernel):
                for j in range(kernel):
                    y += xp[:, i * dil:i * dil + (oh - 1) * stride + 1:stride,
                            j * dil:j * dil + (ow - 1) * stride + 1:stride, :] * wt[i, j]
            return y

        return [data, weight, conv], flops, ref
    fail(f"{spec}: no TE definition for workload '{name}' in this script")


# ---------------------------------------------------------------------------------------------

_STDOUT_FD = 1


def host_target(threads, mcpu):
    if not mcpu:
        mcpu = tvm.get_global_func("tvm.codegen.llvm.GetHostCPUName")()
    return tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": threads})


def _target_json(target):
    try:
        return json.loads(str(target))  # 0.27 prints a target as JSON
    except ValueError:
        return str(target)


def random_args(tensors, seed):
    rng = np.random.default_rng(seed)
    ins = [rng.uniform(-1, 1, [int(s) for s in t.shape]).astype("float32") for t in tensors[:-1]]
    out = np.zeros([int(s) for s in tensors[-1].shape], "float32")
    return ins, out


def emit(result):
    """Prints the one JSON result on the real stdout (TVM's logs were sent to stderr)."""
    sys.stdout.flush()
    os.write(_STDOUT_FD, (json.dumps(result) + "\n").encode())


def cmd_tune(opts):
    tensors, flops, ref = make_workload(opts.workload)
    func = te.create_prim_func(tensors)
    target = host_target(opts.threads, opts.mcpu)
    os.makedirs(opts.work_dir, exist_ok=True)
    start = time.perf_counter()
    db = ms.tune_tir(mod=func, target=target, work_dir=os.path.join(opts.work_dir, "ms"),
                     max_trials_global=opts.trials, num_trials_per_iter=64,
                     builder=ms.builder.LocalBuilder(max_workers=opts.threads,
                                                     timeout_sec=opts.timeout),
                     runner=ms.runner.LocalRunner(timeout_sec=opts.timeout),
                     num_tuning_cores=opts.threads, seed=opts.seed)
    seconds = time.perf_counter() - start

    # The best time MetaSchedule itself measured, and how many measured records it stored.
    records = db.get_all_tuning_records()
    costs = [float(np.mean([float(x) for x in r.run_secs])) for r in records if r.run_secs]
    valid = [c for c in costs if c < 1e9]

    sch = ms.tir_integration.compile_tir(db, func, target)
    if sch is None:
        fail(f"{opts.workload}: MetaSchedule found no valid schedule in {opts.trials} trials")
    lib_path = os.path.join(opts.work_dir, "best.so")
    tvm.compile(sch.mod, target=target).export_library(lib_path)
    with open(os.path.join(opts.work_dir, "best_trace.txt"), "w") as f:
        f.write(str(sch.trace))

    # Check the exported library (the thing that `time` will load) against numpy.
    rt = tvm.runtime.load_module(lib_path)
    dev = tvm.cpu()
    ins, out = random_args(tensors, opts.seed)
    args = [tvm.runtime.tensor(x, dev) for x in ins] + [tvm.runtime.tensor(out, dev)]
    rt["main"](*args)
    got = args[-1].numpy()
    want = ref(*ins)
    err = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want))) or 1.0
    if not err <= 1e-4 * scale + 1e-5:
        fail(f"{opts.workload}: the tuned TVM kernel is wrong against numpy "
             f"(max abs error {err:.3g}, max |ref| {scale:.3g})")
    emit({
        "workload": opts.workload, "tvm_version": tvm.__version__, "target": _target_json(target),
        "seconds_tuning": round(seconds, 1), "records": len(costs), "valid_records": len(valid),
        "tuning_best_ms": round(min(valid) * 1e3, 4) if valid else None,
        "flops": flops, "max_abs_error": err})


def cmd_check(opts):
    """Checks the TE definition against `tirtune workload print --json`: FLOPs and buffer shapes."""
    import re
    tensors, flops, _ = make_workload(opts.workload)
    ours = [[int(x) for x in t.shape] for t in tensors]
    with open(opts.tirtune_json) as f:
        tt = json.load(f)
    header = tt["text"].split("\n")[1]
    theirs = [[int(x) for x in m.split(",") if x.strip()]
              for m in re.findall(r"Buffer\(\(([\d, ]*)\), float32\)", header)]
    if ours != theirs or abs(flops - tt["flops"]) > 0.5:
        fail(f"{opts.workload}: the TE definition does not match tirtune's: shapes {ours} vs "
             f"{theirs}, FLOPs {flops:.0f} vs {tt['flops']:.0f}")
    emit({"workload": opts.workload, "shapes": ours, "flops": flops})


def cmd_time(opts):
    tensors, flops, _ = make_workload(opts.workload)
    lib_path = os.path.join(opts.work_dir, "best.so")
    if not os.path.exists(lib_path):
        fail(f"{lib_path}: no tuned library; run the tune step first")
    rt = tvm.runtime.load_module(lib_path)
    dev = tvm.cpu()
    ins, out = random_args(tensors, opts.seed)
    args = [tvm.runtime.tensor(x, dev) for x in ins] + [tvm.runtime.tensor(out, dev)]
    rt["main"](*args)  # warm-up
    evaluator = rt.time_evaluator(
        "main", dev, number=1, repeat=opts.repeat, min_repeat_ms=opts.min_repeat_ms,
        f_preproc="cache_flush_cpu_non_first_arg" if opts.flush_cache else "")
    samples = [float(s) for s in evaluator(*args).results]
    median = statistics.median(samples)
    emit({"workload": opts.workload, "median_seconds": median, "best_ms": round(median * 1e3, 4),
          "gflops": round(flops / median / 1e9, 2), "samples": samples})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tune", help="tune with MetaSchedule, export and check the best kernel")
    t.add_argument("--workload", required=True)
    t.add_argument("--trials", type=int, required=True)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--mcpu", default="", help="default: TVM's LLVM host CPU name")
    t.add_argument("--work-dir", required=True)
    t.add_argument("--timeout", type=float, default=30.0,
                   help="seconds per candidate build and per candidate run (TVM's default: 30)")
    t.add_argument("--seed", type=int, default=1)
    m = sub.add_parser("time", help="time the exported best kernel")
    m.add_argument("--workload", required=True)
    m.add_argument("--work-dir", required=True)
    m.add_argument("--repeat", type=int, default=5)
    m.add_argument("--min-repeat-ms", type=int, default=50)
    m.add_argument("--flush-cache", action="store_true")
    m.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check", help="compare the TE definition with tirtune's workload")
    c.add_argument("--workload", required=True)
    c.add_argument("--tirtune-json", required=True, help="`tirtune workload print W --json`")
    opts = p.parse_args()
    # MetaSchedule logs to stdout: keep stdout for the JSON result and send the rest to stderr.
    global _STDOUT_FD
    _STDOUT_FD = os.dup(1)
    os.dup2(2, 1)
    {"tune": cmd_tune, "time": cmd_time, "check": cmd_check}[opts.cmd](opts)


if __name__ == "__main__":
    main()
