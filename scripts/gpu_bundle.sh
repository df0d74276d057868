#!/usr/bin/env bash
# Makes the GPU bundle on this host (no GPU needed): builds bench_gpu_prepare and
# tirtune-gpu-runner, writes the cubins, launches and reference numbers of the hand-written GPU
# schedules into build/gpu-bundle (or $1) and puts tirtune-gpu-runner beside them. Copy the folder
# (a few MiB) to a GPU host that has the NVIDIA driver and run bench/gpu/run_on_gpu.sh there.
# Extra arguments go to bench_gpu_prepare (--arch sm_80, --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build/release}"
bundle=${1:-build/gpu-bundle}
shift || true
bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$BUILD_DIR" --target bench_gpu_prepare tirtune-gpu-runner
rm -rf "$bundle"
"$BUILD_DIR/bench/bench_gpu_prepare" "$bundle" "$@"
cp "$BUILD_DIR/measure/tirtune-gpu-runner" "$bundle/"
du -sh "$bundle"
