#!/usr/bin/env bash
# bench/suite.py and bench/suite_table.py end to end on one small workload, with the tirtune
# binary given: a run writes a tirtune-bench/1 file with a verified result, timed in three times
# the pairs asked for (a kernel under 1 ms); --resume after the entry is lost keeps the database's
# trials (tuning nothing new) and records the resumption; a --resume with another budget is
# refused and leaves the file as it was; the table shows the row and which record was kept (a
# tuned kernel or oneDNN's call).
# Usage: suite_script_test.sh TIRTUNE_BIN
set -euo pipefail
tirtune="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
suite() {
  python3 "$root/bench/suite.py" --tirtune "$tirtune" --baselines '' --threads 1 --pairs 1 \
    --only '^softmax:256,' --db "$work/db" -o "$work/r.json" "$@"
}
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" \
  "$work/r.json" "$1"; }

suite --trials 3 2> "$work/run.log" || { cat "$work/run.log"; fail "the first run failed"; }
[ "$(field 'r["schema"]')" = tirtune-bench/1 ] || fail "schema"
[ "$(field 'len(r["workloads"])')" = 1 ] || fail "one workload expected"
[ "$(field 'r["workloads"][0]["tirtune"]["verified"]')" = True ] || fail "not verified"
[ "$(field 'r["workloads"][0]["tirtune"]["trials"]')" = 3 ] || fail "3 trials expected"
# A kernel under 1 ms (--short-ms) gets three times the pairs (--short-pairs-factor).
[ "$(field 'len(r["workloads"][0]["tirtune"]["samples_s"])')" = 3 ] || fail "3 pairs expected"
kept="$(field 'r["workloads"][0]["tirtune"]["kernel"]')"
[ "$kept" = tuned ] || [ "$kept" = dnnl.softmax ] || fail "kept record: $kept"

# Lose the entry (a run stopped while timing it), then resume: nothing is tuned again.
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r['workloads']=[]; \
json.dump(r, open(sys.argv[1], 'w'))" "$work/r.json"
suite --trials 3 --resume 2> "$work/resume.log" || { cat "$work/resume.log"; fail "resume"; }
grep -q "0 workload(s) done, 1 to go" "$work/resume.log" || fail "resume did not say what is left"
[ "$(field 'len(r["workloads"])')" = 1 ] || fail "the resumed run lost the workload"
[ "$(field 'r["workloads"][0]["tirtune"]["trials"]')" = 3 ] || fail "resume tuned again"
[ "$(field 'len(r["resumed"])')" = 1 ] || fail "the resumption is not recorded"

# Another budget cannot continue this file, and the file stays as it was.
cp "$work/r.json" "$work/before.json"
if suite --trials 4 --resume 2> "$work/bad.log"; then fail "a resume with 4 trials ran"; fi
grep -q "was run with 3 trials per workload" "$work/bad.log" || fail "$(cat "$work/bad.log")"
cmp -s "$work/r.json" "$work/before.json" || fail "the refused resume changed the file"

python3 "$root/bench/suite_table.py" "$work/r.json" > "$work/table.md"
grep -q "softmax:256,256" "$work/table.md" || fail "the table has no softmax row"
grep -q "| $kept |" "$work/table.md" || fail "the table does not say which record was kept"
echo "suite_script_test: ok"
