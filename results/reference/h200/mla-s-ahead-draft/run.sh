#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-29: the 32-token tiling with S of tile j + 1 issued before the
# softmax of tile j (s-ahead-de6208f.patch, `git apply` on ecf508c), one build, ptxas's report on the MLA
# unit, the warpgroup-MMA MLA GPU tests and compute-sanitizer with the draft, then the A/B: the
# 64-token tiling (auto), the draft (MLA_PIPELINED_DRAFT=1 with the 32-token tiling pinned) and the
# 32-token tiling as it is, alternating, two rounds; then ncu on the draft at one point.
set -uo pipefail
F=results/reference/h200/mla-s-ahead-draft
git apply $F/s-ahead-de6208f.patch 2>/dev/null || true  # already applied where the tree is the draft's
echo de6208f > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $F/gpu.txt
nvcc --version | tail -1 >> $F/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF > /dev/null
cmake --build build -j16 --target decode_tests decode-bench decode-mla-probe > $F/build.log 2>&1 || { tail -30 $F/build.log; exit 1; }
nvcc -I. -O3 -DNDEBUG -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -cubin -o /tmp/mla.cubin \
  kernels/instantiate/mla_decode_wgmma.cu -Xptxas -v 2>&1 | grep -E "C75|Used|spill|Compiling" > $F/ptxas.txt &
MLA_PIPELINED_DRAFT=1 build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.*' --gtest_brief=1 > $F/tests-pipelined.log 2>&1
tail -3 $F/tests-pipelined.log
for tool in memcheck racecheck; do
  MLA_PIPELINED_DRAFT=1 compute-sanitizer --tool $tool --error-exitcode 86 build/tests/decode_tests \
    --gtest_filter='MlaDecodeWgmmaGpu.Small' --gtest_brief=1 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" | sed "s/^/$tool: /"
done > $F/sanitizers.txt
cat $F/sanitizers.txt
wait
X=build/sweeps/decode-bench
for round in 1 2; do
  $X sweep --no-counters --preset $F/pipe.json --output $F/t64-$round.json > /dev/null
  MLA_PIPELINED_DRAFT=1 DECODE_BENCH_MLA_TILE=32 $X sweep --no-counters --preset $F/pipe.json --output $F/pipe-$round.json > /dev/null
  DECODE_BENCH_MLA_TILE=32 $X sweep --no-counters --preset $F/pipe.json --output $F/t32-$round.json > /dev/null
done
python3 results/reference/h200/mla-pipelined-draft/table.py $F '32-token, S ahead (draft)' > $F/table.md; cat $F/table.md
# Where the draft's time goes: ncu's warp-stall samples per SASS instruction of the attention kernel
# at 128 x 4K h_q 128 q_len 1 (the probe of ../mla-compute-bound-phases-92906b5/).
P=build/kernels/tuning/decode-mla-probe
MLA_PIPELINED_DRAFT=1 DECODE_BENCH_MLA_TILE=32 ncu --set full --import-source no --kernel-name regex:mla_decode_wgmma \
  --launch-count 1 -o /tmp/ncu-s-ahead $P 0 "h128 q1 128x4096" > /dev/null
ncu --import /tmp/ncu-s-ahead.ncu-rep --page details > $F/ncu-h128-q1-128x4096.txt
ncu --import /tmp/ncu-s-ahead.ncu-rep --page source --print-source sass --csv | gzip > $F/ncu-h128-q1-128x4096-source.csv.gz
