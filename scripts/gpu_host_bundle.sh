#!/usr/bin/env bash
# Packs tirtune for a GPU host that has the NVIDIA driver and CUDA (NVRTC, nvJitLink) but none of
# our build dependencies (no LLVM, XGBoost, TBB, SQLite, ...): tirtune, tirtune-runner,
# tirtune-gpu-runner and tirtune-agent built with LLVM linked statically (-DTIRTUNE_STATIC_LLVM=ON, build/gpu-host),
# the shared libraries they need beside them (not the C and C++ runtimes, which every host has),
# and a launcher that points the loader at them and at the host's NVRTC. Writes
# build/tirtune-gpu-host.tar.xz (or $1) and refuses to exceed 60 MiB.
#
# On the GPU host:  mkdir t && tar xJf tirtune-gpu-host.tar.xz -C t && t/tirtune time ...
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/tirtune-gpu-host.tar.xz}
BUILD_DIR="${BUILD_DIR:-build/gpu-host}"
bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIRTUNE_STATIC_LLVM=ON \
  -DTIRTUNE_BUILD_TESTS=OFF -DTIRTUNE_BUILD_BENCH=OFF > /dev/null
cmake --build "$BUILD_DIR" --target tirtune tirtune-runner tirtune-gpu-runner tirtune-agent

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$BUILD_DIR/src/tirtune" "$BUILD_DIR/measure/tirtune-runner" \
   "$BUILD_DIR/measure/tirtune-gpu-runner" "$BUILD_DIR/measure/tirtune-agent" "$stage/bin/"
# WITH_REDIS=1: Debian's redis-server too, to try a device pool on a GPU host that has no broker
# (bench/gpu/pool_check.sh).
if [ "${WITH_REDIS:-0}" = 1 ]; then cp -L "$(command -v redis-server)" "$stage/bin/redis-server"; fi
strip "$stage/bin/"*
# Every shared library the programs load, except the C/C++ runtime and the loader.
for program in "$stage/bin/"*; do ldd "$program"; done | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cat > "$stage/tirtune" <<'EOF'
#!/bin/sh
# tirtune with the libraries packed beside it; NVRTC, nvJitLink, cuBLASLt and cuDNN (whose
# libcudnn.so.9 loads its parts by name) from the host's CUDA (/usr/local/cuda, or the nvidia-* Python wheels that PyTorch installs).
here=$(cd "$(dirname "$0")" && pwd)
cuda_libs=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
           $(ls -d /usr/local/lib/python3*/dist-packages/nvidia/*/lib \
                   /usr/lib/python3/dist-packages/nvidia/*/lib \
                   "$HOME"/.local/lib/python3*/site-packages/nvidia/*/lib \
                   /opt/conda/lib/python3*/site-packages/nvidia/*/lib \
                   /usr/local/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null); do
  for lib in libnvrtc libnvJitLink libcublasLt libcudnn; do
    if ls "$dir/$lib".so* > /dev/null 2>&1; then
      cuda_libs="$cuda_libs:$dir"
      break
    fi
  done
done
LD_LIBRARY_PATH="$here/lib$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  exec "$here/bin/$(basename "$0")" "$@"
EOF
chmod +x "$stage/tirtune"
for program in tirtune-agent $([ "${WITH_REDIS:-0}" = 1 ] && echo redis-server); do
  cp "$stage/tirtune" "$stage/$program"
done
# One LZMA dictionary larger than the three programs together: their statically linked LLVM is
# largely the same bytes, which a default dictionary (8 MiB) cannot see (55 MiB -> 35 MiB: the
# bundle and the working tree must fit a device call's 64 MiB together).
tar cf - -C "$stage" . | xz -T1 -9e --lzma2=preset=9e,dict=256MiB > "$out"
size=$(stat -c %s "$out")
echo "wrote $out: $((size / 1048576)) MiB ($(du -sh "$stage" | cut -f1) unpacked)"
if [ "$size" -gt $((60 * 1048576)) ]; then
  echo "error: the bundle is over 60 MiB" >&2
  exit 1
fi
