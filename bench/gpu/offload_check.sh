#!/usr/bin/env bash
# On a GPU host, from the repository root: the cuBLAS and cuDNN library backends checked for
# real. Unpacks the GPU-host bundle (scripts/gpu_host_bundle.sh) and, for each workload, times its
# library call (a cuBLASLt product, a cuDNN convolution and its steps) as a library record's
# trace (`tirtune time --trace`: verified against the CPU's reference first, then timed with CUDA
# events after an L2 flush), then tunes the first workload briefly with `--offload measured` (the
# library's candidate measured in the first batch, the finalists re-timed at the end) to show
# the choice.
# Results under $OUT (or /tmp/tirtune-gpu-offload). MODEL_ONLY=1 runs the MODEL part alone.
# Usage: [MODEL=FILE.onnx] bench/gpu/offload_check.sh [BUNDLE.tar.xz] [WORKLOAD ...]
set -u
bundle=${1:-build/tirtune-gpu-host.tar.xz}
shift || true
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(dense:128,3072,768 gemm:1024,1024,1024
                                         batch_matmul:12,128,128,64 tbg:1,128,12,64
                                         conv2d:1,56,56,64,64,3,1,1 conv2d:1,14,14,256,256,3,1,1
                                         depthwise_conv2d:1,112,112,32,3,1,1
                                         cbr:1,28,28,128,128,3,1,1)
results=${OUT:-/tmp/tirtune-gpu-offload}
mkdir -p "$results"
t=$(mktemp -d)
tar xJf "$bundle" -C "$t"
T="$t/tirtune"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
cuda="cuda -arch=sm_${arch}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$results/host.txt"
status=0
[ "${MODEL_ONLY:-0}" = 1 ] && workloads=()
for w in "${workloads[@]}"; do
  name=${w//[:,]/_}
  case ${w%%:*} in  # the composite cuBLAS's patterns make of the workload
    gemm) composite=cublas.matmul ;;
    tbg) composite=cublas.batch_matmul_of_views ;;
    conv[123]d) composite=cudnn.${w%%:*} ;;
    depthwise_conv2d|cbr) composite=cudnn.conv2d ;;
    *) composite=cublas.${w%%:*} ;;
  esac
  printf '{"format":"tirtune-trace","insts":[{"attrs":{"composite":"%s"},"inputs":[],"kind":"Offload","outputs":[],"v":1}],"version":1}\n' \
    "$composite" > "$results/library_$name.json"
  echo "\$ tirtune time --target '$cuda' --workload $w --trace library_$name.json"
  if "$T" --json time --target "$cuda" --workload "$w" --trace "$results/library_$name.json" \
      > "$results/time_$name.json" 2> "$results/time_$name.err"; then
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]}: {r['median_seconds']*1e3:.4f} ms, {r['gflops']:.1f} GFLOP/s\")" \
      "$results/time_$name.json" "$w"
  else
    status=1
    cat "$results/time_$name.err"
  fi
done
if [ ${#workloads[@]} -gt 0 ]; then
  w=${workloads[0]}
  echo "\$ tirtune tune --target '$cuda' --workload $w --trials 64 (offload measured)"
  timeout -s TERM -k 60 300 "$T" --json tune --target "$cuda" --workload "$w" --trials 64 \
    --db "$results/offload.db" --log "$results/tune.log" > "$results/tune.json" || status=1
  grep -iE "library|cublas|re-timed|chose|keeps" "$results/tune.log" | tail -8
fi
# MODEL=FILE.onnx: the model compiled with every function a library can run offloaded (cuBLAS's
# products, cuDNN's convolutions), then run on the GPU against the interpreter (run --verify).
if [ -n "${MODEL:-}" ]; then
  echo "\$ tirtune compile --offload always --model $MODEL; tirtune run --verify --bench"
  if "$T" --json compile --offload always --model "$MODEL" -o "$results/model" \
      --target "$cuda" > "$results/model_compile.json" 2> "$results/model_compile.err"; then
    grep -o '"library": "[^"]*"' "$results/model_compile.json" | sed 's/ for %.*//' | sort |
      uniq -c | sort -rn | head
    "$T" run "$results/model" --verify --bench > "$results/model_run.txt" 2>&1 || status=1
    tail -5 "$results/model_run.txt"
  else
    status=1
    tail -5 "$results/model_compile.err"
  fi
fi
exit $status
