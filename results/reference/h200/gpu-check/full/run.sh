#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-28, at fed8aa0, FlashInfer's headers from the
# flashinfer-python 0.6.18.post1 wheel under FLASHINFER_ROOT: the whole build, then the whole GPU suite.
set -uo pipefail
echo fed8aa0 > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF
cmake --build build -j12
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build
