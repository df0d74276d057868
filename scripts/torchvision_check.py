#!/usr/bin/python3
"""torchvision's classification models through tirtune, checked against PyTorch.

For each model (torchvision's architecture, seeded random weights, eval mode, batch 1) and each
opset: export to ONNX with PyTorch, `tirtune compile` it (default schedules: no database) and
`tirtune run` it on a seeded input, and compare the logits with PyTorch's. With onnxruntime
at hand (--onnxruntime-python: bench/vs_onnxruntime.sh's virtualenv, .bench-venv), its own distance
from PyTorch is printed beside ours. A model passes when its largest error is within RTOL of the
largest |logit|, or within 4 times onnxruntime's own distance from PyTorch.

Needs Debian's python3-torch, python3-torchvision, python3-onnx and python3-numpy
(scripts/setup.sh installs them). A failure says at which step and with tirtune's message
(an unsupported operator names the node and what is missing).

  scripts/torchvision_check.py [--models squeezenet1_1,resnet18 | --all] [--opsets 13,17]
                               [--size 224] [--tirtune build/release/src/tirtune] [--json F]

Exit status 0 when every model passes, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

# The two largest models (over 600 million parameters: their export alone takes many GiB and
# minutes); --all skips them unless --huge is given.
HUGE = {"regnet_y_128gf", "vit_h_14"}
# Models that only run at their own input size.
FIXED_SIZE = {"vit_b_16": 224, "vit_b_32": 224, "vit_h_14": 224, "vit_l_16": 224,
              "vit_l_32": 224, "maxvit_t": 224}


def register_missing_symbolics():
    """PyTorch 1.13's exporter has no aten::zero, which swin_v2 applies to a slice of its qkv bias
    in forward: exported as a multiplication by 0 (the bias is finite)."""
    def zero(g, self):
        return g.op("Mul", self, g.op("Constant", value_t=torch.tensor(0.0)))
    torch.onnx.register_custom_op_symbolic("aten::zero", zero, 13)


def first_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def randomize_inert_parameters(model):
    """torchvision initializes batch norms to the identity (mean 0, variance 1, scale 1, shift 0),
    which leaves their folding unchecked and, in some networks, the logits near zero, and some
    layers to zeros (ViT's classifier head: every logit 0): draw them."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            if not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
                n = m.running_mean.numel()
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                    m.bias.copy_(torch.randn(n, generator=g) * 0.1)


ORT_SCRIPT = """
import sys, numpy, onnxruntime
options = onnxruntime.SessionOptions()
session = onnxruntime.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
x = numpy.load(sys.argv[2])
numpy.save(sys.argv[3], session.run(None, {session.get_inputs()[0].name: x})[0])
"""


def onnxruntime_logits(python, path, input_path, work):
    """onnxruntime's logits, computed by `python` (a virtualenv with onnxruntime, e.g. the one
    bench/vs_onnxruntime.sh makes), or None when there is none."""
    if not python:
        return None
    out = os.path.join(work, "onnxruntime_logits.npy")
    result = subprocess.run([python, "-c", ORT_SCRIPT, path, input_path, out],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"onnxruntime failed: {first_line(result.stderr)}")
    return np.load(out)


def check(name, opset, size, tirtune, work, rtol, ort_python):
    row = {"model": name, "opset": opset, "size": size, "status": "ok"}
    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None).eval()
    randomize_inert_parameters(model)
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))
    path = os.path.join(work, f"{name}_{opset}.onnx")
    start = time.time()
    with torch.no_grad():
        expected = model(x).numpy()
    # Exported with gradients on: without them, nn.MultiheadAttention (the ViTs) takes its fused
    # fast path, which PyTorch 1.13 cannot export.
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                      output_names=["logits"], do_constant_folding=True)
    row["export_s"] = round(time.time() - start, 1)
    input_path = os.path.join(work, "input.npy")
    np.save(input_path, x.numpy())
    out_dir = os.path.join(work, f"{name}_{opset}")

    def step(what, args):
        begin = time.time()
        result = subprocess.run([tirtune] + args, capture_output=True, text=True)
        row[f"{what}_s"] = round(time.time() - begin, 1)
        if result.returncode != 0:
            row["status"] = f"{what} failed"
            row["message"] = first_line(result.stderr or result.stdout)
            return False
        return True

    if not step("compile", ["compile", "--model", path, "-o", out_dir]):
        return row
    if not step("run", ["run", out_dir, "--inputs", input_path,
                        "--outputs-dir", out_dir]):
        return row
    got = np.load(os.path.join(out_dir, "output_0.npy"))
    scale = float(np.abs(expected).max())
    if got.shape != expected.shape:
        row["status"] = "wrong shape"
        row["message"] = f"logits {list(got.shape)}, PyTorch {list(expected.shape)}"
        return row
    row["max_abs_error"] = float(np.abs(got - expected).max())
    row["largest_logit"] = scale
    ort = onnxruntime_logits(ort_python, path, input_path, work)
    bound = rtol * max(scale, 1e-6)
    if ort is not None:
        row["onnxruntime_max_abs_error"] = float(np.abs(ort - expected).max())
        # Within onnxruntime's own rounding: no further from PyTorch than a few times its distance.
        bound = max(bound, 4 * row["onnxruntime_max_abs_error"])
    if not np.isfinite(got).all() or row["max_abs_error"] > bound:
        row["status"] = "mismatch"
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", help="comma-separated torchvision model names")
    parser.add_argument("--all", action="store_true", help="every classification model")
    parser.add_argument("--huge", action="store_true", help="with --all, the largest ones too")
    parser.add_argument("--opsets", default="13,17")
    parser.add_argument("--size", type=int, default=224, help="input height and width")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="largest error allowed, relative to the largest |logit|")
    parser.add_argument("--tirtune", default="build/release/src/tirtune")
    parser.add_argument("--work", help="keep the models and artifacts here")
    parser.add_argument("--onnxruntime-python",
                        default=".bench-venv/bin/python" if os.path.exists(".bench-venv/bin/python")
                        else None,
                        help="a Python with onnxruntime, to show its distance from PyTorch too "
                             "(default: .bench-venv/bin/python when it exists)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    if args.all:
        names = [n for n in torchvision.models.list_models(module=torchvision.models)
                 if args.huge or n not in HUGE]
    elif args.models:
        names = args.models.split(",")
    else:
        parser.error("give --models or --all")
    known = set(torchvision.models.list_models(module=torchvision.models))
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"not a torchvision classification model: {', '.join(unknown)}")
    torch.set_num_threads(os.cpu_count() or 1)
    register_missing_symbolics()
    rows = []
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}", flush=True)
    for name in names:
        for opset in [int(o) for o in args.opsets.split(",")]:
            with tempfile.TemporaryDirectory() as tmp:
                work = args.work or tmp
                os.makedirs(work, exist_ok=True)
                try:
                    row = check(name, opset, FIXED_SIZE.get(name, args.size),
                                os.path.abspath(args.tirtune), work, args.rtol,
                                args.onnxruntime_python)
                except Exception as e:  # PyTorch's export or onnxruntime failed: say which
                    row = {"model": name, "opset": opset, "status": "failed",
                           "message": first_line(str(e))}
            rows.append(row)
            errors = ""
            if "max_abs_error" in row:
                errors = f"error {row['max_abs_error']:.2e} (largest {row['largest_logit']:.3g})"
                if "onnxruntime_max_abs_error" in row:
                    errors += f", onnxruntime {row['onnxruntime_max_abs_error']:.2e}"
            times = " ".join(f"{k[:-2]} {row[k]} s" for k in ("export_s", "compile_s", "run_s")
                             if k in row)
            print(f"{name:<22} opset {opset}  {row['status']:<15} {errors}  {times}"
                  f"{'  ' + row['message'] if 'message' in row else ''}", flush=True)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(rows, f, indent=1)
    passed = sum(r["status"] == "ok" for r in rows)
    print(f"{passed} of {len(rows)} pass")
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
