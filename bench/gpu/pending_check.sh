#!/usr/bin/env bash
# The GPU checks still open, in one device call sized to a session's device time (one command of
# at most 600 s), run on a GPU host from the repository root with the GPU-host bundle
# (`WITH_REDIS=1 bash scripts/gpu_host_bundle.sh`) in the tree:
#  1. in the background, the C2D shapes resumed from session 24's database to 1,000 trials
#     (tune_on_gpu.sh, one process per shape, each stopped after TUNE_SECONDS, default 300), their
#     bests then timed alone; cuDNN's kernel is a candidate of each (`--offload measured`);
#  2. meanwhile the library backends (offload_check.sh): cuBLASLt products and cuDNN convolutions
#     verified and timed as library records — the GPU workers take turns through the device lock;
#  3. after the tuning, MODEL (an ONNX file in the tree: the demo's residual CNN,
#     `scripts/gen_demo_model.py models/demo_cnn.onnx --size 224`, about 40 KB, with
#     convolutions for cuDNN and a Gemm for cuBLAS; MobileNetV2's 14 MB with the ~30 MB bundle
#     and the 18 MB tree comes near the device's 64 MiB) compiled with every library function
#     offloaded and run with `--verify --bench` on a quiet GPU;
#  4. cuBLAS and cuDNN through PyTorch on the same shapes (vs_cublas.py), the peers.
# Results under $OUT (or /tmp/tirtune-gpu-pending): c2d/, offload/, peers.*.
# Usage: [MODEL=FILE.onnx] [TUNE_SECONDS=300] bench/gpu/pending_check.sh [BUNDLE.tar.xz]
set -u
cd "$(dirname "$0")/../.."
bundle=${1:-build/tirtune-gpu-host.tar.xz}
results=${OUT:-/tmp/tirtune-gpu-pending}
mkdir -p "$results"
status=0
OUT="$results/c2d" DB_FROM=docs/results/gpu-2026-11-26-h200/run20-parallel/c2d_gpu_tune.db.xz \
  TUNE_ARGS=--resume PARALLEL=1 TUNE_SECONDS="${TUNE_SECONDS:-300}" \
  bash bench/gpu/tune_on_gpu.sh "$bundle" conv2d:1,224,224,3,64,7,2,3:1000 \
  conv2d:1,56,56,64,64,3,1,1:1000 conv2d:1,14,14,256,256,3,1,1:1000 \
  conv2d:1,7,7,512,512,3,1,1:1000 conv2d:1,56,56,64,64,1,1,0:1000 > "$results/c2d.txt" 2>&1 &
tuning=$!
OUT="$results/offload" bash bench/gpu/offload_check.sh "$bundle" > "$results/offload.txt" 2>&1 ||
  status=1
wait "$tuning" || status=1
if [ -n "${MODEL:-}" ]; then
  OUT="$results/offload" MODEL_ONLY=1 bash bench/gpu/offload_check.sh "$bundle" \
    >> "$results/offload.txt" 2>&1 || status=1
fi
timeout 150 python3 bench/gpu/vs_cublas.py --json "$results/peers.json" > "$results/peers.txt" \
  2>&1 || status=1
for f in offload.txt c2d.txt peers.txt; do
  echo "== $f"
  grep -vE "^\s*$|stopping after" "$results/$f" | tail -40
done
exit $status
