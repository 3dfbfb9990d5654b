#!/usr/bin/env bash
# The main job: build if needed, then run the default preset (embedded in the binary) on GPU 0.
# Writes results/<gpu>-<timestamp>.json and its figures. Extra arguments go to `decode-bench sweep`.
set -euo pipefail
cd "$(dirname "$0")/.."
DB_NEED_MATPLOTLIB=${DB_NEED_MATPLOTLIB:-1} source scripts/ensure_deps.sh

build_dir=${BUILD_DIR:-build}
if [ ! -x "$build_dir/sweeps/decode-bench" ] || [ -n "$(find kernels pools harness sweeps configs CMakeLists.txt -newer "$build_dir/sweeps/decode-bench" -print -quit)" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDECODE_BENCH_BUILD_TESTS=OFF
  cmake --build "$build_dir" -j"$(nproc)" --target decode-bench
fi
exec "$build_dir/sweeps/decode-bench" sweep --output-dir results "$@"
