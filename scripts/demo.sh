#!/usr/bin/env bash
# The main job, end to end on a fresh Debian 12 machine: install the dependencies, build
# tirtune, print a workload of the operator library as text IR, check the printed file parses back
# to the same function, run it in the reference interpreter, then apply a schedule trace to a
# 512^3 GEMM, compile it with LLVM, verify it and time it on 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${BUILD_DIR:-build/release}"
SPEC="${1:-gemm:64,64,64}"

bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIRTUNE_BUILD_TESTS=OFF
cmake --build "$BUILD_DIR" -j "$(nproc)" --target tirtune

TIRTUNE="$BUILD_DIR/src/tirtune"
OUT="$(mktemp -d)"
"$TIRTUNE" workload print "$SPEC" | tee "$OUT/workload.tir"
"$TIRTUNE" ir check "$OUT/workload.tir" > /dev/null
echo "ir check: $OUT/workload.tir parses and verifies"
"$TIRTUNE" workload eval "$SPEC"
"$TIRTUNE" time --workload gemm:512,512,512 --trace bench/traces/gemm_tiled.json \
  --target "llvm -num-cores=2"
