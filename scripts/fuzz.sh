#!/usr/bin/env bash
# Fuzzes one reader of outside data with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh TARGET [SECONDS]     TARGET: parser (IR text), trace (trace JSON) or
#                                        jsonl (a JSON-lines database); SECONDS default 60
#
# Builds tests/fuzz/TARGET_fuzzer.cc with the sources it needs straight from clang++ (the fuzzers
# are not part of the CMake build), seeds a corpus from the repository (tests/data/parse_errors
# and parse_valid for the parser; tests/fuzz/corpus/TARGET otherwise, and tests/data/traces for
# traces), and
# runs for SECONDS. The corpus and any crash artifacts stay in build-fuzz/TARGET/ (override the
# root with FUZZ_OUT=DIR), so later runs continue where this one stopped.
set -euo pipefail

target="${1:?usage: scripts/fuzz.sh parser|trace|jsonl [SECONDS]}"
seconds="${2:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${FUZZ_OUT:-$root/build-fuzz}/$target"

libs=()
case "$target" in
  parser)
    sources=("$root"/src/ir/*.cc "$root"/src/support/*.cc)
    seeds=("$root"/tests/data/parse_errors/*.tir "$root"/tests/data/parse_valid/*.tir)
    extra=(-dict="$root/tests/fuzz/parser.dict" -max_len=8192)
    ;;
  trace)
    sources=("$root"/src/ir/*.cc "$root"/src/support/*.cc "$root"/src/arith/*.cc
             "$root"/src/schedule/*.cc "$root"/src/schedule/primitive/*.cc)
    seeds=("$root"/tests/fuzz/corpus/trace/* "$root"/tests/data/traces/*.json)
    extra=(-dict="$root/tests/fuzz/trace.dict" -max_len=16384)
    ;;
  jsonl)
    sources=("$root"/src/ir/*.cc "$root"/src/support/*.cc "$root"/src/arith/*.cc
             "$root"/src/schedule/*.cc "$root"/src/schedule/primitive/*.cc "$root"/database/*.cc)
    seeds=("$root"/tests/fuzz/corpus/jsonl/*)
    extra=(-max_len=16384)
    libs=(-lsqlite3 -lpq)
    ;;
  *)
    echo "unknown target '$target': parser, trace or jsonl" >&2
    exit 2
    ;;
esac
sources+=("$root/tests/fuzz/${target}_fuzzer.cc")

# Step 1. The toolchain: clang and the libFuzzer/sanitizer runtimes.
if ! dpkg -s clang libclang-rt-14-dev >/dev/null 2>&1; then
  sudo=""
  if [[ "$(id -u)" != 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update
  $sudo apt-get install -y clang libclang-rt-14-dev
fi

# Step 2. The fuzzer binary, rebuilt only when a source is newer than it (objects are kept, so a
# change recompiles only its file).
mkdir -p "$out/corpus" "$out/artifacts" "$out/obj"
binary="$out/${target}_fuzzer"
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$root/include" -I/usr/include/postgresql)
objects=()
for src in "${sources[@]}"; do
  obj="$out/obj/$(echo "${src#"$root"/}" | tr '/' '_').o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" ]] || find "$root/include" "$(dirname "$src")" -name '*.h' -newer "$obj" | grep -q .; then
    echo "compiling ${src#"$root"/}"
    clang++ "${flags[@]}" -c "$src" -o "$obj"
  fi
  objects+=("$obj")
done
clang++ -fsanitize=fuzzer,address,undefined "${objects[@]}" -lfmt -lsodium "${libs[@]}" -o "$binary"

# Step 3. Seeds.
cp "${seeds[@]}" "$out/corpus/" 2>/dev/null || true

# Step 4. Fuzz.
"$binary" "$out/corpus" "${extra[@]}" \
  -max_total_time="$seconds" \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/"
