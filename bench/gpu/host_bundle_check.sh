#!/usr/bin/env bash
# On a GPU host: unpack the GPU-host bundle (scripts/gpu_host_bundle.sh) and run tirtune itself
# there: build and time the hand-written GPU traces (each measured by a tirtune-runner worker on
# the GPU, verified against this host's CPU reference first), a CPU time for comparison. Results under $OUT (or /tmp/tirtune-host-check).
# Usage: bench/gpu/host_bundle_check.sh [BUNDLE.tar.xz]
set -u
bundle=${1:-build/tirtune-gpu-host.tar.xz}
results=${OUT:-/tmp/tirtune-host-check}
mkdir -p "$results"
t=$(mktemp -d)
tar xJf "$bundle" -C "$t"
T="$t/tirtune"
# Where this host keeps NVRTC and nvJitLink (the launcher looks in the usual places).
find / -xdev \( -name 'libnvrtc.so*' -o -name 'libnvJitLink.so*' \) 2>/dev/null | head -8
status=0
run() {
  echo "\$ tirtune $*"
  "$T" "$@" || status=1
}
cuda='cuda -arch=sm_90'
run --json time --workload gemm:1024,1024,1024 --target "$cuda" \
  --trace bench/gpu/traces/gemm_4096.json > "$results/time_gemm1024.json"
cat "$results/time_gemm1024.json"
run time --workload gemm:2048,2048,2048 --target "$cuda" --trace bench/gpu/traces/gemm_4096.json
run time --workload conv2d:1,56,56,64,64,3,1,1 --target "$cuda" \
  --trace bench/gpu/traces/conv2d_56x56x64.json
run time --workload softmax:4096,1024 --target "$cuda" --trace bench/gpu/traces/softmax_4096x1024.json
run time --workload softmax:4096,1024 --target "$cuda" \
  --trace bench/gpu/traces/softmax_cross_4096x1024.json
run time --workload global_avg_pool2d:32,7,7,2048 --target "$cuda" \
  --trace bench/gpu/traces/global_avg_pool2d_32x7x7x2048.json
# 64 KiB of shared memory: dynamic shared memory, opted into at launch.
run time --workload gemm:2048,2048,2048 --target "$cuda" \
  --trace bench/gpu/traces/gemm_4096_dynamic_shared.json
# The same kernel built twice: nvJitLink must not take the second from the driver's cache.
run build --workload gemm:1024,1024,1024 --target "$cuda" --trace bench/gpu/traces/gemm_4096.json \
  -o "$t/again.cubin"
# A K the trace's k tile (32) does not divide: refused, or guarded and verified, never wrong.
run time --workload gemm:1024,1024,1000 --target "$cuda" --trace bench/gpu/traces/gemm_4096.json
run time --workload gemm:256,256,256 --target "llvm -num-cores=2"
rm -rf "$t"
exit $status
