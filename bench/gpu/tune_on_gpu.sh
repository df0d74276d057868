#!/usr/bin/env bash
# On a GPU host, from the repository root: unpack the GPU-host bundle (scripts/gpu_host_bundle.sh)
# and tune GPU kernels there with `tirtune tune --target cuda` (candidates built by the host's
# NVRTC, verified against the host CPU's reference and timed on the GPU by tirtune-runner
# workers), then time the best kernel of each task the way the final numbers are timed (L2
# flushed before every sample); vs_cublas.py times the vendor libraries on the same shapes.
# Each task's tuning stops after TUNE_SECONDS (SIGTERM: the batch in flight is committed) or its
# trials. Results under $OUT (or /tmp/tirtune-gpu-tune): a database, logs, JSON.
# RECORDS="WORKLOAD=TRACE ...": each schedule is first measured (`time --record`) into the
# database, so that a task with no records of its own starts from it, its tilings fitted
# (`tune --transfer`): e.g. GEMM 4096^3 from a GEMM 1024^3 found in an earlier run.
# DB_FROM=FILE.db.xz starts from an earlier run's database (with TUNE_ARGS=--resume its trials
# count against TRIALS), e.g. docs/results/gpu-2026-11-26-h200/run19-transfer-4096/gpu_tune.db.xz
# (GEMM 4096^3 after 512 trials, 1024^3 and 2048^3 records).
# PARALLEL=1 tunes every task at once, one process each (on a host with many cores: the builds
# and searches overlap, and the GPU workers take turns through the device lock), then times the
# bests one after the other.
# Usage: bench/gpu/tune_on_gpu.sh [BUNDLE.tar.xz] [TASK ...]   (TASK: WORKLOAD:TRIALS)
set -u
bundle=${1:-build/tirtune-gpu-host.tar.xz}
shift || true
tasks=("$@")
[ ${#tasks[@]} -gt 0 ] || tasks=("gemm:1024,1024,1024:1000")
results=${OUT:-/tmp/tirtune-gpu-tune}
seconds=${TUNE_SECONDS:-240}
mkdir -p "$results"
t=$(mktemp -d)
tar xJf "$bundle" -C "$t"
T="$t/tirtune"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$results/host.txt"
nproc | tee -a "$results/host.txt"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
cuda="cuda -arch=sm_${arch}"
status=0
if [ -n "${DB_FROM:-}" ]; then xz -dc "$DB_FROM" > "$results/gpu_tune.db"; fi
for record in ${RECORDS:-}; do
  echo "\$ tirtune time --target '$cuda' --workload ${record%%=*} --trace ${record#*=} --record gpu_tune.db"
  "$T" time --target "$cuda" --workload "${record%%=*}" --trace "${record#*=}" \
    --record "$results/gpu_tune.db" || status=1
done
tune() {  # WORKLOAD TRIALS NAME
  echo "\$ tirtune tune --target '$cuda' --workload $1 --trials $2 (at most ${seconds} s)"
  timeout -s TERM -k 90 "$seconds" "$T" --json tune --target "$cuda" --workload "$1" \
    --trials "$2" --db "$results/gpu_tune.db" --log "$results/tune_$3.log" ${TUNE_ARGS:-} \
    > "$results/tune_$3.json"
}
report() {  # WORKLOAD NAME: the run's summary, then its best kernel timed alone
  tail -5 "$results/tune_$2.log"
  python3 - "$results/tune_$2.json" "$results/best_$2.json" <<'PY' || return 1
import json, sys
run = json.load(open(sys.argv[1]))
task = run["tasks"][0]
print(f"{task['task']}: {task['trials']} trials, statuses {task['statuses']}, "
      f"stopped: {task['stopped']}, best {task.get('best_gflops', 0):.1f} GFLOP/s in tuning")
json.dump(task["best_trace"], open(sys.argv[2], "w"))
PY
  echo "\$ tirtune time --target '$cuda' --workload $1 --trace best_$2.json"
  "$T" --json time --target "$cuda" --workload "$1" --trace "$results/best_$2.json" \
    > "$results/time_$2.json" || return 1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(f\"{r['function']}: {r['median_seconds']*1e3:.4f} ms, {r['gflops']:.1f} GFLOP/s, kernels {r['kernels']}\")" \
    "$results/time_$2.json"
}
name() { echo "${1%:*}" | tr ':,' '__'; }
if [ "${PARALLEL:-0}" = 1 ]; then
  # Every task's tuning at once (the GPU workers take turns through the device lock), then
  # each best timed.
  pids=()
  for task in "${tasks[@]}"; do
    tune "${task%:*}" "${task##*:}" "$(name "$task")" & pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  for task in "${tasks[@]}"; do report "${task%:*}" "$(name "$task")" || status=1; done
else
  for task in "${tasks[@]}"; do
    tune "${task%:*}" "${task##*:}" "$(name "$task")" || status=1
    report "${task%:*}" "$(name "$task")" || status=1
  done
fi
rm -rf "$t"
exit $status
