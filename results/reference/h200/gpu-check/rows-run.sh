#!/usr/bin/env bash
# The warpgroup-MMA row kernels at the commit given as $1 on one GPU of compute capability 9.0, in
# one command where less device time is left than the whole suite needs: the whole build with
# FlashInfer's headers (scripts/gpu_run_prelude.sh), the 26 row tests (RowAttentionWgmmaGpu,
# RowAttentionStreamGpu, RowAttentionMqaGpu, DecodeVariantsWgmmaGpu, RowAttentionRaggedGpu; ctest
# -j6, tests.log), compute-sanitizer memcheck and racecheck on their four Small cases, then the
# models preset (models.json) while time is left ($2 s in all, default 340). Files go to
# results/reference/h200/gpu-check/rows-$1/ and to $OUT as they come. From the repository root:
#   bash results/reference/h200/gpu-check/rows-run.sh <commit> [seconds] > $OUT/run.log 2>&1
set -uo pipefail
C=$1
LIMIT=${2:-340}
F=results/reference/h200/gpu-check/rows-$C
B=build/sweeps/decode-bench
source scripts/gpu_run_prelude.sh
timeout 90 ctest --test-dir build -j6 --output-on-failure \
    -R '^(RowAttentionWgmmaGpu|RowAttentionStreamGpu|RowAttentionMqaGpu|DecodeVariantsWgmmaGpu|RowAttentionRaggedGpu)\.' \
    > $F/tests.log 2>&1
echo "tests rc=$? at $SECONDS s"; grep -E "tests passed|tests failed" $F/tests.log; save
small='RowAttentionWgmmaGpu.Small:RowAttentionStreamGpu.Small:RowAttentionMqaGpu.HostLengthTwinSmall:DecodeVariantsWgmmaGpu.Small'
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 build/tests/decode_tests --gtest_filter="$small" \
      > $F/sanitizer-$tool.log 2>&1
  echo "$tool rc=$? at $SECONDS s"; tail -1 $F/sanitizer-$tool.log; save
done
left=$((LIMIT - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left $B sweep --preset models --output $F/models.json > $F/models.log 2>&1
  echo "models rc=$? at $SECONDS s"; save
else
  echo "models: not run, $SECONDS s gone"
fi
