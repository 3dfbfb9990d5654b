#!/usr/bin/env bash
# One H200 machine (gpu.txt), at the commit given as $1, FlashInfer's headers from the
# flashinfer-python 0.6.18.post1 wheel (carried in .deps/fi, unpacked under FLASHINFER_ROOT): the
# whole build (nothing to do where the machine still holds it), the models preset with counters
# where the build was already there, then the whole GPU suite. GC: where gpu_check.sh writes.
set -uo pipefail
C=$1
GC=${GC:-/tmp/gc}
mkdir -p "$GC"
echo "$C" > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$GC/gpu.txt"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' .deps/fi/flashinfer_python-0.6.18.post1-py3-none-any.whl /tmp/fi
FLASHINFER_ROOT=/tmp/fi cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF > "$GC/configure.log" 2>&1
start=$SECONDS
cmake --build build -j16 > "$GC/build.log" 2>&1 || { tail -30 "$GC/build.log"; exit 1; }
echo "build: $((SECONDS - start)) s"
if [ $((SECONDS - start)) -lt 60 ]; then
  timeout 90 build/sweeps/decode-bench sweep --preset models --output "$GC/models.json" > "$GC/models.log" 2>&1
  echo "models rc=$? at $SECONDS s"
fi
OUT_DIR=$GC CTEST_JOBS=6 timeout $((580 - SECONDS)) bash scripts/gpu_check.sh --full --skip-build
echo "gpu_check rc=$? at $SECONDS s"
