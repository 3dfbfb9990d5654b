#!/usr/bin/env bash
# The test command: configure, build and run the whole GoogleTest suite through ctest.
# GPU tests run when a CUDA device is present and are reported as skipped (with the reason)
# when not. Environment: BUILD_DIR (default build), CUDA_ARCH (default 90), DEVICE_CODE (sass or
# ptx; default: sass where a GPU is found, ptx where none is: no kernel runs there, and ptxas is
# skipped, docs/ci.md; CMakeLists.txt, DECODE_BENCH_PTX_ONLY).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_deps.sh

build_dir=${BUILD_DIR:-build}
jobs=$(nproc)
device_code=${DEVICE_CODE:-}
if [ -z "$device_code" ]; then
  if grep -q '^GPU' <<<"$(nvidia-smi -L 2>/dev/null)" || [ -e /dev/nvidia0 ]; then device_code=sass; else device_code=ptx; fi
fi
case "$device_code" in
  sass) ptx_only=OFF ;;
  ptx) ptx_only=ON; echo "== no GPU found: device code compiled to PTX only (DEVICE_CODE=sass to build SASS)" ;;
  *) echo "DEVICE_CODE must be sass or ptx, not '$device_code'" >&2; exit 2 ;;
esac
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
  -DDECODE_BENCH_PTX_ONLY="$ptx_only"
cmake --build "$build_dir" -j"$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" --timeout 600
