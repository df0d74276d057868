#!/usr/bin/env bash
# Fuzzes one reader of outside data with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh TARGET [SECONDS]     SECONDS default 60; TARGET one of
#     parser    IR text (tests/fuzz/parser_fuzzer.cc)
#     trace     trace JSON replayed on a GEMM (trace_fuzzer.cc)
#     jsonl     a JSON-lines database (jsonl_fuzzer.cc)
#     sqlite    the columns of a workload and a record row of a SQLite database (sqlite_fuzzer.cc)
#     onnx      an ONNX model (onnx_fuzzer.cc)
#     manifest  a compiled model's manifest.json and graph.json (manifest_fuzzer.cc)
#     npy       a .npy file (npy_fuzzer.cc)
#   scripts/fuzz.sh all SECONDS          every target in turn, SECONDS each
#
# Builds tests/fuzz/TARGET_fuzzer.cc with the sources it needs straight from clang++ (the fuzzers
# are not part of the CMake build; there, tests/fuzz/replay_main.cc replays each target's committed
# corpus as a CTest test), seeds a corpus from the repository (tests/fuzz/corpus/TARGET; the
# parser also takes tests/data/parse_errors and parse_valid, trace tests/data/traces, onnx the
# small node-test models of Debian's libonnx-testdata when installed), and runs for SECONDS. The
# corpus and any crash artifacts stay in build-fuzz/TARGET/ (override the root with
# FUZZ_OUT=DIR), so later runs continue where this one stopped. The last lines of the run
# (executions, coverage, crashes) are kept in build-fuzz/TARGET/last-run.txt.
set -euo pipefail

target="${1:?usage: scripts/fuzz.sh parser|trace|jsonl|sqlite|onnx|manifest|npy|all [SECONDS]}"
seconds="${2:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$target" == all ]]; then
  for t in parser trace jsonl sqlite onnx manifest npy; do "$0" "$t" "$seconds"; done
  exit 0
fi
out="${FUZZ_OUT:-$root/build-fuzz}/$target"

libs=()
core=("$root"/src/ir/*.cc "$root"/src/support/*.cc "$root"/src/arith/*.cc)
schedule=("$root"/src/schedule/*.cc "$root"/src/schedule/primitive/*.cc)
seeds=("$root"/tests/fuzz/corpus/"$target"/*)
extra=(-max_len=16384)
case "$target" in
  parser)
    sources=("$root"/src/ir/*.cc "$root"/src/support/*.cc)
    seeds=("$root"/tests/data/parse_errors/*.tir "$root"/tests/data/parse_valid/*.tir)
    extra=(-dict="$root/tests/fuzz/parser.dict" -max_len=8192)
    ;;
  trace)
    sources=("${core[@]}" "${schedule[@]}")
    seeds+=("$root"/tests/data/traces/*.json)
    extra=(-dict="$root/tests/fuzz/trace.dict" -max_len=16384)
    ;;
  jsonl|sqlite)
    sources=("${core[@]}" "${schedule[@]}" "$root"/database/*.cc)
    libs=(-lsqlite3 -lpq)
    ;;
  onnx)
    sources=("${core[@]}" "$root"/src/te/*.cc "$root"/src/te/*/*.cc "$root"/src/interp/*.cc
             "$root"/src/graph/*.cc "$root"/src/graph/*/*.cc)
    libs=(-lonnx -lonnx_proto -lprotobuf)
    # Small models of ONNX's node tests (Debian's libonnx-testdata), read at run time only.
    while IFS= read -r model; do seeds+=("$model"); done < <(
      find /usr/share/libonnx-testdata/data/node -name model.onnx -size -4k 2>/dev/null)
    extra=(-max_len=65536)
    ;;
  manifest)
    sources=("$root"/src/support/*.cc "$root"/src/schedule/json_text.cc "$root"/src/model/artifact.cc)
    ;;
  npy)
    sources=("$root"/src/support/*.cc "$root"/src/model/npy.cc)
    extra=(-max_len=4096)
    ;;
  *)
    echo "unknown target '$target': parser, trace, jsonl, sqlite, onnx, manifest, npy or all" >&2
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
# The objects are shared by every target (same flags for all), in build-fuzz/obj.
objdir="$(dirname "$out")/obj"
mkdir -p "$out/corpus" "$out/artifacts" "$objdir"
binary="$out/${target}_fuzzer"
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$root/include" -I/usr/include/postgresql
       -DONNX_ML=1 -DONNX_NAMESPACE=onnx)
objects=()
for src in "${sources[@]}"; do
  obj="$objdir/$(echo "${src#"$root"/}" | tr '/' '_').o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" ]] || find "$root/include" "$(dirname "$src")" -name '*.h' -newer "$obj" | grep -q .; then
    echo "compiling ${src#"$root"/}"
    clang++ "${flags[@]}" -c "$src" -o "$obj"
  fi
  objects+=("$obj")
done
clang++ -fsanitize=fuzzer,address,undefined "${objects[@]}" -lfmt -lsodium "${libs[@]}" -o "$binary"

# Step 3. Seeds (files of the same name from different places get distinct names).
for seed in "${seeds[@]}"; do
  [[ -f "$seed" ]] || continue
  name="$(basename "$seed")"
  [[ "$name" == model.onnx ]] && name="$(basename "$(dirname "$seed")").onnx"
  cp "$seed" "$out/corpus/$name"
done

# Step 4. Fuzz (a finding ends the run with a non-zero status, after the summary is kept).
status=0
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" "$binary" "$out/corpus" "${extra[@]}" \
  -max_total_time="$seconds" \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/" 2>&1 | tee "$out/last-run.log" || status=$?
tail -n 12 "$out/last-run.log" > "$out/last-run.txt"
exit "$status"
