#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-29: the staged epilogue of the MLA warpgroup-MMA kernel (main
# at f87b67f) against direct stores at every row count (direct-epilogue-4cba60c.patch, `git apply` on
# f87b67f: MLA_DIRECT_EPILOGUE_DRAFT=1 launches a second instance of the kernel whose only change
# is staged = false), one build, the warpgroup-MMA MLA GPU tests with the direct stores, then two
# rounds alternating over ab.json.
set -uo pipefail
F=results/reference/h200/mla-epilogue-few-tiles
git apply $F/direct-epilogue-4cba60c.patch 2>/dev/null || true  # already applied where the tree is the draft's
echo 4cba60c > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $F/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF > /dev/null
cmake --build build -j16 --target decode_tests decode-bench > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
MLA_DIRECT_EPILOGUE_DRAFT=1 build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.*' --gtest_brief=1 > $F/tests-direct.log 2>&1
tail -2 $F/tests-direct.log
X=build/sweeps/decode-bench
for round in 1 2; do
  $X sweep --no-counters --preset $F/ab.json --output $F/staged-$round.json > /dev/null
  MLA_DIRECT_EPILOGUE_DRAFT=1 $X sweep --no-counters --preset $F/ab.json --output $F/direct-$round.json > /dev/null
done
python3 $F/table.py > $F/table.md; cat $F/table.md
