#!/usr/bin/env bash
# On a GPU host: a kernel that faults poisons only its worker (bench/gpu/fault_check.py), with
# the GPU-host bundle's tirtune (to compile the GEMM cubin here) and tirtune-runner.
# Usage: bench/gpu/fault_check.sh [BUNDLE.tar.xz]
set -u
bundle=${1:-build/tirtune-gpu-host.tar.xz}
t=$(mktemp -d)
tar xJf "$bundle" -C "$t"
"$t/tirtune" --json build --workload gemm:1024,1024,1024 --target "cuda -arch=sm_90" \
  --trace bench/gpu/traces/gemm_4096.json -o "$t/gemm.cubin" > "$t/gemm.json" || exit 1
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib" exec "%s/bin/tirtune-runner" "$@"\n' "$t" "$t" \
  > "$t/runner"
chmod +x "$t/runner"
python3 "$(dirname "$0")/fault_check.py" "$t/runner" "$t/gemm.json"
status=$?
rm -rf "$t"
exit $status
