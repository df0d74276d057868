#!/usr/bin/env python3
"""tirtune's compiled model vs onnxruntime on the same inputs: accuracy, then latency side by side.

  1. Compiles MODEL.onnx with `tirtune compile` (the best record of --db per fused function, the
     default schedule otherwise) for "llvm -num-cores=THREADS".
  2. Makes seeded inputs for the model's inputs (names, shapes and types from onnxruntime, checked
     against the compiled model's graph.json): float inputs standard normal; a float input whose
     name contains "mask" ones with the last quarter of its last axis zero (padding, as
     scripts/gen_onnx_models.py builds BERT's attention mask); an integer input uniform in the
     range every Gather that indexes with it accepts (BERT's token ids: [0, vocab)), read from the
     ONNX file. Runs `tirtune run --inputs ... --outputs-dir` and onnxruntime (CPU provider,
     intra-op threads = THREADS, inter-op 1, default graph optimizations: ORT_ENABLE_ALL) on them
     and compares every output: an element passes when |tirtune - ort| <= atol * max(1, max|ort|)
     + rtol * |ort|, as tirtune's own verification (measure/verify.cc) counts. onnxruntime with
     its graph optimizations off is compared with onnxruntime too, for the size of the
     differences that rounding alone makes.
  3. Times both, each in its own process pinned to CPUs 0..THREADS-1, alternating PAIRS times:
     `tirtune run --bench --json` (median latency) and this script's hidden --ort-time mode
     (warm-up, then runs for at least 1 s or --repeat, median). The ratio is the median of the
     per-pair ratios onnxruntime latency / tirtune latency (> 1: tirtune is faster).
  4. Prints one JSON line; --json-out also writes a tirtune-bench/1 document (docs/BENCH_FORMAT.md)
     for `tirtune report --bench`.

Exit status: 0, or 1 when an output differs beyond the tolerances (everything is still measured
and printed) or a step fails. FLOPs are those of Conv, ConvTranspose, MatMul and Gemm (a
multiply-add counts 2), from shapes onnxruntime records while profiling one unoptimized run.

Needs numpy and onnxruntime: run it with .bench-venv/bin/python (bench/vs_onnxruntime.sh
installs them there).

  .bench-venv/bin/python bench/vs_onnxruntime.py MODEL.onnx [--db DB] [--pairs 3] [--threads 2]
      [--tirtune BIN] [--repeat N] [--rtol 1e-3] [--atol 1e-4] [--json-out FILE] [--nice]
      [--pairs 0: accuracy only]
"""
import argparse
import datetime
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_DTYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64,
              "tensor(int64)": np.int64, "tensor(int32)": np.int32,
              "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_}
MIN_TIMED_SECONDS = 1.0  # onnxruntime (and tirtune, without --repeat) time at least this long


class Failure(Exception):
    """A step failed; the message says which and why."""


def digits(x, n=4):
    """x rounded to n significant digits."""
    return float(f"{x:.{n}g}")


def log(message):
    print(f"vs_onnxruntime: {message}", file=sys.stderr, flush=True)


# --- onnxruntime ----------------------------------------------------------------------------------

def ort_session(model, threads, optimize=True, profile_prefix=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if profile_prefix:
        # Without prepacking the profiler lists constant weights among a node's input shapes.
        so.add_session_config_entry("session.disable_prepacking", "1")
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def load_inputs(inputs_dir):
    """The inputs this script saved: {name: array}, in tirtune's order."""
    with open(os.path.join(inputs_dir, "inputs.json")) as f:
        names = json.load(f)["names"]
    return {name: np.load(os.path.join(inputs_dir, f"input_{i}.npy"))
            for i, name in enumerate(names)}


def ort_time(args):
    """The hidden --ort-time mode: one process that times onnxruntime and prints its median."""
    session = ort_session(args.model, args.threads)
    feeds = load_inputs(args.inputs_dir)
    for _ in range(args.warmup):
        session.run(None, feeds)
    samples = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        session.run(None, feeds)
        samples.append(time.perf_counter() - t0)
        if args.repeat:
            if len(samples) >= args.repeat:
                break
        elif len(samples) >= 10 and time.perf_counter() - start >= MIN_TIMED_SECONDS:
            break
    print(json.dumps({"median_seconds": statistics.median(samples), "runs": len(samples),
                      "warmup": args.warmup, "samples": samples}))


def matmul_flops(op, inputs, outputs):
    """FLOPs of one node from the shapes onnxruntime's profiler recorded; 0 for other ops."""
    if not inputs or not outputs:
        return 0
    out = math.prod(outputs[0])
    if op in ("Conv", "ConvTranspose") and len(inputs) >= 2:
        w = inputs[1]  # Conv: [CO, CI/groups, k...]; ConvTranspose: [CI, CO/groups, k...]
        if op == "Conv":
            return 2 * out * math.prod(w[1:])
        return 2 * math.prod(inputs[0]) * math.prod(w[1:])
    if op == "MatMul":
        return 2 * out * inputs[0][-1]
    if op == "Gemm":
        return 2 * out * (math.prod(inputs[0]) // outputs[0][0])  # A is M x K or, transposed, K x M
    return 0


def profiled_flops(profile_path):
    with open(profile_path) as f:
        events = json.load(f)
    total = 0
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        a = e.get("args", {})
        shapes = [[list(s.values())[0] for s in a.get(k, [])]
                  for k in ("input_type_shape", "output_type_shape")]
        total += matmul_flops(a.get("op_name"), *shapes)
    return total


# --- integer inputs: the range the model's Gathers accept, read from the ONNX protobuf ------------

def _varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def _fields(buf):
    """(field number, value) of a protobuf message: int for varints and fixed, bytes otherwise."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + size], pos + size
        else:
            raise Failure(f"unexpected protobuf wire type {wire}")
        yield number, value


def _signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _packed_varints(buf):
    pos = 0
    while pos < len(buf):
        v, pos = _varint(buf, pos)
        yield _signed(v)


def _tensor_dims(tensor):
    """(name, dims) of a TensorProto: dims = 1, name = 8."""
    name, shape = None, []
    for n, v in _fields(tensor):
        if n == 1:
            shape.extend([_signed(v)] if isinstance(v, int) else list(_packed_varints(v)))
        elif n == 8:
            name = bytes(v).decode()
    return name, shape


def onnx_graph(model_path):
    """The initializers' shapes and the nodes of an ONNX file, read without the onnx package."""
    with open(model_path, "rb") as f:
        model = memoryview(f.read())
    graph = next((v for n, v in _fields(model) if n == 7), None)  # ModelProto.graph
    if graph is None:
        raise Failure(f"{model_path}: no graph in the ONNX file")
    dims, nodes = {}, []
    for number, value in _fields(graph):
        if number == 5:  # GraphProto.initializer
            name, shape = _tensor_dims(value)
            dims[name] = shape
        elif number == 1:  # GraphProto.node: input = 1, output = 2, op_type = 4, attribute = 5
            node = {"inputs": [], "outputs": [], "op": "", "axis": 0}
            for n, v in _fields(value):
                if n == 1:
                    node["inputs"].append(bytes(v).decode())
                elif n == 2:
                    node["outputs"].append(bytes(v).decode())
                elif n == 4:
                    node["op"] = bytes(v).decode()
                elif n == 5:
                    attr = dict(_fields(v))  # AttributeProto: name = 1, i = 3, t = 5
                    if bytes(attr.get(1, b"")).decode() == "axis":
                        node["axis"] = _signed(attr.get(3, 0))
                    elif bytes(attr.get(1, b"")).decode() == "value" and 5 in attr:
                        node["value_dims"] = _tensor_dims(attr[5])[1]
            nodes.append(node)
    changed = True
    while changed:  # constants made by Constant nodes or renamed by Identity
        changed = False
        for node in nodes:
            out = node["outputs"][0] if node["outputs"] else None
            if out is None or out in dims:
                continue
            if node["op"] == "Constant" and "value_dims" in node:
                dims[out], changed = node["value_dims"], True
            elif node["op"] == "Identity" and node["inputs"] and node["inputs"][0] in dims:
                dims[out], changed = dims[node["inputs"][0]], True
    return dims, nodes


def gather_rows(graph, name):
    """The fewest rows of the Gathers that index with value `name` (itself or it through
    Cast/Reshape/(Un)Squeeze/Flatten/Identity); None when no Gather does."""
    dims, nodes = graph
    passthrough = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"}
    aliases, changed = {name}, True
    while changed:  # the value and what it becomes through shape-only ops
        changed = False
        for node in nodes:
            if (node["op"] in passthrough and node["inputs"] and node["inputs"][0] in aliases
                    and not aliases.issuperset(node["outputs"])):
                aliases.update(node["outputs"])
                changed = True
    rows = [dims[node["inputs"][0]][node["axis"]] for node in nodes
            if node["op"] == "Gather" and len(node["inputs"]) == 2
            and node["inputs"][1] in aliases and node["inputs"][0] in dims]
    return min(rows) if rows else None


# --- the comparison -------------------------------------------------------------------------------

class Comparison:
    def __init__(self, args):
        self.args = args
        self.cpus = f"0-{args.threads - 1}"
        self.target = args.target or f"llvm -num-cores={args.threads}"
        self.tirtune = os.path.abspath(args.tirtune)
        self.name = os.path.splitext(os.path.basename(args.model))[0]

    def command(self, argv, pinned):
        prefix = ["nice", "-n", "19"] if self.args.nice else []
        return prefix + (["taskset", "-c", self.cpus] if pinned else []) + argv

    def run(self, argv, pinned=False):
        """Runs a command; returns the JSON document it prints."""
        try:
            p = subprocess.run(self.command(argv, pinned), capture_output=True, text=True,
                               timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"{shlex.join(argv[:3])} ... ran past {self.args.timeout} s") from None
        if p.returncode != 0:
            tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-5:])
            raise Failure(f"{shlex.join(argv)} exited with status {p.returncode}: {tail}")
        try:
            return json.loads(p.stdout)
        except ValueError:
            raise Failure(f"{shlex.join(argv[:3])} ... printed no JSON: {p.stdout[-300:]}") \
                from None

    # Step 1.
    def compile(self, work):
        argv = [self.tirtune, "compile", "--model", self.args.model, "--target", self.target,
                "-o", os.path.join(work, "model"), "--json"]
        if self.args.db:
            argv += ["--db", self.args.db]
        argv += ["--offload", self.args.offload]
        out = self.run(argv)
        functions = out["functions"]
        library = [f for f in functions if "library" in f]
        counts = {"tuned": out["tuned"], "offloaded": len(library),
                  "default": len(functions) - out["tuned"] - len(library),
                  "calls_tuned": sum(f["weight"] for f in functions if f["tuned"]),
                  "calls_offloaded": sum(f["weight"] for f in library),
                  "calls_default": sum(f["weight"] for f in functions
                                       if not f["tuned"] and "library" not in f)}
        log(f"compiled {len(functions)} function(s) for '{out['target']}' (--offload "
            f"{self.args.offload}): {out['tuned']} tuned, {len(library)} offloaded to a library, "
            f"{counts['default']} with the default schedule")
        return out, counts

    # Step 2.
    def make_inputs(self, session, art_dir, inputs_dir):
        with open(os.path.join(art_dir, "graph.json")) as f:
            graph = json.load(f)
        theirs = {i.name: i for i in session.get_inputs()}
        ours = [graph["values"][i] for i in graph["inputs"]]
        if sorted(theirs) != sorted(v["name"] for v in ours):
            raise Failure(f"the compiled model's inputs {[v['name'] for v in ours]} are not "
                          f"onnxruntime's {list(theirs)}")
        graph_proto = None
        rng = np.random.default_rng(self.args.seed)
        feeds = {}
        for v in ours:  # tirtune run --inputs takes them in graph.json's order
            spec = theirs[v["name"]]
            if spec.type not in ORT_DTYPES:
                raise Failure(f"input '{spec.name}': type {spec.type} is not supported here")
            dtype = np.dtype(ORT_DTYPES[spec.type])
            shape = [d if isinstance(d, int) else None for d in spec.shape]
            if dtype.name != v["dtype"] or len(shape) != len(v["shape"]) or any(
                    d is not None and d != t for d, t in zip(shape, v["shape"])):
                raise Failure(f"input '{spec.name}': onnxruntime has {spec.type} {spec.shape}, "
                              f"the compiled model {v['dtype']} {v['shape']}")
            shape = v["shape"]
            if dtype.kind == "f" and "mask" in spec.name.lower():
                a = np.ones(shape, dtype)
                if shape and shape[-1] >= 4:
                    a[..., shape[-1] - shape[-1] // 4:] = 0
            elif dtype.kind == "f":
                a = rng.standard_normal(shape).astype(dtype)
            elif dtype.kind == "b":
                a = rng.integers(0, 2, shape).astype(dtype)
            else:
                if graph_proto is None and not self.args.int_high:
                    graph_proto = onnx_graph(self.args.model)
                high = self.args.int_high or gather_rows(graph_proto, spec.name)
                if not high:
                    raise Failure(f"integer input '{spec.name}' indexes no Gather, so its valid "
                                  f"range is unknown: give --int-high N (values 0..N-1)")
                a = rng.integers(0, high, shape).astype(dtype)
            feeds[spec.name] = a
        files = []
        for i, (name, a) in enumerate(feeds.items()):
            files.append(os.path.join(inputs_dir, f"input_{i}.npy"))
            np.save(files[-1], a)
        with open(os.path.join(inputs_dir, "inputs.json"), "w") as f:
            json.dump({"names": list(feeds)}, f)
        return feeds, files

    def compare(self, name, got, want):
        r = {"name": name, "shape": list(want.shape)}
        if got.shape != want.shape or got.dtype != want.dtype:
            r.update(ok=False, error=f"tirtune gives {got.dtype} {list(got.shape)}, onnxruntime "
                                     f"{want.dtype} {list(want.shape)}")
            return r
        g, w = got.astype(np.float64), want.astype(np.float64)
        finite = np.isfinite(w)
        scale = float(np.max(np.abs(w[finite]))) if finite.any() else 0.0
        err = np.abs(g - w)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        err = np.where(same, 0.0, err)
        bad = ~same & ~(err <= self.args.atol * max(1.0, scale) + self.args.rtol * np.abs(w))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(w != 0, err / np.abs(w), err)
        r.update(ok=not bad.any(), max_abs_error=float(np.nanmax(err)) if err.size else 0.0,
                 max_rel_error=float(np.nanmax(rel)) if rel.size else 0.0, max_abs_reference=scale,
                 mismatches=int(bad.sum()), elements=int(w.size))
        if bad.any():
            i = np.unravel_index(np.argmax(np.where(bad, err, -1)), w.shape)
            r["worst"] = {"index": [int(x) for x in i], "tirtune": float(g[i]),
                          "onnxruntime": float(w[i])}
        return r

    def accuracy(self, art_dir, inputs_dir, work):
        session = ort_session(self.args.model, self.args.threads)
        feeds, files = self.make_inputs(session, art_dir, inputs_dir)
        out_dir = os.path.join(work, "outputs")
        # One short benchmark with the outputs: its latency sizes the timing runs below.
        run = self.run([self.tirtune, "run", art_dir, "--inputs", *files, "--outputs-dir", out_dir,
                        "--bench", "--repeat", "3", "--warmup", "1", "--json"])
        want_names = [o.name for o in session.get_outputs()]
        want = dict(zip(want_names, session.run(None, feeds)))
        got = {o["name"]: np.load(o["file"]) for o in run["outputs"]}
        notes = []
        if sorted(got) != sorted(want):
            notes.append(f"output names differ (tirtune {list(got)}, onnxruntime {want_names}): "
                         f"compared in order")
            got = dict(zip(want_names, got.values()))
        results = [self.compare(name, got[name], want[name]) for name in want_names]

        # What rounding alone does: onnxruntime without its graph optimizations against itself.
        profile = ort_session(self.args.model, self.args.threads, optimize=False,
                              profile_prefix=os.path.join(work, "ort_profile"))
        plain = dict(zip(want_names, profile.run(None, feeds)))
        flops = profiled_flops(profile.end_profiling())
        floor = [self.compare(name, plain[name], want[name]) for name in want_names]
        for r in results:
            log(f"{r['name']}: {'ok' if r['ok'] else 'MISMATCH'}: " + (r.get("error") or (
                f"max abs error {r['max_abs_error']:.3g} (max |ort| {r['max_abs_reference']:.3g}),"
                f" max rel error {r['max_rel_error']:.3g}, {r['mismatches']} of {r['elements']}"
                f" elements out of tolerance")))
        return {"ok": all(r["ok"] for r in results), "rtol": self.args.rtol,
                "atol": self.args.atol, "outputs": results,
                "ort_unoptimized_vs_ort": [{k: r.get(k) for k in ("name", "max_abs_error",
                                                                  "max_rel_error")}
                                           for r in floor],
                "notes": notes}, run["median_seconds"], flops

    # Step 3.
    def time_pairs(self, art_dir, files, inputs_dir, estimate):
        repeat = self.args.repeat or max(10, min(10000, math.ceil(MIN_TIMED_SECONDS / estimate)))
        ours_argv = [self.tirtune, "run", art_dir, "--inputs", *files, "--bench", "--repeat",
                     str(repeat), "--warmup", str(self.args.warmup), "--json"]
        theirs_argv = [sys.executable, os.path.abspath(__file__), "--ort-time", self.args.model,
                       "--inputs-dir", inputs_dir, "--threads", str(self.args.threads),
                       "--warmup", str(self.args.warmup)]
        if self.args.repeat:
            theirs_argv += ["--repeat", str(self.args.repeat)]
        ours, theirs, runs = [], [], []
        for p in range(self.args.pairs):
            ours.append(self.run(ours_argv, pinned=True)["median_seconds"])
            t = self.run(theirs_argv, pinned=True)
            theirs.append(t["median_seconds"])
            runs.append(t["runs"])
            log(f"pair {p + 1}/{self.args.pairs}: tirtune {ours[-1] * 1e3:.4g} ms, onnxruntime "
                f"{theirs[-1] * 1e3:.4g} ms, ratio {theirs[-1] / ours[-1]:.3f}")
        return ours, theirs, {"tirtune_repeat": repeat, "onnxruntime_runs": runs}

    def versions(self):
        v = {"onnxruntime": ort.__version__, "numpy": np.__version__}
        p = subprocess.run([self.tirtune, "--version"], capture_output=True, text=True)
        v["tirtune"] = p.stdout.split()[-1] if p.returncode == 0 and p.stdout.split() else None
        p = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                           capture_output=True, text=True)
        if p.returncode == 0:
            v["tirtune_commit"] = p.stdout.strip()
        return v

    def db_trials(self, compiled):
        """Records the database holds for the compiled model's functions on its target."""
        if not self.args.db:
            return 0
        keys = {f["workload_key"] for f in compiled["functions"]}
        listing = self.run([self.tirtune, "db", "list", "--db", self.args.db, "--json"])
        return sum(t["records"] for w in listing if w["shash"] in keys
                   for t in w["targets"] if t["target"] == compiled["target"])

    def main(self, argv):
        if not os.access(self.tirtune, os.X_OK):
            raise Failure(f"{self.tirtune} not found: build tirtune (with ONNX support) or pass "
                          f"--tirtune")
        created_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        with tempfile.TemporaryDirectory(prefix="tirtune-vs-ort-") as work:
            art_dir, inputs_dir = os.path.join(work, "model"), os.path.join(work, "inputs")
            os.makedirs(inputs_dir)
            compiled, counts = self.compile(work)
            accuracy, estimate, flops = self.accuracy(art_dir, inputs_dir, work)
            files = [os.path.join(inputs_dir, f"input_{i}.npy")
                     for i in range(len(load_inputs(inputs_dir)))]
            ours = theirs = settings = None
            if self.args.pairs > 0:
                ours, theirs, settings = self.time_pairs(art_dir, files, inputs_dir, estimate)
            trials = self.db_trials(compiled)
        result = {"model": self.name, "path": self.args.model, "threads": self.args.threads,
                  "cpus": self.cpus, "target": compiled["target"], "database": self.args.db,
                  "functions": counts, "flops": flops, "accuracy": accuracy,
                  "versions": self.versions(), "nice": self.args.nice,
                  "pairs": self.args.pairs}
        if ours:
            pair_ratios = [t / o for o, t in zip(ours, theirs)]
            result.update({
                "tirtune_ms": digits(statistics.median(ours) * 1e3),
                "onnxruntime_ms": digits(statistics.median(theirs) * 1e3),
                "ratio": digits(statistics.median(pair_ratios)),
                "pair_ms": [{"tirtune": digits(o * 1e3), "onnxruntime": digits(t * 1e3),
                             "ratio": digits(t / o)} for o, t in zip(ours, theirs)],
                "tirtune_gflops": digits(flops / statistics.median(ours) / 1e9),
                "onnxruntime_gflops": digits(flops / statistics.median(theirs) / 1e9)})
            result.update(settings)
        print(json.dumps(result), flush=True)
        if self.args.json_out:
            if not ours:
                raise Failure("--json-out needs timings: --pairs must be at least 1")
            self.write_bench(created_at, argv, result, ours, theirs, pair_ratios, trials)
        return 0 if accuracy["ok"] else 1

    # Step 4.
    def write_bench(self, created_at, argv, result, ours, theirs, pair_ratios, trials):
        machine = {"cpu": "unknown", "cores": os.cpu_count() or 0, "threads": self.args.threads,
                   "cpus": self.cpus, "kernel": platform.release()}
        try:
            with open("/proc/cpuinfo") as f:
                machine["cpu"] = next(line.split(":", 1)[1].strip() for line in f
                                      if line.startswith("model name"))
        except (OSError, StopIteration):
            pass
        mcpu = [w[len("-mcpu="):] for w in result["target"].split() if w.startswith("-mcpu=")]
        if mcpu:
            machine["llvm_cpu"] = mcpu[0]
        notes = [f"functions tuned / offloaded / default: {result['functions']['tuned']} / "
                 f"{result['functions']['offloaded']} / {result['functions']['default']}",
                 "flops: Conv, ConvTranspose, MatMul and Gemm only" if result["flops"] else
                 "flops: no Conv/MatMul/Gemm found; 1 stands in"]
        if self.args.db and self.args.tuning_seconds is None:
            notes.append("tuning_s: unknown (give --tuning-seconds); 0 stands in")
        doc = {
            "schema": "tirtune-bench/1", "created_at": created_at,
            "command": shlex.join([".bench-venv/bin/python", "bench/vs_onnxruntime.py"] + argv),
            "budget": {"name": "database" if self.args.db else "untuned", "trials": trials},
            "machine": machine, "versions": result["versions"],
            "settings": {"pairs": self.args.pairs, "threads": self.args.threads,
                         "target": self.target, "nice": self.args.nice},
            "workloads": [{
                "name": self.name, "group": "Network", "kind": "network",
                "flops": result["flops"] or 1,
                "notes": notes,
                "tirtune": {"latency_s": statistics.median(ours), "trials": trials,
                            "tuning_s": self.args.tuning_seconds or 0,
                            "verified": result["accuracy"]["ok"], "samples_s": ours},
                "baselines": {"onnxruntime": {
                    "latency_s": statistics.median(theirs), "samples_s": theirs,
                    "ratio": digits(statistics.median(pair_ratios))}},
                "accuracy": result["accuracy"]}],
        }
        with open(self.args.json_out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        log(f"wrote {self.args.json_out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="the ONNX model")
    parser.add_argument("--db", help="tuning database (without: default schedules only)")
    parser.add_argument("--offload", default="measured", choices=["measured", "always", "never"],
                        help="tirtune compile --offload (measured)")
    parser.add_argument("--tirtune", default=os.path.join(ROOT, "build", "release", "src",
                                                          "tirtune"),
                        help="the tirtune binary, built with ONNX support "
                             "(default: build/release/src/tirtune)")
    parser.add_argument("--target", help='default: "llvm -num-cores=THREADS"')
    parser.add_argument("--threads", type=int, default=2, help="threads on both sides (2)")
    parser.add_argument("--pairs", type=int, default=3,
                        help="alternating timing pairs (3; 0: accuracy only)")
    parser.add_argument("--repeat", type=int,
                        help="timed runs per process (default: at least 10 and 1 s)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (3)")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-4,
                        help="absolute tolerance, times max(1, the output's largest |value|)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inputs")
    parser.add_argument("--int-high", type=int,
                        help="integer inputs take values 0..N-1 (default: from the Gathers)")
    parser.add_argument("--tuning-seconds", type=float,
                        help="tuning wall time of --db, for the --json-out document")
    parser.add_argument("--json-out", help="also write a tirtune-bench/1 document here")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per subprocess")
    parser.add_argument("--nice", action="store_true",
                        help="run at nice 19 (smoke tests on a shared machine: not results)")
    parser.add_argument("--ort-time", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--inputs-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ort_time:
        return ort_time(args)
    if args.threads < 1 or args.pairs < 0:
        parser.error("--threads must be at least 1 and --pairs at least 0")
    args.model = os.path.abspath(args.model)
    if args.nice:
        os.nice(19)  # onnxruntime's in-process accuracy run too
    try:
        return Comparison(args).main(sys.argv[1:])
    except Failure as e:
        log(f"error: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
