#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-28: pipelined-ae7b978.patch applied on 92906b5 (the tree of
# ae7b978), one build, the warpgroup-MMA MLA GPU tests and compute-sanitizer with the draft, then
# the A/B: the 64-token tiling (auto), the draft (MLA_PIPELINED_DRAFT=1 with the 32-token tiling
# pinned) and the 32-token tiling as it is, alternating, two rounds.
set -uo pipefail
F=results/reference/h200/mla-pipelined-draft
git apply $F/pipelined-ae7b978.patch
echo ae7b978 > .decode-bench-commit
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF
cmake --build build -j16 --target decode_tests decode-bench
MLA_PIPELINED_DRAFT=1 build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.*' --gtest_brief=1 > $F/tests-pipelined.log
for tool in memcheck racecheck; do
  MLA_PIPELINED_DRAFT=1 compute-sanitizer --tool $tool --error-exitcode 86 build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.Small'
done
X=build/sweeps/decode-bench
for round in 1 2; do
  $X sweep --no-counters --preset $F/pipe.json --output $F/t64-$round.json
  MLA_PIPELINED_DRAFT=1 DECODE_BENCH_MLA_TILE=32 $X sweep --no-counters --preset $F/pipe.json --output $F/pipe-$round.json
  DECODE_BENCH_MLA_TILE=32 $X sweep --no-counters --preset $F/pipe.json --output $F/t32-$round.json
done
