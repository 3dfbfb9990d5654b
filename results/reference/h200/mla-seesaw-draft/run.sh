#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-28: seesaw.patch applied on 7ce2456 (the tree of e1f81d6),
# one build, the MLA GPU tests and compute-sanitizer with the draft, then the A/B.
set -uo pipefail
F=results/reference/h200/mla-seesaw-draft
git apply $F/seesaw.patch
echo e1f81d6 > .decode-bench-commit
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF
cmake --build build -j16 --target decode_tests decode-bench
MLA_SEESAW_DRAFT=1 build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.*:MlaDecodeGpu.*:MlaSweepGpu.*' --gtest_brief=1 > $F/tests-seesaw.log
for tool in memcheck racecheck; do
  MLA_SEESAW_DRAFT=1 compute-sanitizer --tool $tool --error-exitcode 86 build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.Small'
done
X=build/sweeps/decode-bench
for round in 1 2; do
  $X sweep --no-counters --preset $F/seesaw.json --output $F/base-$round.json
  MLA_SEESAW_DRAFT=1 $X sweep --no-counters --preset $F/seesaw.json --output $F/seesaw-$round.json
done
