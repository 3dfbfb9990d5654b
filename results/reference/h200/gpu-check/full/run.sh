#!/usr/bin/env bash
# On the machine that ran p1.sh (its build): the peer, h100, quick and variants presets, then the
# whole GPU suite at the stamped commit.
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && { [ -d /tmp/fi/flashinfer ] || tar xJf .devrun/fi.txz -C /tmp/fi; } && export FLASHINFER_ROOT=/tmp/fi
t0=$SECONDS; el() { echo "[$((SECONDS-t0)) s] $*"; }
R=/tmp/p2; mkdir -p $R; rm -rf /tmp/gc
( while sleep 45; do (cd /tmp && tar czf $OUT/p2.tgz gc p2 2>/dev/null); done ) &
packer=$!
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
cmake --build build -j16 > $R/build.log 2>&1 || { el "BUILD FAILED"; }
el built
for p in peer h100 quick variants; do build/sweeps/decode-bench sweep --preset $p --output $R/$p.json > $R/$p.log 2>&1; el "$p rc=$?"; tail -1 $R/$p.log; done
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build; el "gpu_check rc=$?"
kill $packer 2>/dev/null
(cd /tmp && tar czf $OUT/p2.tgz gc p2)
