#!/usr/bin/env bash
# tirtune's compiled model vs onnxruntime: accuracy on the same seeded inputs, then latency in
# alternating pinned processes (bench/vs_onnxruntime.py says how). Installs onnxruntime and numpy
# from PyPI into a virtualenv (VENV, default .bench-venv/, shared with bench/vs_metaschedule.sh)
# when they are missing.
#
# Usage: bench/vs_onnxruntime.sh MODEL.onnx [--db DB] [--pairs 3] [--threads 2] [--json-out F] ...
#   (every option of bench/vs_onnxruntime.py; --help lists them)
#   BUILD_DIR (build/release)  VENV (.bench-venv)
#   ORT_PIP    pip requirements of the onnxruntime side (default: onnxruntime 1.32.0 + numpy)
# Exit status: that of bench/vs_onnxruntime.py (0, or 1: an output differs or a step failed);
# 3 when onnxruntime is missing and cannot be installed (no network, no python3-venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-build/release}"
VENV="${VENV:-.bench-venv}"
ORT_PIP="${ORT_PIP:-onnxruntime==1.32.0 numpy}"
# Relative to the repository, as in the other bench scripts; the model path stays the caller's.
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$root/$BUILD_DIR"
[[ "$VENV" == /* ]] || VENV="$root/$VENV"

die() { echo "vs_onnxruntime.sh: $*" >&2; exit 1; }
no_ort() { echo "vs_onnxruntime.sh: $*" >&2; exit 3; }
log() { echo "vs_onnxruntime.sh: $*" >&2; }

py="$VENV/bin/python"
ort_check='import numpy, onnxruntime; print(onnxruntime.__version__)'
if ! ort_version="$("$py" -c "$ort_check" 2> /dev/null)"; then
  log "installing onnxruntime into $VENV: $ORT_PIP"
  [[ -x "$py" ]] || python3 -m venv "$VENV" ||
    no_ort "cannot create the virtualenv $VENV (python3 -m venv; Debian: python3-venv)"
  # shellcheck disable=SC2086 # ORT_PIP is a list of requirements
  "$VENV/bin/pip" install --quiet --disable-pip-version-check $ORT_PIP >&2 ||
    no_ort "cannot install onnxruntime from PyPI ($ORT_PIP) into $VENV"
  ort_version="$("$py" -c "$ort_check")" ||
    no_ort "onnxruntime was installed into $VENV but cannot be imported (see the error above)"
fi
log "onnxruntime $ort_version from $VENV"

exec "$py" "$root/bench/vs_onnxruntime.py" --tirtune "$BUILD_DIR/src/tirtune" "$@"
