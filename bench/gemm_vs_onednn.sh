#!/usr/bin/env bash
# GEMM M N K: tirtune's hand-written schedule against oneDNN's dnnl_sgemm, each in its own process,
# alternating PAIRS times with THREADS threads (pinned to the first THREADS CPUs); prints every
# run and the median of the per-pair ratios (tirtune / oneDNN throughput).
set -euo pipefail
BUILD_DIR="${BUILD_DIR:-build/release}"
M="${1:-1024}" N="${2:-1024}" K="${3:-1024}"
PAIRS="${PAIRS:-5}" THREADS="${THREADS:-2}"
cpus="0-$((THREADS - 1))"
ours=() theirs=()
for ((p = 0; p < PAIRS; ++p)); do
  a=$(taskset -c "$cpus" "$BUILD_DIR/bench/bench_gemm_schedule" "$M" "$N" "$K" \
      "llvm -num-cores=$THREADS")
  b=$(OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=true taskset -c "$cpus" \
      "$BUILD_DIR/bench/bench_dnnl" "gemm:$M,$N,$K")
  echo "$a"
  echo "$b"
  ours+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["gflops"])' "$a")")
  theirs+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["gflops"])' "$b")")
done
python3 - "${ours[*]}" "${theirs[*]}" <<'PY'
import statistics, sys
ours = [float(x) for x in sys.argv[1].split()]
theirs = [float(x) for x in sys.argv[2].split()]
ratios = [a / b for a, b in zip(ours, theirs)]
print(f"tirtune {statistics.median(ours):.1f} GFLOP/s, oneDNN {statistics.median(theirs):.1f} "
      f"GFLOP/s, median ratio {statistics.median(ratios):.3f} over {len(ratios)} pairs")
PY
