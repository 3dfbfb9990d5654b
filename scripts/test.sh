#!/usr/bin/env bash
# The test command: configure, build and run the whole GoogleTest suite through ctest.
# GPU tests run when a CUDA device is present and are reported as skipped (with the reason)
# when not. Environment: BUILD_DIR (default build), CUDA_ARCH (default 90).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_deps.sh

build_dir=${BUILD_DIR:-build}
jobs=$(nproc)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}"
cmake --build "$build_dir" -j"$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" --timeout 600
