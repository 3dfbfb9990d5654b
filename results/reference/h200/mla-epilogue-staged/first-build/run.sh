#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-28. The first build: fed8aa0's staging at every row count
# (fed8aa0 without its `staged` condition; the JSON files name that build 0.1.0+8b4d470, a commit
# squashed into fed8aa0), against the MLA device code of 45e0bb9 (built from cdca55a, whose MLA
# kernels compile to the same SASS). Each built as decode-bench alone
# (-DDECODE_BENCH_FLASHINFER=OFF -DDECODE_BENCH_BUILD_TESTS=OFF) into its own tree; NEW and OLD are
# their decode-bench executables. The same call ran the Mla* GPU tests and compute-sanitizer
# memcheck and racecheck on the MLA gpu_sanitize tests (all passed, 0 errors, 0 hazards).
set -uo pipefail
F=results/reference/h200/mla-epilogue-staged
for round in 1 2; do
  for cfg in mla16 ab2; do
    $OLD sweep --no-counters --preset $F/$cfg.json --output $F/first-build/$cfg-base-$round.json
    $NEW sweep --no-counters --preset $F/$cfg.json --output $F/first-build/$cfg-new-$round.json
  done
done
