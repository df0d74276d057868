#!/usr/bin/env bash
# Tunes each workload with `tirtune tune` (TRIALS trials on THREADS pinned CPUs, its own task),
# then compares the best kernel found with oneDNN (bench/best_vs_onednn.sh) and prints one JSON
# line per workload: trials, statuses, tuning wall time, both speeds and the median ratio.
# TUNE_ARGS are passed to `tirtune tune` (e.g. "--offload never": only tuned kernels, no library
# record, so that the comparison is the tuned kernel's).
# Usage: TRIALS=1000 bench/tune_vs_onednn.sh gemm:1024,1024,1024 conv2d:1,14,14,256,256,3,1,1
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build/release}"
TRIALS="${TRIALS:-1000}" THREADS="${THREADS:-2}"
DB="${DB:-bench-tune.db}" STRATEGY="${STRATEGY:-evolutionary}"
cpus="0-$((THREADS - 1))"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for spec in "$@"; do
  start=$(date +%s.%N)
  taskset -c "$cpus" "$BUILD_DIR/src/tirtune" tune --workload "$spec" --trials "$TRIALS" \
    --db "$DB" --target "llvm -num-cores=$THREADS" --strategy "$STRATEGY" ${TUNE_ARGS:-} --json > "$work/tune.json"
  end=$(date +%s.%N)
  compared=$(BUILD_DIR="$BUILD_DIR" DB="$DB" THREADS="$THREADS" bash bench/best_vs_onednn.sh "$spec")
  python3 - "$work/tune.json" "$compared" "$start" "$end" "$STRATEGY" <<'PY'
import json, sys
task = json.load(open(sys.argv[1]))["tasks"][0]
line = json.loads(sys.argv[2])
line.update({"strategy": sys.argv[5], "trials": task["trials"], "statuses": task["statuses"],
             "tune_seconds": round(float(sys.argv[4]) - float(sys.argv[3]), 1)})
print(json.dumps(line))
PY
done
