#!/usr/bin/env bash
# On a GPU machine: build, run the GPU tests (plus compute-sanitizer memcheck and racecheck on the
# decode kernels), measure ceilings, run a preset, cross-check CUPTI counters against ncu, and
# draw the figures. Everything lands in OUT_DIR (default results/gpu-check). Usage:
#   bash scripts/gpu_check.sh [PRESET ...]        (default: quick)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT_DIR:-results/gpu-check}
mkdir -p "$out"
presets=("${@:-quick}")
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" > "$out/configure.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
bin=$build/sweeps/decode-bench

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  ctest --test-dir "$build" -j4 --output-on-failure --timeout 900 > "$out/ctest.log" 2>&1
  grep -E "tests passed|tests failed" "$out/ctest.log"
  grep -E "^\s+[0-9]+ - .*(Failed|Not Run)" "$out/ctest.log" | head -20
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool "$build/tests/decode_tests" \
      --gtest_filter='DecodeKernelsGpu.BlockCounts:DecodeKernelsGpu.BatchWith*:DecodeKernelsGpu.PageSizes*:DecodeKernelsGpu.HeadsPerBlock' \
      > "$out/sanitizer-$tool.log" 2>&1
    echo "compute-sanitizer $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -1)"
  done
fi

"$bin" ceilings --output "$out/ceilings.json" | tail -12
for preset in "${presets[@]}"; do
  "$bin" sweep --preset "$preset" --output "$out/$preset.json" 2> "$out/$preset.log" > "$out/$preset.table.txt"
  tail -1 "$out/$preset.table.txt"  # the results file; the lines above it are the end-of-sweep table
  tail -4 "$out/$preset.log"
done

# CUPTI vs ncu on three known kernels (docs/counters.md).
"$bin" profile-selftest > "$out/selftest.log" 2>&1; tail -12 "$out/selftest.log"
metrics=$(grep -E '^metrics: ' "$out/selftest.log" | head -1 | sed 's/^metrics: //' | tr -d ' ')
if [ -n "$metrics" ] && command -v ncu > /dev/null; then
  ncu --clock-control none --metrics "$metrics" --csv "$bin" profile-selftest --no-counters > "$out/ncu.csv" 2> "$out/ncu.err"
  echo "ncu: $(grep -c selftest "$out/ncu.csv") metric rows in $out/ncu.csv"
  python3 scripts/ncu_crosscheck.py "$out/selftest.log" "$out/ncu.csv" > "$out/ncu_crosscheck.txt"
  tail -1 "$out/ncu_crosscheck.txt"
fi
PY=$(command -v python3)
for preset in "${presets[@]}"; do
  "$bin" plot "$out/$preset.json" --out "$out/figures-$preset" > "$out/plot-$preset.log" 2>&1 || tail -5 "$out/plot-$preset.log"
done
