#!/usr/bin/env bash
# Issue 28's model comparison: each model tuned with TRIALS trials (rounds of 32, the default
# `--offload measured`: oneDNN's kernel measured as a candidate of every function a pattern
# matched), compiled with the faster of library and tuned kernel per function, and compared with
# onnxruntime by bench/vs_onnxruntime.sh (accuracy, then latency in PAIRS alternating pinned
# pairs). Prints one JSON line per model: functions offloaded / tuned / default, both latencies,
# the ratio (> 1: tirtune is faster) and the tuning time.
# Usage: TRIALS=2000 PAIRS=3 OUT=offload-run bash bench/offload_models.sh [MODEL...]
#   TUNE_FLAGS: more options for `tirtune tune` (e.g. --cold-weights).
#   MODEL: resnet18 resnet50 bert_tiny mobilenet_v2 (default all four), generated into
#   $OUT/models by scripts/gen_onnx_models.py (Debian's python3 with torch) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build/release}" TRIALS="${TRIALS:-2000}" PAIRS="${PAIRS:-3}"
THREADS="${THREADS:-2}" OUT="${OUT:-offload-run}"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet18 resnet50 bert_tiny mobilenet_v2)
mkdir -p "$OUT/models"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')" >&2
for m in "${models[@]}"; do
  [ -f "$OUT/models/$m.onnx" ] || /usr/bin/python3 scripts/gen_onnx_models.py "$OUT/models" --models "$m" >&2
  start=$(date +%s.%N)
  taskset -c "0-$((THREADS - 1))" "$BUILD_DIR/src/tirtune" tune --model "$OUT/models/$m.onnx" \
    --trials "$TRIALS" --trials-per-round 32 --db "$OUT/$m.db" \
    --target "llvm -num-cores=$THREADS" ${TUNE_FLAGS:-} > "$OUT/$m.tune.log" 2>&1
  end=$(date +%s.%N)
  BUILD_DIR="$BUILD_DIR" bash bench/vs_onnxruntime.sh "$OUT/models/$m.onnx" --db "$OUT/$m.db" \
    --pairs "$PAIRS" --threads "$THREADS" --json-out "$OUT/$m.bench.json" > "$OUT/$m.json" \
    2> "$OUT/$m.vs.log" || true
  python3 - "$OUT/$m.json" "$m" "$start" "$end" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
d = json.loads(lines[-1]) if lines else {"error": "no result: see the .vs.log"}
print(json.dumps({"model": sys.argv[2], "functions": d.get("functions"),
                  "tirtune_ms": d.get("tirtune_ms"), "onnxruntime_ms": d.get("onnxruntime_ms"),
                  "ratio": d.get("ratio"), "pair_ratios": [p["ratio"] for p in d.get("pair_ms", [])],
                  "accuracy_ok": d.get("accuracy", {}).get("ok"), "error": d.get("error"),
                  "tune_seconds": round(float(sys.argv[4]) - float(sys.argv[3]), 1)}), flush=True)
PY
done
