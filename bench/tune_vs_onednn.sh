#!/usr/bin/env bash
# Tunes each workload with `tirtune tune` (TRIALS trials, 2 threads), then times the best kernel
# found (`tirtune time`, verified, the default timer) against oneDNN in its own process,
# alternating PAIRS times, and prints one JSON line per workload with both speeds and the median
# ratio. Workloads: gemm:M,N,K (oneDNN sgemm) and conv2d:N,H,W,CI,CO,k,s,p[,d,g] (oneDNN
# convolution). Usage: bench/tune_vs_onednn.sh SPEC [SPEC...]
set -euo pipefail
BUILD_DIR="${BUILD_DIR:-build/release}"
TRIALS="${TRIALS:-1000}" PAIRS="${PAIRS:-3}" THREADS="${THREADS:-2}"
DB="${DB:-bench-tune.db}" STRATEGY="${STRATEGY:-evolutionary}"
TIRTUNE="$BUILD_DIR/src/tirtune"
cpus="0-$((THREADS - 1))"
target="llvm -num-cores=$THREADS"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for spec in "$@"; do
  name="${spec%%:*}" args="${spec#*:}"
  case "$name" in
    gemm) baseline=("$BUILD_DIR/bench/bench_dnnl_gemm" ${args//,/ }) ;;
    conv2d) baseline=("$BUILD_DIR/bench/bench_dnnl_conv2d" ${args//,/ }) ;;
    *) echo "no oneDNN baseline for $name" >&2; exit 2 ;;
  esac
  start=$(date +%s.%N)
  taskset -c "$cpus" "$TIRTUNE" tune --workload "$spec" --trials "$TRIALS" --db "$DB" \
    --target "$target" --strategy "$STRATEGY" --json > "$work/tune.json"
  tune_seconds=$(python3 -c "import time,sys; print(round(time.time() - float(sys.argv[1]), 1))" "$start")
  python3 - "$work/tune.json" "$work/best.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
task = result["tasks"][0]
if "best_trace" not in task:
    sys.exit(f"{task['task']}: no valid kernel after {task['trials']} trials")
json.dump(task["best_trace"], open(sys.argv[2], "w"))
PY
  ours=() theirs=()
  for ((p = 0; p < PAIRS; ++p)); do
    a=$(taskset -c "$cpus" "$TIRTUNE" time --workload "$spec" --trace "$work/best.json" \
        --target "$target" --json)
    b=$(OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=true taskset -c "$cpus" "${baseline[@]}")
    ours+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["gflops"])' "$a")")
    theirs+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["gflops"])' "$b")")
  done
  python3 - "$spec" "$TRIALS" "$tune_seconds" "${ours[*]}" "${theirs[*]}" "$work/tune.json" <<'PY'
import json, statistics, sys
spec, trials, tune_seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ours = [float(x) for x in sys.argv[4].split()]
theirs = [float(x) for x in sys.argv[5].split()]
task = json.load(open(sys.argv[6]))["tasks"][0]
print(json.dumps({"workload": spec, "trials": trials, "trials_run": task["trials"],
                  "statuses": task["statuses"], "tune_seconds": tune_seconds,
                  "tirtune_gflops": round(statistics.median(ours), 1),
                  "onednn_gflops": round(statistics.median(theirs), 1),
                  "ratio": round(statistics.median([a / b for a, b in zip(ours, theirs)]), 3)}))
PY
done
