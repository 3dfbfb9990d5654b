#!/usr/bin/env bash
# On the machine of ../../short-masked-head-dim-7167e6e/run.sh, right after its runs (that run's
# build at 7167e6e, FlashInfer's headers from the flashinfer-python 0.6.18.post1 wheel under
# FLASHINFER_ROOT): the whole GPU suite, then the peer preset (../../peer.json).
set -uo pipefail
echo 7167e6e > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF
cmake --build build -j16
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build
build/sweeps/decode-bench sweep --preset peer --output results/reference/h200/peer.json
