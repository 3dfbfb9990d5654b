#!/usr/bin/env bash
# The streamed grid's dynamic handout (stream-dynamic.patch, a draft not on main) on one GPU of
# compute capability 9.0: the patch applied to the tree at the commit given as $1, the whole build
# with FlashInfer's headers (scripts/gpu_run_prelude.sh), the streamed grid's tests with the
# patch's DynamicHandout (tests.log), compute-sanitizer memcheck and racecheck on
# RowAttentionStreamGpu.Small (whose paged cases take the handout), then the models preset's
# grouped d 128 experiments at 64 x 1K and 128 x 512 without counters, six runs alternating auto
# (ab-auto{1,2}.json), DECODE_BENCH_ROW_STREAM=dynamic (ab-dynamic{1,2}.json) and off
# (ab-off{1,2}.json).
# Run as `bash results/reference/h200/stream-dynamic-draft/run.sh <commit> > run.log 2>&1` from the
# repository root; files go to $OUT as they come.
set -uo pipefail
C=$1
F=results/reference/h200/stream-dynamic-draft
B=build/sweeps/decode-bench
git apply $F/stream-dynamic.patch || { echo "the patch does not apply"; exit 1; }
STAMP="$C"$'\n'"dirty: stream-dynamic.patch applied"
source scripts/gpu_run_prelude.sh
timeout 150 build/tests/decode_tests --gtest_filter='RowAttentionStreamGpu.*:PlannerTuning*:TuningPolicy*:PlanJson*' > $F/tests.log 2>&1
echo "tests rc=$? at $SECONDS s"; grep -E "FAILED|PASSED|Failure" $F/tests.log | head -20; save
source scripts/gpu_row_checks.sh
sanitize RowAttentionStreamGpu.Small 90
ab() {  # $1 output name; the environment decides the grid
  timeout 60 $B sweep --preset models --experiment llama3_8b --experiment llama3_70b --experiment mistral_7b \
      --experiment qwen2_5_7b --experiment qwen3_32b --experiment llama3_1_405b --filter 'batch=(64|128)/' \
      --no-counters --output $F/$1.json > $F/$1.log 2>&1
  echo "$1 rc=$? at $SECONDS s"
}
for i in 1 2; do
  ab ab-auto$i
  DECODE_BENCH_ROW_STREAM=dynamic ab ab-dynamic$i
  DECODE_BENCH_ROW_STREAM=off ab ab-off$i
  save
done
