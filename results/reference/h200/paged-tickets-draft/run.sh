#!/usr/bin/env bash
# The paged tile's block-table reads issued together (paged-tickets.patch, a draft not on main) on
# one GPU of compute capability 9.0: the whole build at the commit given as $1 with FlashInfer's
# headers (scripts/gpu_run_prelude.sh), that decode-bench kept aside as the base, the patch applied
# and the build brought up to date; the patched build's warpgroup-MMA row tests (ctest -j6, tests.log) and
# compute-sanitizer memcheck and racecheck on their small cases; then the models preset's
# warpgroup-MMA experiments (grouped d 128, gpt-oss's full layers, Falcon-7B), --no-counters, three
# runs of each build alternating (ab-base{1,2,3}.json, ab-new{1,2,3}.json), and the streamed grid
# pinned at two items a block over paged K/V at 64 x 1K, two runs of each alternating
# (stream2-base{1,2}.json, stream2-new{1,2}.json).
# Run as `bash results/reference/h200/paged-tickets-draft/run.sh <commit> > run.log 2>&1` from the
# repository root; files go to $OUT as they come.
set -uo pipefail
C=$1
F=results/reference/h200/paged-tickets-draft
B=build/sweeps/decode-bench
source scripts/gpu_run_prelude.sh
cp $B /tmp/decode-bench-base
git apply $F/paged-tickets.patch || { echo "the patch does not apply"; exit 1; }
printf '%s\nwith paged-tickets.patch applied\n' "$C" > .decode-bench-commit
cmake -S . -B build > /tmp/reconfigure.log 2>&1 || { tail -20 /tmp/reconfigure.log; exit 1; }
start=$SECONDS
timeout 240 cmake --build build -j"$(nproc)" > /tmp/build-patched.log 2>&1 || { tail -40 /tmp/build-patched.log; exit 1; }
echo "patched build: $((SECONDS - start)) s"
cp $B /tmp/decode-bench-new
timeout 150 ctest --test-dir build -j6 --output-on-failure \
    -R '^(RowAttentionWgmmaGpu|RowAttentionStreamGpu|RowAttentionMqaGpu|DecodeVariantsWgmmaGpu|RowAttentionRaggedGpu)\.' \
    > $F/tests.log 2>&1
echo "tests rc=$? at $SECONDS s"; grep -E "tests passed|tests failed" $F/tests.log; save
small='RowAttentionWgmmaGpu.Small:RowAttentionStreamGpu.Small:RowAttentionMqaGpu.HostLengthTwinSmall:DecodeVariantsWgmmaGpu.Small'
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 build/tests/decode_tests --gtest_filter="$small" \
      > $F/sanitizer-$tool.log 2>&1
  echo "$tool rc=$? at $SECONDS s"; tail -1 $F/sanitizer-$tool.log; save
done
ab() {  # ab BUILD NAME [--filter F]: one run of the models preset's warpgroup-MMA experiments
  local build=$1 name=$2
  shift 2
  timeout 90 /tmp/decode-bench-$build sweep --preset models --experiment llama3_8b --experiment llama3_70b \
      --experiment mistral_7b --experiment qwen2_5_7b --experiment qwen3_32b --experiment llama3_1_405b \
      --experiment gpt_oss_full --experiment falcon_7b --no-counters "$@" --output $F/$name.json > $F/$name.log 2>&1
  echo "$name rc=$? at $SECONDS s"
}
for i in 1 2 3; do
  ab base ab-base$i
  ab new ab-new$i
  save
done
for i in 1 2; do
  DECODE_BENCH_ROW_STREAM=2 ab base stream2-base$i --filter 'layout=paged/.*batch=64/T=1024/'
  DECODE_BENCH_ROW_STREAM=2 ab new stream2-new$i --filter 'layout=paged/.*batch=64/T=1024/'
  save
done
