#!/usr/bin/env bash
# One H200 machine (gpu.txt), right after ../../stream-60eebf55/run.sh 60eebf55 had built the tree
# whole with FlashInfer's headers (the flashinfer-python 0.6.18.post1 wheel carried in .deps/fi) and
# run its tests, A/B and presets on it: the whole GPU suite on that build, in the call's 585 s.
# gpu-check.log here is the script's output on stdout (/tmp/gc.log).
set -uo pipefail
echo 60eebf55 > .decode-bench-commit
OUT_DIR=/tmp/gc CTEST_JOBS=6 timeout 585 bash scripts/gpu_check.sh --full --skip-build > /tmp/gc.log 2>&1
echo "rc=$?"
