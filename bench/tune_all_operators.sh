#!/usr/bin/env bash
# Tunes every benchmark shape of every operator of ../shared/BENCHMARKS.md (the shapes each
# workload lists in `tirtune workload list --json`) for TRIALS trials (default 200) into DB, one
# `tirtune tune` run per shape, and prints one JSON line per shape: the statuses of its trials and
# the best verified kernel's GFLOP/s (an error line when no candidate verified). ONLY=NAME[,NAME]
# restricts the operators; SHAPES="NAME:ARGS ..." gives the exact list instead.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build/release}"
TRIALS="${TRIALS:-200}" THREADS="${THREADS:-2}" DB="${DB:-bench-operators.db}"
TIRTUNE="$BUILD_DIR/src/tirtune"
shapes() {
  if [ -n "${SHAPES:-}" ]; then
    tr ' ' '\n' <<< "$SHAPES" | grep -v '^$'
    return
  fi
  "$TIRTUNE" workload list --json | python3 -c '
import json, os, sys
only = set(filter(None, os.environ.get("ONLY", "").split(",")))
for w in json.load(sys.stdin):
    if only and w["name"] not in only:
        continue
    for shape in w["benchmark_shapes"]:
        print(w["name"] + ":" + ",".join(str(x) for x in shape))
'
}
shapes | while read -r spec; do
  if out=$(taskset -c "0-$((THREADS - 1))" "$TIRTUNE" tune --workload "$spec" --trials "$TRIALS" \
      --db "$DB" --target "llvm -num-cores=$THREADS" --json 2> /dev/null); then
    python3 -c '
import json, sys
t = json.loads(sys.argv[1])["tasks"][0]
print(json.dumps({"workload": t["task"], "trials": t["trials"], "statuses": t["statuses"],
                  "best_gflops": round(t.get("best_gflops", 0), 1),
                  "verified": "best_seconds" in t}))' "$out"
  else
    echo "{\"workload\": \"$spec\", \"error\": \"tirtune tune failed\"}"
  fi
done
