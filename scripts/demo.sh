#!/usr/bin/env bash
# The main job, end to end on a fresh Debian 12 machine: install the dependencies, build tirtune
# (Release), tune a 512³ GEMM and a ResNet-50 3×3 convolution into the embedded SQLite database
# (a few hundred trials: evolutionary search with the XGBoost cost model, every candidate built,
# verified and timed in an isolated runner on 2 threads), then time each best kernel against
# oneDNN on the same 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${BUILD_DIR:-build/release}"
TRIALS="${TRIALS:-300}"
DB="${DB:-tirtune-demo.db}"
WORKLOADS=(gemm:512,512,512 conv2d:1,14,14,256,256,3,1,1)

bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIRTUNE_BUILD_TESTS=OFF
cmake --build "$BUILD_DIR" -j "$(nproc)" \
  --target tirtune tirtune-runner bench_dnnl

tune_args=()
for w in "${WORKLOADS[@]}"; do tune_args+=(--workload "$w"); done
"$BUILD_DIR/src/tirtune" tune "${tune_args[@]}" --trials "$TRIALS" --db "$DB" \
  --target "llvm -num-cores=2"
echo "best kernels against oneDNN (2 threads; ratio > 1 means tirtune is faster):"
BUILD_DIR="$BUILD_DIR" DB="$DB" PAIRS=3 bash bench/best_vs_onednn.sh "${WORKLOADS[@]}"
