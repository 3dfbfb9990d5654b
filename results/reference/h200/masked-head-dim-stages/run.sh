#!/usr/bin/env bash
# Phi-3-mini's head dim 96 on the CUDA-core split-K kernel of 128 (tail masked) at 1 x 32K and
# 16 x 4K, contiguous and paged 16: the library's standard tiling (2 stages) against 3 and 4 stages,
# by the tiling probe (`decode-probe masked`, kernels/tuning/probe_decode.cu), twice. Every step has
# a time limit and writes to files: run as `bash run.sh > run.log 2>&1`.
set -uo pipefail
F=results/reference/h200/masked-head-dim-stages
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $F/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF > /dev/null
timeout 300 cmake --build build -j16 --target decode-probe > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
for round in 1 2; do
  timeout 120 build/kernels/tuning/decode-probe masked > $F/probe-$round.txt 2>&1
done
grep -h "^V" $F/probe-*.txt
