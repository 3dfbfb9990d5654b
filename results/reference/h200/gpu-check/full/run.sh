#!/usr/bin/env bash
# One H200 machine (gpu.txt), right after ../../group2-short-6f5a5e29/run.sh 6f5a5e29 had built the
# tree whole with FlashInfer's headers (the flashinfer-python 0.6.18.post1 wheel carried in
# .deps/fi) and run its tests, A/B and the models preset on it: the whole GPU suite on that build.
# gpu-check.log here is the script's output on stdout (/tmp/gc.log): that machine's /tmp/gc still
# held an earlier run's files, so only this run's were kept (gpu.txt is call 2's, same machine).
set -uo pipefail
echo 6f5a5e29 > .decode-bench-commit
OUT_DIR=/tmp/gc CTEST_JOBS=6 timeout 585 bash scripts/gpu_check.sh --full --skip-build > /tmp/gc.log 2>&1
echo "rc=$?"
