#!/usr/bin/env bash
# Second command, on the build run-a.sh left, at the same commit ($1): the host and sanitizer parts
# of the whole GPU suite (scripts/gpu_check.sh --full --parts host,sanitizers --skip-build, into
# $OUT/gc-hs), then the peer preset (results/reference/h200/peer.json) if time is left.
#   bash results/reference/h200/gpu-check/full/run-b.sh <commit> > $OUT/run-b.log 2>&1
set -uo pipefail
C=$1
B=build/sweeps/decode-bench
echo "$C" > .decode-bench-commit
OUT_DIR=$OUT/gc-hs CTEST_JOBS=6 timeout 430 bash scripts/gpu_check.sh --full --parts host,sanitizers --skip-build
echo "host,sanitizers parts rc=$? at $SECONDS s"
if [ $SECONDS -lt 470 ]; then
  timeout $((590 - SECONDS)) $B sweep --preset peer --output $OUT/peer.json > $OUT/peer.log 2>&1
  echo "peer rc=$? at $SECONDS s"
else
  echo "peer: not run, $SECONDS s gone"
fi
