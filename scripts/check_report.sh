#!/usr/bin/env bash
# Renders a `tirtune report` in headless Chromium: a screenshot to look at and the parsed DOM, and
# a failure on any page error Chromium reports (a check of what the unit tests cannot see). Not
# part of CI. Installs Debian's chromium when it is missing (scripts/setup.sh with
# TIRTUNE_WITH_CHROMIUM=1).
#
#   bash scripts/check_report.sh DB [RESULTS.json]
#
# Writes report.html, report.png and report.dom.html to OUT_DIR (default
# /tmp/tirtune-report-check), using TIRTUNE (default $BUILD_DIR/src/tirtune, BUILD_DIR=build).
set -euo pipefail
cd "$(dirname "$0")/.."

DB=${1:?usage: bash scripts/check_report.sh DB [RESULTS.json]}
BENCH=${2:-}
BUILD_DIR=${BUILD_DIR:-build}
TIRTUNE=${TIRTUNE:-$BUILD_DIR/src/tirtune}
OUT_DIR=${OUT_DIR:-/tmp/tirtune-report-check}

if ! command -v chromium > /dev/null; then
  TIRTUNE_WITH_CHROMIUM=1 bash scripts/setup.sh
fi
mkdir -p "$OUT_DIR"
args=(report --db "$DB" -o "$OUT_DIR/report.html")
if [ -n "$BENCH" ]; then args+=(--bench "$BENCH"); fi
"$TIRTUNE" "${args[@]}"

url="file://$(realpath "$OUT_DIR/report.html")"
flags=(--headless --no-sandbox --disable-gpu --window-size=1400,3000
       --enable-logging=stderr --v=0)
rm -f "$OUT_DIR/report.png"
chromium "${flags[@]}" --screenshot="$OUT_DIR/report.png" "$url" 2> "$OUT_DIR/screenshot.log"
chromium "${flags[@]}" --dump-dom "$url" > "$OUT_DIR/report.dom.html" 2> "$OUT_DIR/dom.log"

# Chromium logs plenty of harmless noise (D-Bus, GPU); these are the lines about the page itself.
page_errors='CONSOLE|Uncaught|net::ERR_|Failed to load|Refused to|Not allowed to load'
failed=0
for log in "$OUT_DIR/screenshot.log" "$OUT_DIR/dom.log"; do
  if grep -E "$page_errors" "$log"; then
    echo "check_report: page errors in $log" >&2
    failed=1
  fi
done
# Chromium does not log a blocked fetch of a file or URL; the page must not ask for any.
if grep -nE 'https?://|<script|src=|url\(' "$OUT_DIR/report.html" | head -3 | grep .; then
  echo "check_report: the report refers to something outside itself" >&2
  failed=1
fi
if [ ! -s "$OUT_DIR/report.png" ]; then
  echo "check_report: no screenshot (see $OUT_DIR/screenshot.log)" >&2
  failed=1
fi
svgs_written=$( (grep -o '<svg' "$OUT_DIR/report.html" || true) | wc -l)
svgs_parsed=$( (grep -o '<svg' "$OUT_DIR/report.dom.html" || true) | wc -l)
if [ "$svgs_written" -ne "$svgs_parsed" ]; then
  echo "check_report: $svgs_written charts written, $svgs_parsed in the DOM" >&2
  failed=1
fi
exit $failed
