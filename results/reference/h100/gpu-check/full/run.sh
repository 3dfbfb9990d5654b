#!/usr/bin/env bash
# The whole GPU suite at the stamped commit: build, then gpu_check --full on the same machine.
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && { [ -d /tmp/fi/flashinfer ] || tar xJf .devrun/fi.txz -C /tmp/fi; } && export FLASHINFER_ROOT=/tmp/fi
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
mkdir -p /tmp/r2; rm -rf /tmp/gc
( while sleep 45; do (cd /tmp && tar czf $OUT/r2.tgz gc r2 2>/dev/null); done ) &
packer=$!
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/r2/gpu.txt
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF > /tmp/r2/configure.log 2>&1
cmake --build build -j16 > /tmp/r2/build.log 2>&1 || { el "BUILD FAILED"; grep -B2 -A12 "error" /tmp/r2/build.log | head -60; }
el built
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build; el "gpu_check rc=$?"
kill $packer 2>/dev/null
(cd /tmp && tar czf $OUT/r2.tgz gc r2)
