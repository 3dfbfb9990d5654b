#!/usr/bin/env bash
# The main job: build decode-bench if needed, run the default preset (embedded in the binary) on
# GPU 0, print the results table, write results/<gpu>-<UTC time>.json, then draw its figures when a
# python3 with matplotlib is here (otherwise it prints the one command that draws them later).
# Extra arguments go to `decode-bench sweep`. Exit status: the sweep's.
# Environment: BUILD_DIR (default build), CUDA_ARCH (default 90).
set -euo pipefail
cd "$(dirname "$0")/.."
DB_NEED_MATPLOTLIB=0 source scripts/ensure_deps.sh  # matplotlib is for figures only
source scripts/figures.sh

build_dir=${BUILD_DIR:-build}
bin=$build_dir/sweeps/decode-bench
# A build left PTX-only by scripts/test.sh on a machine without a GPU is rebuilt with SASS: the
# sweep times kernels, and JIT-compiled code is not what a build for the GPU runs.
if [ ! -x "$bin" ] || [ -n "$(find kernels pools harness sweeps configs cmake CMakeLists.txt -newer "$bin" -print -quit)" ] ||
   grep -qs '^DECODE_BENCH_PTX_ONLY:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
    -DDECODE_BENCH_BUILD_TESTS=OFF -DDECODE_BENCH_PTX_ONLY=OFF
  cmake --build "$build_dir" -j"$(nproc)" --target decode-bench
fi

# The sweep prints the results file's path as its last line of standard output.
stdout_copy=$(mktemp)
trap 'rm -f "$stdout_copy"' EXIT
set +e
"$bin" sweep --output-dir results "$@" | tee "$stdout_copy"
status=${PIPESTATUS[0]}
set -e
results=$(tail -n 1 "$stdout_copy")
if [[ "$results" == *.json ]] && [ -f "$results" ]; then
  db_draw_figures "$bin" "$results"
fi
exit "$status"
