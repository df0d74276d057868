#!/usr/bin/python3
"""Writes the seed corpora of the fuzzers that read binary or multi-part inputs:

  tests/fuzz/corpus/onnx/      small ONNX models (python3-onnx's helpers)
  tests/fuzz/corpus/npy/       .npy files of every element type tirtune reads, and some it refuses
  tests/fuzz/corpus/manifest/  compiled-model manifests and graphs (manifest_fuzzer.cc's format)
  tests/fuzz/corpus/sqlite/    database rows (sqlite_fuzzer.cc's format), poisoned ones included

  /usr/bin/python3 tests/fuzz/make_seeds.py     (needs python3-onnx and python3-numpy)

The fuzzers grow these corpora themselves (scripts/fuzz.sh); the seeds give them valid
starting points, and the fuzz_replay tests replay every file in CI.
"""
import hashlib
import io
import json
import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def write(kind, name, data):
    path = ROOT / kind / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def model(name, nodes, inputs, outputs, weights=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(weights))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    write("onnx", name + ".onnx", m.SerializeToString())


def onnx_seeds():
    rng = np.random.default_rng(0)
    f32 = TensorProto.FLOAT

    def w(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    def vi(name, shape, t=f32):
        return helper.make_tensor_value_info(name, t, shape)

    model("conv_relu",
          [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
           helper.make_node("Relu", ["c"], ["y"])],
          [vi("x", [1, 2, 5, 5])], [vi("y", [1, 3, 5, 5])], [w("w", 3, 2, 3, 3), w("b", 3)])
    model("gemm_softmax",
          [helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
           helper.make_node("Softmax", ["g"], ["y"], axis=1)],
          [vi("x", [2, 4])], [vi("y", [2, 3])], [w("w", 3, 4), w("b", 3)])
    model("pool_flatten",
          [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
           helper.make_node("GlobalAveragePool", ["p"], ["g"]),
           helper.make_node("Flatten", ["g"], ["y"])],
          [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3])])
    model("shape_chain",
          [helper.make_node("Shape", ["x"], ["s"]),
           helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
           helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
           helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
           helper.make_node("Reshape", ["x", "shape"], ["r"]),
           helper.make_node("MatMul", ["r", "m"], ["y"])],
          [vi("x", [2, 3, 4])], [vi("y", [2, 5])],
          [numpy_helper.from_array(np.array(0, np.int64), "zero"),
           numpy_helper.from_array(np.array([0], np.int64), "axes"),
           numpy_helper.from_array(np.array([-1], np.int64), "minus1"), w("m", 12, 5)])
    model("norm_add",
          [helper.make_node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["n"]),
           helper.make_node("Add", ["n", "x"], ["a"]),
           helper.make_node("Sigmoid", ["a"], ["y"])],
          [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 3, 3])],
          [w("s", 2), w("b", 2), w("mean", 2),
           numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "var")])


def npy_bytes(array, version=None):
    out = io.BytesIO()
    if version is None:
        np.save(out, array)
    else:
        np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


def npy_seeds():
    write("npy", "f32.npy", npy_bytes(np.arange(6, dtype=np.float32).reshape(2, 3)))
    write("npy", "f64.npy", npy_bytes(np.linspace(0, 1, 5)))
    write("npy", "i32.npy", npy_bytes(np.array([[1, -2], [3, 4]], np.int32)))
    write("npy", "i64.npy", npy_bytes(np.array([7, 8, 9], np.int64)))
    write("npy", "u8.npy", npy_bytes(np.array([0, 255], np.uint8)))
    write("npy", "bool.npy", npy_bytes(np.array([True, False, True])))
    write("npy", "scalar.npy", npy_bytes(np.float32(3.5)))
    write("npy", "empty.npy", npy_bytes(np.zeros((0, 4), np.float32)))
    write("npy", "v2.npy", npy_bytes(np.ones((2, 2), np.float32), version=(2, 0)))
    write("npy", "fortran.npy", npy_bytes(np.asfortranarray(np.ones((2, 3), np.float32))))
    write("npy", "big_endian.npy", npy_bytes(np.ones(3, ">f4")))
    write("npy", "f16.npy", npy_bytes(np.ones(3, np.float16)))


def manifest_seeds():
    weights = bytes(64)  # what manifest_fuzzer.cc writes as weights.bin
    functions = [{"name": "fused_conv2d_relu", "object": "kernels/fused_conv2d_relu.o",
                  "ir": "kernels/fused_conv2d_relu.tir", "tuned": True, "best_seconds": 1e-5,
                  "weight": 1, "workload_key": "0123456789abcdef"},
                 {"name": "fused_add", "object": "kernels/fused_add.o",
                  "ir": "kernels/fused_add.tir", "tuned": False, "weight": 1,
                  "workload_key": "fedcba9876543210", "fallback_reason": "no record"}]
    graph = {"values": [{"name": "x", "kind": "input", "dtype": "float32", "shape": [1, 4]},
                        {"name": "w", "kind": "constant", "dtype": "float32", "shape": [4],
                         "offset": 0, "nbytes": 16},
                        {"name": "h", "kind": "call", "dtype": "float32", "shape": [1, 4]},
                        {"name": "y", "kind": "call", "dtype": "float32", "shape": [1, 4]}],
             "calls": [{"function": 0, "args": [0, 1], "output": 2, "op": "conv2d"},
                       {"function": 1, "args": [2, 0], "output": 3, "op": "add"}],
             "inputs": [0], "outputs": [3]}
    for version in (1, 2):
        manifest = {"format": "tirtune-model", "version": version,
                    "target": "llvm -mcpu=x86-64 -num-cores=2", "source": "model.onnx",
                    "functions": functions, "graph": "graph.json", "weights": "weights.bin"}
        if version == 2:
            manifest["files"] = {"weights.bin": hashlib.sha256(weights).hexdigest()}
        text = json.dumps(manifest, indent=1) + "\n----\n" + json.dumps(graph, indent=1)
        write("manifest", f"v{version}.txt", text)


def sqlite_seeds():
    # The columns of sqlite_fuzzer.cc, separated by 0x1E; those left out take a valid record's.
    gemm_ir = (pathlib.Path(__file__).resolve().parent.parent / "schedule" / "gemm_text.h")
    text = gemm_ir.read_text()
    ir = text[text.index('R"(') + 3:text.index(')";')]
    trace = json.dumps({"format": "tirtune-trace", "version": 1, "insts": [
        {"kind": "GetBlock", "v": 1, "inputs": [], "attrs": {"name": "C"}, "outputs": ["b0"]},
        {"kind": "GetLoops", "v": 1, "inputs": ["b0"], "attrs": {}, "outputs": ["l1", "l2", "l3"]},
        {"kind": "SamplePerfectTile", "v": 1, "inputs": ["l1"],
         "attrs": {"n": 2, "max_innermost_factor": 64}, "decision": [4, 4],
         "outputs": ["e4", "e5"]},
        {"kind": "Split", "v": 1, "inputs": ["l1", "e4", "e5"], "attrs": {},
         "outputs": ["l6", "l7"]}]}, separators=(",", ":"))
    sep = "\x1e"

    def row(name, **columns):
        order = ["ir", "trace", "status", "run_secs", "median_secs", "error", "device",
                 "program_version", "target", "name", "shash", "created_at"]
        values = {"ir": ir, "trace": trace, "status": "ok", "run_secs": "[1e-05,1.2e-05]",
                  "median_secs": "1.1e-05", "error": "", "device": "seed-cpu",
                  "program_version": "0.1.0", "target": "llvm -mcpu=x86-64", "name": "gemm",
                  "shash": "0123456789abcdef", "created_at": "1700000000"}
        values.update(columns)
        write("sqlite", name + ".txt", sep.join(values[c] for c in order))

    row("valid")
    row("deep_json", trace="[" * 5000 + "]" * 5000)
    row("absurd_decision", trace=trace.replace("[4,4]", "[4611686018427387905,128]"))
    row("unknown_instruction", trace=trace.replace("GetLoops", "Teleport"))
    row("garbage_text", trace="\x00\xff garbage {", run_secs="not json", ir="def (")
    row("unknown_status", status="exploded", median_secs="")
    row("negative_median", median_secs="-1", run_secs="[-1]")
    row("wrong_median", median_secs="5")
    row("huge_run_secs", run_secs="[1e308,1e308]", median_secs="1e308")
    row("failure_with_samples", status="build_error", error="x" * 1000)


if __name__ == "__main__":
    onnx_seeds()
    npy_seeds()
    manifest_seeds()
    sqlite_seeds()
