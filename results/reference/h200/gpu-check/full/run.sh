#!/usr/bin/env bash
# A fresh build at the stamped commit, then the whole GPU suite.
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && { [ -d /tmp/fi/flashinfer ] || tar xJf .devrun/fi.txz -C /tmp/fi; } && export FLASHINFER_ROOT=/tmp/fi
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
R=/tmp/pa; mkdir -p $R; rm -rf /tmp/gc
( while sleep 45; do (cd /tmp && tar czf $OUT/pa.tgz gc pa 2>/dev/null); done ) &
packer=$!
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF > $R/configure.log 2>&1
cmake --build build -j16 > $R/build.log 2>&1 || { el "BUILD FAILED"; grep -B2 -A12 "error" $R/build.log | head -60; kill $packer; (cd /tmp && tar czf $OUT/pa.tgz pa); exit 1; }
el built
build/tests/decode_tests --gtest_filter='MlaDecodeWgmmaGpu.Small:MlaDecodeWgmmaGpu.EveryHeadCountAndQueryLength' --gtest_brief=1 2>&1 | tail -3
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build; el "gpu_check rc=$?"
kill $packer 2>/dev/null
(cd /tmp && tar czf $OUT/pa.tgz gc pa)
