#!/usr/bin/env bash
# The main job, end to end on a fresh Debian 12 machine: install the dependencies, build tirtune
# (Release), then
#   1. operators: tune a 512³ GEMM and a ResNet-50 3×3 convolution into the embedded SQLite
#      database (a few hundred trials: evolutionary search with the XGBoost cost model, every
#      candidate built, verified and timed in an isolated runner on 2 threads), and time each
#      best kernel against oneDNN on the same 2 threads;
#   2. a model: generate a small residual CNN (ONNX, random weights), tune its fused functions
#      into the same database, compile it with the best records, run it (checked against the
#      reference interpreter) and compare it with onnxruntime: outputs and latency on 2 threads.
# onnxruntime comes from PyPI (into .bench-venv, bench/vs_onnxruntime.sh); without network access
# that last comparison is skipped with a message, and everything before it still counts.
#
# Settings: TRIALS (operators, 300), MODEL_TRIALS (the model, 300), DB (tirtune-demo.db),
# MODEL_DIR (tirtune-demo-model), BUILD_DIR (build/release).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${BUILD_DIR:-build/release}"
TRIALS="${TRIALS:-300}"
MODEL_TRIALS="${MODEL_TRIALS:-300}"
DB="${DB:-tirtune-demo.db}"
MODEL_DIR="${MODEL_DIR:-tirtune-demo-model}"
mkdir -p "$(dirname "$DB")"
WORKLOADS=(gemm:512,512,512 conv2d:1,14,14,256,256,3,1,1)
TARGET="llvm -num-cores=2"
tirtune="$BUILD_DIR/src/tirtune"
step() { printf '\n== %s\n' "$*"; }

bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIRTUNE_BUILD_TESTS=OFF
cmake --build "$BUILD_DIR" -j "$(nproc)" \
  --target tirtune tirtune-runner bench_dnnl

step "1. operators: tune ${WORKLOADS[*]} ($TRIALS trials in all)"
tune_args=()
for w in "${WORKLOADS[@]}"; do tune_args+=(--workload "$w"); done
"$tirtune" tune "${tune_args[@]}" --trials "$TRIALS" --db "$DB" --target "$TARGET"
echo "best kernels against oneDNN (2 threads; ratio > 1 means tirtune is faster):"
BUILD_DIR="$BUILD_DIR" DB="$DB" PAIRS=3 bash bench/best_vs_onednn.sh "${WORKLOADS[@]}"

model="$MODEL_DIR/demo_cnn.onnx"
step "2. a model: $model, a residual CNN on 32×32 images (scripts/gen_demo_model.py)"
mkdir -p "$MODEL_DIR"
/usr/bin/python3 scripts/gen_demo_model.py "$model"
"$tirtune" tune --model "$model" --trials "$MODEL_TRIALS" --db "$DB" --target "$TARGET"
"$tirtune" compile --model "$model" --db "$DB" --target "$TARGET" -o "$MODEL_DIR/compiled"
taskset -c 0-1 "$tirtune" run "$MODEL_DIR/compiled" --verify --bench
echo "against onnxruntime (2 threads; ratio > 1 means tirtune is faster):"
rc=0
BUILD_DIR="$BUILD_DIR" bash bench/vs_onnxruntime.sh "$model" --db "$DB" --threads 2 --pairs 3 \
  || rc=$?
if [ "$rc" = 3 ]; then
  echo "demo: onnxruntime could not be installed from PyPI (see above): comparison skipped"
elif [ "$rc" != 0 ]; then
  exit "$rc"
fi
