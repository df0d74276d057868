#!/usr/bin/env bash
# Installs the dependencies, builds tirtune with its tests, and runs every test. This is the
# command CI runs (.ci/run); it works on a fresh Debian 12 machine.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${BUILD_DIR:-build/release}"
JOBS="${JOBS:-$(nproc)}"

bash scripts/setup.sh

werror=OFF
if [ "${CI:-}" = "true" ]; then werror=ON; fi
# Tests on explicitly: scripts/demo.sh shares the build directory and turns them off.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIRTUNE_WERROR="$werror" \
  -DTIRTUNE_BUILD_TESTS=ON
cmake --build "$BUILD_DIR" -j "$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 600
