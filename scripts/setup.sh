#!/usr/bin/env bash
# Installs every Debian package tirtune needs to build, test and benchmark. Idempotent: packages
# already present are skipped, and nothing is installed from outside Debian's archive.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git clang-format
  llvm-19-dev libzstd-dev
  libxgboost-dev xgboost
  libtbb-dev
  libsqlite3-dev sqlite3
  googletest libgtest-dev libgmock-dev
  nlohmann-json3-dev libfmt-dev libspdlog-dev libcli11-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libdnnl-dev
  redis-server libhiredis-dev libsodium-dev  # device pools: the broker (tests start their own)
  postgresql libpq-dev                       # the shared database (tests start their own)
  python3-onnx python3-numpy python3-venv  # scripts/gen_demo_model.py; bench's virtualenv
  python3-torch python3-torchvision        # scripts/torchvision_check.py (a CI subset), model exports
)
# Optional: headless Chromium for scripts/check_report.sh (rendering an HTML report); nothing
# builds or tests with it.
if [ "${TIRTUNE_WITH_CHROMIUM:-0}" = 1 ]; then
  PACKAGES+=(chromium)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
