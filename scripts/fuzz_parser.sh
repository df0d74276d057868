#!/usr/bin/env bash
# Fuzzes the IR text parser with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz_parser.sh [SECONDS]     (default 60)
#
# Builds tests/fuzz/parser_fuzzer.cc with the ir and support sources straight from clang++ (the
# fuzzer is not part of the CMake build), seeds a corpus from tests/data/parse_errors and
# tests/data/parse_valid, and runs for SECONDS. The corpus and any crash artifacts stay in
# build-fuzz/ (override with FUZZ_OUT=DIR), so later runs continue where this one stopped.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${FUZZ_OUT:-$root/build-fuzz}"

# Step 1. The toolchain: clang and the libFuzzer/sanitizer runtimes.
if ! dpkg -s clang libclang-rt-14-dev >/dev/null 2>&1; then
  sudo=""
  if [[ "$(id -u)" != 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update
  $sudo apt-get install -y clang libclang-rt-14-dev
fi

# Step 2. The fuzzer binary, rebuilt only when a source is newer than it.
mkdir -p "$out/corpus" "$out/artifacts"
binary="$out/parser_fuzzer"
sources=("$root"/src/ir/*.cc "$root"/src/support/*.cc "$root/tests/fuzz/parser_fuzzer.cc")
rebuild=0
if [[ ! -x "$binary" ]]; then rebuild=1; fi
for src in "${sources[@]}" "$root"/src/ir/*.h "$root"/include/tirtune/*/*.h "${BASH_SOURCE[0]}"; do
  if [[ "$src" -nt "$binary" ]]; then rebuild=1; fi
done
if [[ "$rebuild" == 1 ]]; then
  echo "building $binary"
  clang++ -std=c++20 -O1 -g -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root/include" "${sources[@]}" -lfmt -o "$binary"
fi

# Step 3. Seeds: every broken input of the error corpus and the valid functions.
cp "$root"/tests/data/parse_errors/*.tir "$root"/tests/data/parse_valid/*.tir "$out/corpus/"

# Step 4. Fuzz. Inputs past 8 KiB add little but slow every execution down.
"$binary" "$out/corpus" \
  -dict="$root/tests/fuzz/parser.dict" \
  -max_total_time="$seconds" \
  -max_len=8192 \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/"
