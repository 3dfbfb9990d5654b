#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-29, at 4f01ac2, FlashInfer's headers from the
# flashinfer-python 0.6.18.post1 wheel (carried in .deps/fi, unpacked under FLASHINFER_ROOT): the
# whole build, gpt-oss's full-attention experiment of the models preset (with counters), then the
# whole GPU suite. GC: where gpu_check.sh writes (the call's output folder, so that a call past its
# time limit still returns what was done).
set -uo pipefail
GC=${GC:-/tmp/gc}
echo 4f01ac2 > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$GC.gpu.txt"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' .deps/fi/flashinfer_python-0.6.18.post1-py3-none-any.whl /tmp/fi
FLASHINFER_ROOT=/tmp/fi cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF > "$GC.configure.log" 2>&1
time cmake --build build -j16 > "$GC.build.log" 2>&1 || { tail -30 "$GC.build.log"; exit 1; }
timeout 60 build/sweeps/decode-bench sweep --preset models --experiment gpt_oss_full --output "$GC.models-gpt_oss_full.json" > "$GC.sweep.log" 2>&1
OUT_DIR=$GC CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build
