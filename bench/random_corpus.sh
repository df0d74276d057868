#!/usr/bin/env bash
# Fills a database with random-search (ReplayTrace) records of many GEMM and convolution shapes:
# the training corpus of `bench_cost_model_heldout` that lets the cost model rank the candidates
# of a workload it has never seen (docs/BENCHMARKS.md, "Random-search records of other shapes in
# training"). Each workload gets TRIALS random candidates, measured and verified as tuning does;
# one that runs longer than TIMEOUT seconds stops after its current batch and keeps what it
# stored. Interrupted, the script goes on where it stopped (--resume counts what is stored).
#
#   [BUILD_DIR=build/release] [TRIALS=300] [TIMEOUT=300] [TARGET="llvm -num-cores=2"] \
#   [EXCLUDE="SPEC SPEC..."] \
#     bench/random_corpus.sh DB
#
# EXCLUDE leaves out the workloads whose spec contains one of its space-separated texts (specs hold
# commas), e.g. EXCLUDE="gemm:1024,1024,1024 conv2d:1,14,14,256,256,3,1,1" to keep workloads out
# of a corpus that `tirtune tune --pretrain all` learns from before tuning them (the held-out bench
# never trains on the held-out workload anyway). The list: every GEMM-like and convolution shape
# of the benchmark suite, then the ResNet-50 convolutions and a few GEMM/batch-matmul shapes the
# suite lacks, and more depthwise, transposed, capsule and conv-bias-BN-ReLU shapes (MobileNet and
# ResNet-like) so that each operator has relatives to learn from.
# About 1 minute per workload on 2 cores; the 2048³ GEMM and the 3×3 conv3d hit TIMEOUT.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: [TRIALS=300] [TIMEOUT=300] [TARGET=T] [EXCLUDE=\"SPEC SPEC...\"] $0 DB" >&2
  exit 2
fi
db=$1
tirtune=${BUILD_DIR:-build/release}/src/tirtune
trials=${TRIALS:-300}
timeout_s=${TIMEOUT:-300}
target=${TARGET:-llvm -num-cores=2}
if [[ ! -x $tirtune ]]; then
  echo "$0: $tirtune is not built (cmake --build ${BUILD_DIR:-build/release} --target tirtune)" >&2
  exit 1
fi
read -r -a exclude <<<"${EXCLUDE:-}"

# The benchmark shapes of the library's GEMM-like and convolution operators
# (`tirtune workload list --json`), then the extra shapes.
corpus_operators=gemm,batch_matmul,conv1d,conv2d,conv3d,depthwise_conv2d,conv2d_transpose,capsule_conv2d,cbr
# shellcheck disable=SC2054  # the commas are inside workload specs
extra=(
  conv2d:1,56,56,64,256,1,1,0 conv2d:1,56,56,256,64,1,1,0 conv2d:1,56,56,64,64,3,1,1
  conv2d:1,28,28,128,128,3,1,1 conv2d:1,28,28,512,128,1,1,0 conv2d:1,28,28,128,512,1,1,0
  conv2d:1,14,14,1024,256,1,1,0 conv2d:1,14,14,256,1024,1,1,0 conv2d:1,7,7,2048,512,1,1,0
  conv2d:1,7,7,512,2048,1,1,0
  gemm:256,1024,256 gemm:64,1024,1024 gemm:384,384,384 gemm:1024,256,512
  batch_matmul:12,128,128,64 batch_matmul:4,256,64,256
  depthwise_conv2d:1,56,56,128,3,1,1 depthwise_conv2d:1,56,56,128,3,2,1
  depthwise_conv2d:1,28,28,256,3,1,1 depthwise_conv2d:1,14,14,512,3,1,1
  depthwise_conv2d:1,56,56,144,3,1,1 depthwise_conv2d:1,28,28,192,3,1,1
  conv2d_transpose:1,8,8,256,128,4,2,1 conv2d_transpose:1,32,32,64,32,4,2,1
  conv2d_transpose:1,16,16,256,128,4,2,1 conv2d_transpose:1,4,4,256,128,4,2,1
  capsule_conv2d:1,16,16,16,16,3,1,1 capsule_conv2d:1,8,8,64,64,3,1,1
  cbr:1,28,28,128,128,3,1,1 cbr:1,14,14,256,256,3,1,1 cbr:1,56,56,64,64,3,1,1
)
mapfile -t workloads < <("$tirtune" workload list --json | OPS=$corpus_operators python3 -c '
import json, os, sys
ops = os.environ["OPS"].split(",")
for w in json.load(sys.stdin):
    if w["name"] in ops:
        for shape in w["benchmark_shapes"]:
            print(w["name"] + ":" + ",".join(str(x) for x in shape))
')
if [[ ${#workloads[@]} -eq 0 ]]; then
  echo "$0: '$tirtune workload list --json' gave no shapes" >&2
  exit 1
fi
workloads+=("${extra[@]}")

done_count=0
for w in "${workloads[@]}"; do
  skip=0
  for e in "${exclude[@]}"; do
    [[ -n $e && $w == *"$e"* ]] && skip=1
  done
  [[ $skip -eq 1 ]] && continue
  start=$(date +%s)
  # SIGINT: the tuner stores the batch in flight and stops; a timeout is not a failure.
  rc=0
  timeout -s INT "$timeout_s" "$tirtune" tune --workload "$w" --trials "$trials" --resume \
    --strategy replay --db "$db" --target "$target" --json >/dev/null || rc=$?
  if [[ $rc -ne 0 && $rc -ne 124 ]]; then
    echo "$0: $w: tirtune tune exited with $rc (see $db.log)" >&2
    exit "$rc"
  fi
  done_count=$((done_count + 1))
  note=""
  [[ $rc -eq 124 ]] && note=" (stopped at TIMEOUT)"
  echo "[$done_count] $w: $(($(date +%s) - start)) s$note" >&2
done
