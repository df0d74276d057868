#!/usr/bin/env bash
# nvptx_vs_nvrtc.sh: compare two CUDA code-generation paths on the hand-written GPU schedules
# in bench/gpu/traces/ (gemm_4096, conv2d_56x56x64, softmax_4096x1024,
# global_avg_pool2d_32x7x7x2048), for sm_90. No GPU is needed; nothing is run on a device.
#
#   (a) nvrtc: the project's path. tirtune's generated CUDA C -> NVRTC (the options tirtune
#       uses: --gpu-architecture=compute_90 -default-device --std=c++17) -> PTX -> ptxas.
#       tirtune itself assembles with nvJitLink, whose ptxas runs in relocatable mode (as
#       `ptxas -c`); its registers are the "tirtune" column.
#   (b) llvm: the same CUDA C -> clang 14 as front end only (-O3 -Xclang -disable-llvm-passes,
#       --cuda-gpu-arch=sm_86, the newest it knows, with a small prelude instead of the CUDA
#       headers) -> llvm-link 19 with libdevice (internalized) -> opt 19 -O3 -> llc 19
#       -march=nvptx64 -mcpu=sm_90 -mattr=+ptx80 -> PTX -> ptxas. clang 14's IR says sm_86 in its
#       function attributes; NVPTX takes the processor from opt's/llc's -mcpu (the PTX is the same
#       byte for byte with those attributes stripped). So this compares back ends (NVVM vs LLVM 19
#       NVPTX, each with its middle end) on the same kernels.
#
# Both PTX files go through the same ptxas (CUDA's, -arch=sm_90 -v), once in whole-program mode
# (the default) and once with -c (relocatable, the mode of tirtune's nvJitLink); register counts
# differ between the two modes, so both are shown.
#
# Reported per kernel: registers, spill store/load bytes, shared bytes, fma.rn.f32 count in the
# PTX (a check that both paths did the same arithmetic). Per workload: compile wall times in ms,
# the minimum over REPS runs (default 3): NVRTC alone (in-process through ctypes, like tirtune),
# tirtune's own compile_ms (NVRTC + nvJitLink), ptxas on each PTX, and the LLVM stages (clang 14
# front end, llvm-link, opt, llc). LLVM stage times are process wall times and
# so include each tool's start-up; NVRTC's time does not.
#
# Usage: bench/gpu/nvptx_vs_nvrtc.sh TIRTUNE_BINARY OUT_DIR
#   e.g. bench/gpu/nvptx_vs_nvrtc.sh build/release/src/tirtune /tmp/nvptx-vs-nvrtc
# Environment (defaults in brackets): REPS [3], CUDA [/usr/local/cuda], CLANG [/usr/bin/clang-14],
#   LLVM_BIN [/usr/lib/llvm-19/bin], FE_ARCH [sm_86], PTX_ATTR [+ptx80], PYTHON [python3].
# Runs everything one after another (one core).
set -euo pipefail
shopt -s inherit_errexit

if [[ $# -ne 2 ]]; then
  echo "usage: $0 TIRTUNE_BINARY OUT_DIR" >&2
  exit 2
fi
TIRTUNE=$(realpath "$1")
OUT=$2
REPS=${REPS:-3}
CUDA=${CUDA:-/usr/local/cuda}
CLANG=${CLANG:-/usr/bin/clang-14}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}
FE_ARCH=${FE_ARCH:-sm_86}
PTX_ATTR=${PTX_ATTR:-+ptx80}
PYTHON=${PYTHON:-python3}
PTXAS=$CUDA/bin/ptxas
LIBDEVICE=$CUDA/nvvm/libdevice/libdevice.10.bc
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TRACES=$ROOT/bench/gpu/traces
TARGET="cuda -arch=sm_90"

# trace name, workload
CASES=(
  "gemm_4096 gemm:4096,4096,4096"
  "conv2d_56x56x64 conv2d:1,56,56,64,64,3,1,1"
  "softmax_4096x1024 softmax:4096,1024"
  "global_avg_pool2d_32x7x7x2048 global_avg_pool2d:32,7,7,2048"
)

for tool in "$TIRTUNE" "$CLANG" "$LLVM_BIN/llvm-link" "$LLVM_BIN/llvm-dis" "$LLVM_BIN/llvm-as" \
            "$LLVM_BIN/opt" "$LLVM_BIN/llc" "$PTXAS"; do
  [[ -x $tool ]] || { echo "missing tool: $tool" >&2; exit 1; }
done
[[ -f $LIBDEVICE ]] || { echo "missing libdevice: $LIBDEVICE" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

# What the generated CUDA C needs from the CUDA headers, for clang without them (-nocudainc).
cat > "$OUT/prelude.h" <<'EOF'
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#include <__clang_cuda_builtin_vars.h>
extern "C" __device__ float __nv_expf(float);
extern "C" __device__ float __nv_fmaxf(float, float);
extern "C" __device__ float __nv_fminf(float, float);
static __device__ __forceinline__ float expf(float x) { return __nv_expf(x); }
static __device__ __forceinline__ float max(float a, float b) { return __nv_fmaxf(a, b); }
static __device__ __forceinline__ float min(float a, float b) { return __nv_fminf(a, b); }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ long long max(long long a, long long b) { return a > b ? a : b; }
static __device__ __forceinline__ long long min(long long a, long long b) { return a < b ? a : b; }
EOF

# NVRTC alone, with tirtune's options: prints the minimum ms over REPS compiles in one process.
cat > "$OUT/nvrtc_time.py" <<'EOF'
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
src = open(sys.argv[2], "rb").read()
reps = int(sys.argv[3])
opts = [b"--gpu-architecture=compute_90", b"-default-device", b"--std=c++17"]
arr = (ctypes.c_char_p * len(opts))(*opts)
best = None
for _ in range(reps):
    p = ctypes.c_void_p()
    t = time.perf_counter()
    assert lib.nvrtcCreateProgram(ctypes.byref(p), src, b"k.cu", 0, None, None) == 0
    r = lib.nvrtcCompileProgram(p, len(opts), arr)
    ms = (time.perf_counter() - t) * 1e3
    lib.nvrtcDestroyProgram(ctypes.byref(p))
    if r != 0:
        sys.exit(f"nvrtcCompileProgram failed ({r})")
    best = ms if best is None else min(best, ms)
print(f"{best:.1f}")
EOF
NVRTC_LIB=$CUDA/lib64/libnvrtc.so
[[ -f $NVRTC_LIB ]] || NVRTC_LIB=$(ls "$CUDA"/lib64/libnvrtc.so.* | head -n 1)

# min_ms CMD...: runs CMD REPS times (output to /dev/null) and prints the fastest wall time in ms.
min_ms() {
  local best="" t0 t1 ms i
  for ((i = 0; i < REPS; i++)); do
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1
    t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000 ))  # microseconds
    if [[ -z $best || $ms -lt $best ]]; then best=$ms; fi
  done
  printf '%d.%d' $((best / 1000)) $(( (best % 1000) / 100 ))
}

# ptxas -v report -> "kernel regs spill_st spill_ld smem" per entry function.
ptxas_table() {
  awk '
    /Compiling entry function/ { match($0, /function .[^'"'"']*/); name = substr($0, RSTART + 10, RLENGTH - 10); st = 0; ld = 0 }
    /spill stores/ && name != "" { for (i = 1; i <= NF; i++) { if ($i == "stores,") st = $(i - 3); if ($i == "loads") ld = $(i - 3) } }
    /Used [0-9]+ registers/ && name != "" {
      regs = 0; smem = 0
      for (i = 1; i <= NF; i++) { if ($i ~ /^registers/) regs = $(i - 1); if ($i == "smem") smem = $(i - 2) }
      print name, regs, st, ld, smem; name = ""
    }' "$1"
}

# fma.rn.f32 per .entry of a PTX file -> "kernel count".
fma_counts() {
  awk '/\.entry/ { match($0, /\.entry[ \t]+[A-Za-z0-9_]+/); k = substr($0, RSTART, RLENGTH); sub(/\.entry[ \t]+/, "", k); n[k] = 0 }
       /fma\.rn\.f32/ && k != "" { n[k]++ }
       END { for (k in n) print k, n[k] }' "$1"
}

RES=$OUT/resources.txt
TIMES=$OUT/times.txt
: > "$RES"
: > "$TIMES"

for c in "${CASES[@]}"; do
  read -r name workload <<< "$c"
  d=$OUT/$name
  mkdir -p "$d"
  echo "== $name ($workload)" >&2
  tt=("$TIRTUNE" --json build --target "$TARGET" --workload "$workload" --trace "$TRACES/$name.json")

  # (a) tirtune: CUDA C, NVRTC's PTX, and compile_ms (NVRTC + nvJitLink), min over REPS runs.
  "${tt[@]}" --emit cuda -o "$d/$name.cu" > "$d/tirtune_cuda.json"
  tir_ms=""
  for ((i = 0; i < REPS; i++)); do
    "${tt[@]}" --emit ptx -o "$d/nvrtc.ptx" > "$d/tirtune_ptx.json"
    ms=$("$PYTHON" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["compile_ms"])' "$d/tirtune_ptx.json")
    if [[ -z $tir_ms ]] || awk -v a="$ms" -v b="$tir_ms" 'BEGIN { exit !(a < b) }'; then tir_ms=$ms; fi
  done
  "$PYTHON" -c '
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    print(k["name"], k.get("registers", "?"), k.get("spill_bytes", "?"))' "$d/tirtune_ptx.json" > "$d/tirtune_regs.txt"
  nvrtc_ms=$(LD_LIBRARY_PATH=$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
             "$PYTHON" "$OUT/nvrtc_time.py" "$NVRTC_LIB" "$d/$name.cu" "$REPS")

  # (b) clang 14 front end -> LLVM 19 (llvm-link + libdevice, opt -O3, llc) -> PTX.
  fe=("$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch="$FE_ARCH" -nocudainc -nocudalib
      --no-cuda-version-check -w -std=c++17 -O3 -Xclang -disable-llvm-passes
      -include "$OUT/prelude.h" -emit-llvm -c "$d/$name.cu" -o "$d/fe.bc")
  linkc=("$LLVM_BIN/llvm-link" --only-needed --internalize "$d/fe.bc" "$LIBDEVICE" -o "$d/linked.bc")
  optc=("$LLVM_BIN/opt" -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -mattr="$PTX_ATTR"
        "$d/linked.bc" -o "$d/opt.bc")
  llcc=("$LLVM_BIN/llc" -O3 -march=nvptx64 -mcpu=sm_90 -mattr="$PTX_ATTR" "$d/opt.bc" -o "$d/llvm.ptx")
  "${fe[@]}"; "${linkc[@]}"; "${optc[@]}"; "${llcc[@]}"  # once with messages shown, then timed
  fe_ms=$(min_ms "${fe[@]}")
  link_ms=$(min_ms "${linkc[@]}")
  opt_ms=$(min_ms "${optc[@]}")
  llc_ms=$(min_ms "${llcc[@]}")

  # ptxas on both PTX files: whole-program (timed) and -c (relocatable, as nvJitLink).
  for path in nvrtc llvm; do
    "$PTXAS" -arch=sm_90 -v "$d/$path.ptx" -o "$d/$path.cubin" > "$d/$path.ptxas.txt" 2>&1
    "$PTXAS" -arch=sm_90 -v -c "$d/$path.ptx" -o "$d/$path.c.cubin" > "$d/$path.ptxas_c.txt" 2>&1
    ptxas_table "$d/$path.ptxas.txt" | sort > "$d/$path.res"
    ptxas_table "$d/$path.ptxas_c.txt" | sort > "$d/$path.res_c"
    fma_counts "$d/$path.ptx" | sort > "$d/$path.fma"
  done
  ptxas_nvrtc_ms=$(min_ms "$PTXAS" -arch=sm_90 -v "$d/nvrtc.ptx" -o "$d/nvrtc.cubin")
  ptxas_llvm_ms=$(min_ms "$PTXAS" -arch=sm_90 -v "$d/llvm.ptx" -o "$d/llvm.cubin")

  for path in nvrtc llvm; do
    while read -r k regs st ld smem; do
      read -r _ regs_c st_c ld_c _ < <(grep "^$k " "$d/$path.res_c")
      fma=$(awk -v k="$k" '$1 == k { print $2 }' "$d/$path.fma")
      tir="-"
      if [[ $path == nvrtc ]]; then
        tir=$(awk -v k="$k" '$1 == k { print $2 "/" $3 }' "$d/tirtune_regs.txt")
      fi
      echo "$k $path $regs $st/$ld $smem $regs_c $st_c/$ld_c $tir ${fma:-0}" >> "$RES"
    done < "$d/$path.res"
  done
  sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }'; }
  llc_ptxas=$(sum "$llc_ms" "$ptxas_llvm_ms")
  llvm_total=$(sum "$(sum "$fe_ms" "$link_ms")" "$(sum "$opt_ms" "$llc_ptxas")")
  nvrtc_total=$(sum "$nvrtc_ms" "$ptxas_nvrtc_ms")
  echo "$name $nvrtc_ms $ptxas_nvrtc_ms $nvrtc_total $tir_ms $fe_ms $link_ms $opt_ms $llc_ms $ptxas_llvm_ms $llc_ptxas $llvm_total" >> "$TIMES"
done

echo "# nvptx_vs_nvrtc.sh, $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), $(nproc) cores, REPS=$REPS"
echo "# tirtune: $("$TIRTUNE" --version 2>/dev/null | head -n 1)"
echo "# (a) nvrtc: NVRTC $("$PTXAS" --version | grep -o 'release [0-9.]*, V[0-9.]*') (compute_90 -default-device --std=c++17), NVVM back end"
echo "# (b) llvm:  front end $("$CLANG" --version | head -n 1) (--cuda-gpu-arch=$FE_ARCH, no LLVM passes),"
echo "#            back end LLVM $("$LLVM_BIN/llc" --version | grep -o 'LLVM version [0-9.]*' | cut -d' ' -f3) opt -O3 + llc -O3 -mcpu=sm_90 -mattr=$PTX_ATTR, libdevice linked"
echo "# both: ptxas $("$PTXAS" --version | grep -o 'V[0-9][0-9.]*') -arch=sm_90 -v; 'ptxas -c' = relocatable mode, as tirtune's nvJitLink"
echo
echo "Per kernel (spills: store/load bytes; tirtune = registers/spill bytes tirtune --json reports;"
echo "fma = fma.rn.f32 in the PTX)"
{
  echo "kernel path regs spills smem regs(-c) spills(-c) tirtune fma"
  cat "$RES"
} | column -t
echo
echo "Compile wall time per workload, ms (min of $REPS; nvrtc = NVRTC alone, source->PTX, in process;"
echo "tirtune = its compile_ms, NVRTC + nvJitLink; fe = clang 14; link = llvm-link with libdevice)"
{
  echo "workload nvrtc ptxas(nvrtc) nvrtc+ptxas tirtune fe link opt llc ptxas(llvm) llc+ptxas llvm_total"
  cat "$TIMES"
} | column -t
