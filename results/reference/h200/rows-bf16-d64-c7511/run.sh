#!/usr/bin/env bash
# The BF16 d 64 warpgroup-MMA row kernels with and without ptxas's serialisation (info C7511): main
# as it is (base) against unserialised-622b49e.patch (the packed split's lo scores overwritten
# after the add), two builds in one call. gpt-oss's full-attention points of the models preset
# (BF16, 64 / 8 heads, d 64), with sinks (the variant twin) and without (the plain kernel), two
# rounds alternating; ptxas's report on both units; the row and variant warpgroup-MMA GPU tests
# and compute-sanitizer on their Small cases with the patch. Every step has a time limit and
# writes to files: run as `bash run.sh > run.log 2>&1`.
set -uo pipefail
F=results/reference/h200/rows-bf16-d64-c7511
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $F/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF > /dev/null
timeout 200 cmake --build build -j16 --target decode-bench > /tmp/build-base.log 2>&1 || { tail -30 /tmp/build-base.log; exit 1; }
cp build/sweeps/decode-bench /tmp/decode-bench-base
git apply $F/unserialised-622b49e.patch || exit 1
echo 622b49e > .decode-bench-commit
timeout 240 cmake --build build -j16 --target decode-bench decode_tests > /tmp/build-new.log 2>&1 || { tail -30 /tmp/build-new.log; exit 1; }
for u in row_attention_wgmma_bf16 row_attention_wgmma_variant; do
  nvcc -I. -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -cubin -o /tmp/$u.cubin \
    kernels/instantiate/$u.cu -Xptxas -v 2>&1 | grep -E "C75|Used|spill|Compiling" > $F/ptxas-$u-622b49e.txt &
done
timeout 120 build/tests/decode_tests --gtest_filter='RowAttentionWgmmaGpu.*:DecodeVariantsWgmmaGpu.*' --gtest_brief=1 > $F/tests-622b49e.log 2>&1
echo "tests rc=$?" >> $F/tests-622b49e.log
tail -3 $F/tests-622b49e.log
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 86 build/tests/decode_tests \
    --gtest_filter='RowAttentionWgmmaGpu.Small:DecodeVariantsWgmmaGpu.Small' --gtest_brief=1 2>&1 |
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" | sed "s/^/$tool: /"
done > $F/sanitizers.txt
wait
X=build/sweeps/decode-bench
for round in 1 2; do
  for side in base new; do
    B=$X; [ $side = base ] && B=/tmp/decode-bench-base
    timeout 90 $B sweep --no-counters --preset models --experiment gpt_oss_full --output $F/sinks-$side-$round.json > /dev/null
    timeout 90 $B sweep --no-counters --preset models --experiment gpt_oss_full --set sinks=false --output $F/plain-$side-$round.json > /dev/null
  done
done
for kind in sinks plain; do
  for round in 1 2; do
    $X compare $F/$kind-base-$round.json $F/$kind-new-$round.json --format markdown > $F/compare-$kind-$round.md 2>&1
  done
done
cat $F/sanitizers.txt; grep -c C75 $F/ptxas-*.txt
