#!/usr/bin/env bash
# tirtune vs TVM MetaSchedule at the same trial budget, side by side on the same pinned CPUs.
#
# For each workload: tunes it with `tirtune tune` (TRIALS trials, target "llvm -num-cores=THREADS",
# a fresh database), then with TVM MetaSchedule (`tune_tir`, max_trials_global = TRIALS, target
# {"kind": "llvm", "mcpu": <TVM's host CPU>, "num-cores": THREADS}, TVM_NUM_THREADS=THREADS) on
# the same operator written in TVM TE (bench/metaschedule_tune.py; checked against numpy), then
# times both best kernels, each in its own process, alternating PAIRS times: tirtune's with
# `tirtune time --trace` (verified, 5 repeats of >= 50 ms, median), TVM's with time_evaluator
# (5 repeats of >= 50 ms, median). Prints one JSON line per workload; ratio is the median of the
# per-pair ratios tirtune speed / MetaSchedule speed (> 1: tirtune is faster).
#
# TVM comes from PyPI into a virtualenv this script creates (VENV, default .bench-venv/).
#
# Usage: TRIALS=1000 bench/vs_metaschedule.sh [WORKLOAD...]
#   WORKLOADS  space-separated list, used when no argument is given (default: gemm 1024^3,
#              conv2d:1,14,14,256,256,3,1,1 and conv2d:1,56,56,64,64,1,1,0)
#   TRIALS (1000)  THREADS (2)  PAIRS (3)  BUILD_DIR (build/release)  VENV (.bench-venv)
#   MCPU       -mcpu for TVM (default: its LLVM's host CPU name)
#   MS_TIMEOUT seconds per MetaSchedule candidate build and run (30, TVM's default)
#   FLUSH_CACHE=1  flush caches between timing repeats, on both sides
#   WORK_DIR   keep databases, MetaSchedule logs and the TVM library there (default: temporary)
#   TVM_PIP    pip requirements of the TVM side (default below: apache-tvm 0.27 + extras)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build/release}"
TRIALS="${TRIALS:-1000}" THREADS="${THREADS:-2}" PAIRS="${PAIRS:-3}"
VENV="${VENV:-.bench-venv}" MCPU="${MCPU:-}" MS_TIMEOUT="${MS_TIMEOUT:-30}"
FLUSH_CACHE="${FLUSH_CACHE:-0}"
WORKLOADS="${WORKLOADS:-gemm:1024,1024,1024 conv2d:1,14,14,256,256,3,1,1 conv2d:1,56,56,64,64,1,1,0}"
# apache-tvm 0.27.0.post1 only asks for apache-tvm-ffi>=0.1.14.post0, but with 0.1.15.post2 every
# JSON serialization (tvm.ir.save_json, so MetaSchedule's database) segfaults in ToJSONGraph.
TVM_PIP="${TVM_PIP:-apache-tvm[meta-schedule,popen-pool]==0.27.0.post1 apache-tvm-ffi==0.1.14.post1 numpy}"
TIRTUNE="$BUILD_DIR/src/tirtune"
cpus="0-$((THREADS - 1))"
target="llvm -num-cores=$THREADS"

die() { echo "vs_metaschedule.sh: $*" >&2; exit 1; }
log() { echo "vs_metaschedule.sh: $*" >&2; }
now() { date +%s.%N; }

[[ -x "$TIRTUNE" ]] || die "$TIRTUNE not found: build tirtune first (BUILD_DIR=$BUILD_DIR)"
command -v c++ > /dev/null || command -v g++ > /dev/null ||
  die "TVM links its kernels with the system C++ compiler: install g++"

if [[ -n "${WORK_DIR:-}" ]]; then
  work="$WORK_DIR"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

# --- the TVM side: a virtualenv with apache-tvm from PyPI -----------------------------------------
py="$VENV/bin/python"
# Imports MetaSchedule and xgboost, and serializes one object (what segfaults on a bad tvm-ffi).
tvm_check='import tvm, xgboost, numpy; from tvm.s_tir import meta_schedule;
tvm.ir.save_json(tvm.tirx.const(1, "int32")); print(tvm.__version__)'
if ! tvm_version="$("$py" -c "$tvm_check" 2> /dev/null)"; then
  log "installing TVM into $VENV: $TVM_PIP"
  start=$(now)
  [[ -x "$py" ]] || python3 -m venv "$VENV" ||
    die "cannot create the virtualenv $VENV (python3 -m venv; on Debian: apt-get install python3-venv)"
  # shellcheck disable=SC2086 # TVM_PIP is a list of requirements
  "$VENV/bin/pip" install --quiet --disable-pip-version-check $TVM_PIP >&2 ||
    die "cannot install TVM from PyPI ($TVM_PIP) into $VENV"
  log "installed in $(python3 -c "print(round($(now) - $start))") s"
  tvm_version="$("$py" -c "$tvm_check")" ||
    die "TVM was installed into $VENV but cannot be imported (see the error above)"
fi
log "TVM $tvm_version from $VENV"
[[ "$tvm_version" == 0.27* ]] || log "warning: TVM $tvm_version, not the 0.27 this script was written for"

ms_py=("$py" bench/metaschedule_tune.py)
tt_flush=() ms_flush=()
if [[ "$FLUSH_CACHE" == 1 ]]; then tt_flush=(--flush-cache) ms_flush=(--flush-cache); fi
if [[ $# -eq 0 ]]; then read -r -a specs <<< "$WORKLOADS"; else specs=("$@"); fi

# Check every workload before tuning any: tirtune knows it, and the TE definition matches it.
for spec in "${specs[@]}"; do
  "$TIRTUNE" workload print "$spec" --json > "$work/workload.json" ||
    die "$spec: not a tirtune workload (tirtune workload list)"
  "${ms_py[@]}" check --workload "$spec" --tirtune-json "$work/workload.json" > /dev/null ||
    die "$spec: no matching TVM definition in bench/metaschedule_tune.py"
done

for spec in "${specs[@]}"; do
  dir="$work/${spec//[^A-Za-z0-9_.-]/_}"
  rm -rf "$dir" && mkdir -p "$dir"

  log "$spec: tirtune tune, $TRIALS trials"
  start=$(now)
  taskset -c "$cpus" "$TIRTUNE" tune --workload "$spec" --trials "$TRIALS" --db "$dir/tirtune.db" \
    --target "$target" --json > "$dir/tirtune_tune.json" 2> "$dir/tirtune_tune.log" ||
    die "$spec: tirtune tune failed (log: $dir/tirtune_tune.log)"
  tt_seconds=$(python3 -c "print($(now) - $start)")
  python3 - "$dir/tirtune_tune.json" "$dir/trace.json" "$spec" <<'PY'
import json, sys
task = json.load(open(sys.argv[1]))["tasks"][0]
if "best_trace" not in task:
    sys.exit(f"{sys.argv[3]}: tirtune found no valid kernel ({task['statuses']})")
json.dump(task["best_trace"], open(sys.argv[2], "w"))
PY

  log "$spec: MetaSchedule tune_tir, $TRIALS trials"
  mcpu_arg=()
  [[ -z "$MCPU" ]] || mcpu_arg=(--mcpu "$MCPU")
  TVM_NUM_THREADS=$THREADS taskset -c "$cpus" "${ms_py[@]}" tune --workload "$spec" \
    --trials "$TRIALS" --threads "$THREADS" --work-dir "$dir/metaschedule" \
    --timeout "$MS_TIMEOUT" "${mcpu_arg[@]}" > "$dir/ms_tune.json" 2> "$dir/ms_tune.log" ||
    die "$spec: MetaSchedule tuning failed: $(tail -n 3 "$dir/ms_tune.log")"

  log "$spec: timing both best kernels, $PAIRS pair(s)"
  : > "$dir/tt_time.jsonl"
  : > "$dir/ms_time.jsonl"
  for ((p = 0; p < PAIRS; ++p)); do
    taskset -c "$cpus" "$TIRTUNE" time --workload "$spec" --trace "$dir/trace.json" \
      --target "$target" "${tt_flush[@]}" --json | python3 -c \
      'import json,sys; print(json.dumps(json.load(sys.stdin)))' >> "$dir/tt_time.jsonl"
    TVM_NUM_THREADS=$THREADS taskset -c "$cpus" "${ms_py[@]}" time --workload "$spec" \
      --work-dir "$dir/metaschedule" "${ms_flush[@]}" >> "$dir/ms_time.jsonl"
  done

  python3 - "$spec" "$TRIALS" "$THREADS" "$tt_seconds" "$tvm_version" "$dir" <<'PY'
import json, statistics, sys
spec, trials, threads, tt_seconds, tvm_version, d = sys.argv[1:]
tune = json.load(open(f"{d}/tirtune_tune.json"))
task = tune["tasks"][0]
ms_tune = json.load(open(f"{d}/ms_tune.json"))
tt = [json.loads(line) for line in open(f"{d}/tt_time.jsonl")]
ms = [json.loads(line) for line in open(f"{d}/ms_time.jsonl")]
tt_s = [t["median_seconds"] for t in tt]
ms_s = [m["median_seconds"] for m in ms]
flops = task["flops"]
med = statistics.median
print(json.dumps({
    "workload": spec, "trials": int(trials), "threads": int(threads), "pairs": len(tt_s),
    "tirtune": {"seconds_tuning": round(float(tt_seconds), 1), "best_ms": round(med(tt_s) * 1e3, 4),
                "gflops": round(flops / med(tt_s) / 1e9, 1), "trials": task["trials"],
                "statuses": task["statuses"],
                "tuning_best_ms": round(task["best_seconds"] * 1e3, 4), "target": tune["target"]},
    "metaschedule": {"seconds_tuning": ms_tune["seconds_tuning"], "best_ms": round(med(ms_s) * 1e3, 4),
                     "gflops": round(flops / med(ms_s) / 1e9, 1),
                     "records": ms_tune["records"], "valid_records": ms_tune["valid_records"],
                     "tuning_best_ms": ms_tune["tuning_best_ms"], "target": ms_tune["target"]},
    "ratio": round(med([m / t for t, m in zip(tt_s, ms_s)]), 3),
    "tvm_version": tvm_version}))
PY
done
