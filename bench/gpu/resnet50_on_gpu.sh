#!/usr/bin/env bash
# On a GPU host, from the repository root: ResNet-50 batch 1 compiled by tirtune for the GPU
# against PyTorch eager on the same GPU. The model is exported there by bench/gpu/resnet50_torch.py
# (PyTorch only; 100 MB of weights would not fit the transfer to the GPU host), tuned with
# `tirtune tune --model --target cuda` for TUNE_SECONDS (SIGINT: the batch in flight is
# committed; functions without a record get the default GPU schedule), compiled with `tirtune
# compile --target cuda`, run with `tirtune run --bench` on PyTorch's input and compared with
# PyTorch's logits. Results under $OUT (or /tmp/tirtune-gpu-resnet50).
# Usage: bench/gpu/resnet50_on_gpu.sh [BUNDLE.tar.xz]
set -u
bundle=${1:-build/tirtune-gpu-host.tar.xz}
results=${OUT:-/tmp/tirtune-gpu-resnet50}
seconds=${TUNE_SECONDS:-240}
trials=${TUNE_TRIALS:-3000}
mkdir -p "$results"
t=$(mktemp -d)
tar xJf "$bundle" -C "$t"
T="$t/tirtune"
cuda='cuda -arch=sm_90'
status=0
here=$(dirname "$0")
m=$t/model
timeout 300 python3 "$here/resnet50_torch.py" export "$m" || { echo "export failed"; exit 1; }
timeout 120 python3 "$here/resnet50_torch.py" time "$m" && cp "$m/torch.json" "$results/" || status=1

echo "\$ tirtune tune --model resnet50.onnx --target '$cuda' --trials $trials (at most $seconds s)"
timeout -s INT -k 90 "$seconds" "$T" --json tune --model "$m/resnet50.onnx" --target "$cuda" \
  --trials "$trials" --trials-per-round "${TRIALS_PER_ROUND:-16}" --db "$results/r50_gpu.db" \
  --log "$results/tune_resnet50.log" > "$results/tune_resnet50.json" || status=1
tail -3 "$results/tune_resnet50.log"

echo "\$ tirtune compile --model resnet50.onnx --db r50_gpu.db --target '$cuda'"
timeout 300 "$T" compile --model "$m/resnet50.onnx" --db "$results/r50_gpu.db" --target "$cuda" \
  -o "$t/r50" 2>&1 | tail -5 || status=1
echo "\$ tirtune run r50 --bench --inputs input.npy"
timeout 120 "$T" --json run "$t/r50" --inputs "$m/input.npy" --outputs-dir "$t/out" --bench \
  --repeat 100 --warmup 10 > "$results/run_resnet50.json" || status=1
python3 - "$results/run_resnet50.json" "$results/torch.json" <<'PY' || status=1
import json, sys
run, peer = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ours, theirs = run["median_seconds"], peer["median_seconds"]
tuned = sum(1 for f in run["functions"] if f["tuned"])
print(f"tirtune {ours * 1e3:.3f} ms ({tuned} of {len(run['functions'])} functions tuned), "
      f"{peer['peer']} {theirs * 1e3:.3f} ms: ratio {theirs / ours:.3f} (> 1: tirtune faster)")
for f in run["functions"][:8]:
    print(f"  {f['share'] * 100:5.1f}%  {f['seconds'] * 1e3:.4f} ms  {f['function']}"
          f"{' (tuned)' if f['tuned'] else ''}")
PY
python3 "$here/resnet50_torch.py" compare "$m" "$t/out/output_0.npy" || status=1
rm -rf "$t"
exit $status
