#!/usr/bin/env bash
# The shapes whose extents have no good divisors (1023 = 3·11·31, 1000, 77, 197, 7×7 maps): each
# tuned with TRIALS trials (tuned kernels only, `--offload never`) and compared with oneDNN
# (bench/tune_vs_onednn.sh), after the CPU's peak measured in the same run (bench_peak_fma), so
# that every line also says which share of the peak each side reached.
# Usage: TRIALS=1000 DB=shapes.db bash bench/shapes_that_do_not_factor.sh [SPEC...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build/release}" THREADS="${THREADS:-2}"
export BUILD_DIR THREADS TRIALS="${TRIALS:-1000}" DB="${DB:-shapes.db}"
export TUNE_ARGS="${TUNE_ARGS:---offload never}"
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=(gemm:1023,1023,1023 gemm:1,1000,4096 gemm:77,3072,768 gemm:197,768,768
         conv2d:1,7,7,512,512,3,1,1)
fi
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
peak=$(taskset -c "0-$((THREADS - 1))" "$BUILD_DIR/bench/bench_peak_fma" --threads "$THREADS")
echo "peak: $peak"
bash bench/tune_vs_onednn.sh "${specs[@]}" | python3 -c '
import json, sys
peak = json.loads(sys.argv[1])["peak_gflops"]
for line in sys.stdin:
    row = json.loads(line)
    for side in ("tirtune", "onednn"):
        key = side + "_gflops"
        if key in row:
            row[side + "_pct_peak"] = round(100 * row[key] / peak, 1)
    print(json.dumps(row), flush=True)
' "$peak"
