#!/usr/bin/env bash
# The MLA seesaw with its stages refilled in parts (seesaw-parts-fd31ea0.patch, `git apply` on
# e0d970c or later main; MLA_SEESAW_DRAFT=1 runs the 64-token tiling's plans on it): one build,
# ptxas's report on the MLA unit, the MLA GPU tests with the draft, compute-sanitizer on
# MlaDecodeWgmmaGpu.Small with it, the A/B against the 64-token tiling (two rounds alternating), and
# an ncu profile of the draft at 128 x 4K h_q 128 q_len 1. Every step has a time limit and writes
# to files: run as `bash run.sh > run.log 2>&1`.
set -uo pipefail
F=results/reference/h200/mla-seesaw-parts-draft
git apply $F/seesaw-parts-fd31ea0.patch 2>/dev/null || true  # already applied where the tree is the draft's
echo fd31ea0 > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $F/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF > /dev/null
timeout 240 cmake --build build -j16 --target decode_tests decode-bench > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
nvcc -I. -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -cubin -o /tmp/mla.cubin \
  kernels/instantiate/mla_decode_wgmma.cu -Xptxas -v 2>&1 | grep -E "C75|Used|spill|Compiling" > $F/ptxas.txt &
MLA_SEESAW_DRAFT=1 timeout 120 build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.*:MlaDecodeGpu.*:MlaSweepGpu.*' \
  --gtest_brief=1 > $F/tests-seesaw.log 2>&1
tests_rc=$?
echo "tests rc=$tests_rc" >> $F/tests-seesaw.log
wait
[ $tests_rc -eq 124 ] && { echo "the draft's tests ran past 120 s (a hang?): no sweep"; exit 1; }
cmake --build build -j16 --target decode-mla-probe > /dev/null 2>&1 &
for tool in memcheck racecheck; do
  MLA_SEESAW_DRAFT=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 86 build/tests/decode_tests \
    --gtest_filter='MlaDecodeWgmmaGpu.Small' --gtest_brief=1 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" | sed "s/^/$tool: /"
done > $F/sanitizers.txt
wait
X=build/sweeps/decode-bench
for round in 1 2; do
  timeout 60 $X sweep --no-counters --preset $F/pipe.json --output $F/t64-$round.json > /dev/null
  MLA_SEESAW_DRAFT=1 timeout 60 $X sweep --no-counters --preset $F/pipe.json --output $F/seesaw-$round.json > /dev/null
done
python3 $F/../mla-qreg-draft/table.py $F seesaw "seesaw, parts (draft)" > $F/table.md; cat $F/table.md
P=build/kernels/tuning/decode-mla-probe
MLA_SEESAW_DRAFT=1 timeout 150 ncu --set full --import-source no --kernel-name regex:mla_decode_wgmma \
  --launch-count 1 -o /tmp/ncu-seesaw $P 0 "h128 q1 128x4096" > /dev/null 2>&1
ncu --import /tmp/ncu-seesaw.ncu-rep --page details > $F/ncu-h128-q1-128x4096.txt
ncu --import /tmp/ncu-seesaw.ncu-rep --page source --print-source sass --csv | gzip > $F/ncu-h128-q1-128x4096-source.csv.gz
python3 $F/../mla-softmax-wg1-draft/segments.py $F/ncu-h128-q1-128x4096-source.csv.gz > $F/segments-h128-q1-128x4096.md
