#!/usr/bin/env bash
# On the second machine of ../../mla-merge-quarters-ded5013/run.sh, right after it (the build of
# that run, at ded5013, FlashInfer's headers from the flashinfer-python 0.6.18.post1 wheel under
# FLASHINFER_ROOT): the whole GPU suite, then the models and quick presets (../../models.json,
# ../../quick.json).
set -uo pipefail
echo ded5013 > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF
cmake --build build -j16
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build
build/sweeps/decode-bench sweep --preset models --output results/reference/h200/models.json
build/sweeps/decode-bench sweep --preset quick --output results/reference/h200/quick.json
