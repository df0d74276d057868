#!/usr/bin/env bash
# The GPU check, run on a GPU host from the repository root: the bundle's kernels verified and
# timed (tirtune-gpu-runner), then cuBLAS/cuDNN on the same cases (vs_cublas.py, needs PyTorch).
# Usage: bench/gpu/run_on_gpu.sh [BUNDLE [RESULTS]]   (defaults: build/gpu-bundle, $OUT or /tmp)
# Make the bundle on any host first: scripts/gpu_bundle.sh.
set -u
bundle=${1:-build/gpu-bundle}
results=${2:-${OUT:-/tmp/tirtune-gpu-results}}
mkdir -p "$results"
{
  date -u
  uname -a
  ldd --version 2>&1 | head -1
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
  nvidia-smi -q -d CLOCK 2>&1 | head -40
} > "$results/host.txt" 2>&1
cat "$results/host.txt" | head -8
status=0
timeout 400 "$bundle/tirtune-gpu-runner" "$bundle" --json "$results/gpu_runner.json" 2>&1 \
  | tee "$results/gpu_runner.txt" || status=1
timeout 150 python3 bench/gpu/vs_cublas.py --json "$results/peers.json" 2>&1 \
  | tee "$results/peers.txt" || status=1
exit $status
