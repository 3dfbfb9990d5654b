#!/usr/bin/env bash
# First of two commands on one H200 machine (gpu.txt) at the commit given as $1: the whole build
# with FlashInfer's headers (scripts/gpu_run_prelude.sh), the gpu part of the whole GPU suite
# (scripts/gpu_check.sh --full --parts gpu, into $OUT/gc-gpu), the models preset
# (results/reference/h200/models.json), then the streamed grid's new paged rule against one block an
# item at the models preset's paged 64 x 1K grouped points, two runs a side alternating, no counters
# (results/reference/h200/paged-tickets-9323c2ae/landed/{auto,off}{1,2}.json). From the repository root:
#   bash results/reference/h200/gpu-check/full/run-a.sh <commit> > $OUT/run-a.log 2>&1
set -uo pipefail
C=$1
F=results/reference/h200/gpu-check/full
L=results/reference/h200/paged-tickets-9323c2ae/landed
B=build/sweeps/decode-bench
source scripts/gpu_run_prelude.sh
save() { [ -n "${OUT:-}" ] && tar czf "$OUT/r.tgz" "$F" "$L" results/reference/h200/models.json; }
mkdir -p $L
OUT_DIR=$OUT/gc-gpu CTEST_JOBS=6 timeout 330 bash scripts/gpu_check.sh --full --parts gpu --skip-build
echo "gpu part rc=$? at $SECONDS s"
timeout 130 $B sweep --preset models --output results/reference/h200/models.json > $OUT/models.log 2>&1
echo "models rc=$? at $SECONDS s"; save
ab() {  # ab NAME: the grouped d 128 experiments' paged 64 x 1K points; the environment picks the grid
  timeout 30 $B sweep --preset models --experiment llama3_8b --experiment llama3_70b --experiment mistral_7b \
      --experiment qwen2_5_7b --experiment qwen3_32b --experiment llama3_1_405b \
      --filter 'layout=paged/.*batch=64/T=1024/' --no-counters --output $L/$1.json > $L/$1.log 2>&1
  echo "$1 rc=$? at $SECONDS s"
}
for i in 1 2; do
  [ $SECONDS -lt 560 ] || { echo "round $i: not run, $SECONDS s gone"; continue; }
  ab auto$i
  DECODE_BENCH_ROW_STREAM=off ab off$i
done
save
