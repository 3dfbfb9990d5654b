#!/usr/bin/env bash
# The whole GPU suite at the stamped commit on the machine that built it, then the presets it changes.
set -uo pipefail
cp .devrun/commit .decode-bench-commit
mkdir -p /tmp/fi && { [ -d /tmp/fi/flashinfer ] || tar xJf .devrun/fi.txz -C /tmp/fi; } && export FLASHINFER_ROOT=/tmp/fi
mkdir -p /tmp/r6
( while sleep 45; do (cd /tmp && tar czf $OUT/r6.tgz gc r6 2>/dev/null); done ) &
packer=$!
rm -rf /tmp/gc
OUT_DIR=/tmp/gc CTEST_JOBS=6 bash scripts/gpu_check.sh --full --skip-build; echo "gpu_check rc=$?"
for n in models peer quick; do
  build/sweeps/decode-bench sweep --preset $n --output /tmp/r6/$n.json > /tmp/r6/$n.log 2>&1; echo "$n rc=$?"; tail -1 /tmp/r6/$n.log
  (cd /tmp && tar czf $OUT/r6.tgz gc r6)
done
kill $packer 2>/dev/null
(cd /tmp && tar czf $OUT/r6.tgz gc r6)
