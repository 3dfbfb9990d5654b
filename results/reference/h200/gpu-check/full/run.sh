#!/usr/bin/env bash
# One H200 machine (gpu.txt), right after ../../refresh-9ea9df8c/run.sh 9ea9df8c had built the
# tree whole with FlashInfer's headers (the flashinfer-python 0.6.18.post1 wheel carried in
# .deps/fi) and run the models, mla and peer presets on it: the whole GPU suite on that build.
set -uo pipefail
mkdir -p /tmp/gc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/gc/gpu.txt
OUT_DIR=/tmp/gc CTEST_JOBS=6 timeout 580 bash scripts/gpu_check.sh --full --skip-build > /tmp/gc/gpu-check.log 2>&1
echo "gpu_check rc=$?"
