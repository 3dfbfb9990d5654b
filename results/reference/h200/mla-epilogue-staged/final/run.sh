#!/usr/bin/env bash
# One H200 machine (gpu.txt; another machine than first-build's), 2026-11-28: fed8aa0 (NEW) against
# the MLA device code of 45e0bb9 (OLD, built from cdca55a, whose MLA kernels compile to the same
# SASS), each decode-bench alone (-DDECODE_BENCH_FLASHINFER=OFF -DDECODE_BENCH_BUILD_TESTS=OFF).
# The whole GPU suite at fed8aa0 ran on a third H200 the same day (results/reference/h200/gpu-check/full/).
set -uo pipefail
F=results/reference/h200/mla-epilogue-staged
for round in 1 2; do
  for cfg in ab2 mla16; do
    $OLD sweep --no-counters --preset $F/$cfg.json --output $F/final/$cfg-base-$round.json
    $NEW sweep --no-counters --preset $F/$cfg.json --output $F/final/$cfg-new-$round.json
  done
done
