#!/usr/bin/env bash
# The warpgroup-MMA row kernels at the commit given as $1 on one GPU of compute capability 9.0, in
# one command where less device time is left than the whole suite needs: the whole build with
# FlashInfer's headers (scripts/gpu_run_prelude.sh), the 26 row tests (RowAttentionWgmmaGpu,
# RowAttentionStreamGpu, RowAttentionMqaGpu, DecodeVariantsWgmmaGpu, RowAttentionRaggedGpu; ctest
# -j6, tests.log), compute-sanitizer memcheck and racecheck on their four Small cases, then the
# models preset (models.json) while time is left ($2 s in all, default 340). Files go to
# results/reference/h200/gpu-check/rows-$1/ and to $OUT as they come. From the repository root:
#   bash results/reference/h200/gpu-check/rows-run.sh <commit> [seconds] > $OUT/run.log 2>&1
set -uo pipefail
C=$1
LIMIT=${2:-340}
F=results/reference/h200/gpu-check/rows-$C
B=build/sweeps/decode-bench
source scripts/gpu_run_prelude.sh
source scripts/gpu_row_checks.sh
row_checks 90 60
left=$((LIMIT - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left $B sweep --preset models --output $F/models.json > $F/models.log 2>&1
  echo "models rc=$? at $SECONDS s"; save
else
  echo "models: not run, $SECONDS s gone"
fi
