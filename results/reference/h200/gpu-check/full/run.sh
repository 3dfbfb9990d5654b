#!/usr/bin/env bash
# The whole GPU suite at the stamped commit, on the machine that built it (w1.sh).
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && { [ -d /tmp/fi/flashinfer ] || tar xJf .devrun/fi.txz -C /tmp/fi; } && export FLASHINFER_ROOT=/tmp/fi
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
mkdir -p /tmp/r3; rm -rf /tmp/gc
( while sleep 45; do (cd /tmp && tar czf $OUT/r3.tgz gc r3 2>/dev/null); done ) &
packer=$!
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/r3/gpu.txt
cmake --build build -j16 > /tmp/r3/build.log 2>&1 || { el "BUILD FAILED"; grep -B2 -A12 "error" /tmp/r3/build.log | head -60; }
el built
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build; el "gpu_check rc=$?"
kill $packer 2>/dev/null
(cd /tmp && tar czf $OUT/r3.tgz gc r3)
