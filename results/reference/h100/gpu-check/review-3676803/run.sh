#!/usr/bin/env bash
set -uo pipefail
cp .devrun/commit .decode-bench-commit
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF > /tmp/configure.log 2>&1
cmake --build build -j16 --target decode_tests > /tmp/build.log 2>&1 || { el "BUILD FAILED"; grep -A8 error /tmp/build.log | head -20; exit 1; }
el built
build/tests/decode_tests --gtest_filter='RowAttentionMqaGpu.*:PlannerTuningGpu.*:PlannerTuning.*:RowAttentionWgmmaGpu.*' 2>&1 | tee $OUT/t.log | grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure" | head -20
el done
