#!/usr/bin/env bash
# Times the best kernel stored in DB for each workload (`tirtune time` with the record's trace:
# verified, default timer) against oneDNN in its own process, alternating PAIRS times on THREADS
# pinned CPUs, and prints one JSON line per workload with both speeds (medians), the median of the
# pairs' ratios and each pair's ratio (on a noisy machine the two medians' quotient and the median
# ratio can differ; the spread of the pairs says by how much to trust either).
# Workloads: every one bench_dnnl has a baseline for (`bench_dnnl --list`: gemm, conv2d, ...).
# Usage: DB=tuning.db bench/best_vs_onednn.sh SPEC [SPEC...]
set -euo pipefail
BUILD_DIR="${BUILD_DIR:-build/release}"
PAIRS="${PAIRS:-3}" THREADS="${THREADS:-2}"
DB="${DB:?set DB to the tuning database}"
TIRTUNE="$BUILD_DIR/src/tirtune"
cpus="0-$((THREADS - 1))"
target="llvm -num-cores=$THREADS"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gflops() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])["gflops"])' "$1"; }

for spec in "$@"; do
  baseline=("$BUILD_DIR/bench/bench_dnnl" "$spec")
  "$TIRTUNE" db best --db "$DB" --workload "$spec" --target "$target" --json > "$work/best.json"
  python3 - "$work/best.json" "$work/trace.json" "$spec" <<'PY'
import json, sys
groups = json.load(open(sys.argv[1]))
if not groups or not groups[0]["records"]:
    sys.exit(f"{sys.argv[3]}: no valid record in the database")
json.dump(groups[0]["records"][0]["trace"], open(sys.argv[2], "w"))
PY
  ours=() theirs=()
  for ((p = 0; p < PAIRS; ++p)); do
    ours+=("$(gflops "$(taskset -c "$cpus" "$TIRTUNE" time --workload "$spec" \
      --trace "$work/trace.json" --target "$target" --json)")")
    theirs+=("$(gflops "$(OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=true taskset -c "$cpus" \
      "${baseline[@]}")")")
  done
  python3 - "$spec" "${ours[*]}" "${theirs[*]}" <<'PY'
import json, statistics, sys
ours = [float(x) for x in sys.argv[2].split()]
theirs = [float(x) for x in sys.argv[3].split()]
ratios = [a / b for a, b in zip(ours, theirs)]
print(json.dumps({"workload": sys.argv[1], "tirtune_gflops": round(statistics.median(ours), 1),
                  "onednn_gflops": round(statistics.median(theirs), 1),
                  "ratio": round(statistics.median(ratios), 3),
                  "pair_ratios": [round(r, 3) for r in ratios]}))
PY
done
