#!/usr/bin/env bash
# On a GPU machine: build the tiling probe and the decode tests, check the decode kernels against
# the float64 reference, run the probe sections given as arguments (default: merge tiling2m) and
# count the default kernel's traffic with ncu at 2M tokens FP16. Output in OUT_DIR (default
# results/probe-check). The variant tables of commits bd98083 and e3c7a78 in docs/history/kernel-notes.md
# come from this.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT_DIR:-results/probe-check}
mkdir -p "$out"
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDECODE_BENCH_PTX_ONLY=OFF > "$out/configure.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target decode-probe decode_tests > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
"$build/tests/decode_tests" --gtest_filter='DecodeKernelsGpu.*' > "$out/decode-tests.log" 2>&1
grep -E "^\[  (PASSED|FAILED|SKIPPED)" "$out/decode-tests.log"
if command -v ncu > /dev/null; then
  ncu --clock-control none -k regex:flash_decode_split --launch-count 1 --kill on \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,l1tex__t_bytes.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct \
    "$build/kernels/tuning/decode-probe" ncu > "$out/ncu-traffic.txt" 2>&1
  grep -E "flash_decode_split|__" "$out/ncu-traffic.txt"
fi
sections=("${@:-merge tiling2m}")
# shellcheck disable=SC2068
"$build/kernels/tuning/decode-probe" ${sections[@]} > "$out/probe.txt" 2>&1
grep -v "^read" "$out/probe.txt"
