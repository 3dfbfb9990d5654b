#!/usr/bin/env bash
# The staggered-heads draft (6da6abe8, branch fd-head-stagger: DECODE_BENCH_FD_STAGGER=heads, off by
# default). Phi-3-mini's contiguous 1 x 32K point at 4 splits read 9% faster with its slab 10%
# longer (fragmentation 1.1) than at fragmentation 1 (contiguous-stride-b49d470): with every head's
# range at a 6 MiB stride and the blocks in step, the heads read the same offsets of their ranges at
# once. Staggered, head block b starts b / H_kv of the way into its tiles.
# Predicted: contiguous 1 x 32K at fragmentation 1 (4 splits, standard tiling) to within 2% of its
# fragmentation-1.1 time (on a machine where that was 103-105 us: 111-116 -> 103-105); fragmentation
# 1.1 and 3 splits within 2% either way; paged: direction unknown (the heads stop reading one page
# region together), within 5%.
# The build: decode-bench and the tests (no FlashInfer: nothing here runs it), the split-K kernel's
# GPU tests, then Phi-3-mini 1 x 32K (contiguous and paged, fragmentation 1 and 1.1, blocks auto and
# 3, standard and deep tilings) and the whole phi3_mini and gemma_7b experiments, stagger off and
# heads alternating, two rounds, --no-counters. Run as `bash run.sh > run.log 2>&1`.
set -uo pipefail
F=results/reference/h200/fd-stagger-draft
echo 6da6abe8 > .decode-bench-commit
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $F/gpu.txt
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF > /tmp/configure.log 2>&1
timeout 280 cmake --build build -j16 --target decode-bench decode_tests > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build done at $SECONDS s"
timeout 120 build/tests/decode_tests --gtest_filter='DecodeKernelsGpu.*:HeadDimsGpu.*:PlannerTuningGpu.*' --gtest_brief=1 > $F/tests.log 2>&1
echo "tests rc=$? at $SECONDS s"; tail -3 $F/tests.log
X=build/sweeps/decode-bench
S1="sweep --no-counters --preset models --experiment phi3_mini --set layout=contiguous,paged --set batch=1 --set T=32768 --set fragmentation=1,1.1 --set blocks=auto,3"
for round in 1 2; do
  for stagger in off heads; do
    for tiling in standard deep; do
      DECODE_BENCH_FD_STAGGER=$stagger DECODE_BENCH_FD_TILING=$tiling timeout 60 $X $S1 \
        --output $F/phi3-1x32k-$tiling-$stagger-$round.json > /dev/null 2> $F/phi3-1x32k-$tiling-$stagger-$round.log
      echo "phi3 1x32K $tiling $stagger $round rc=$? at $SECONDS s"
    done
    DECODE_BENCH_FD_STAGGER=$stagger timeout 60 $X sweep --no-counters --preset models --experiment phi3_mini \
      --experiment gemma_7b --output $F/models-$stagger-$round.json > /dev/null 2> $F/models-$stagger-$round.log
    echo "phi3 gemma $stagger $round rc=$? at $SECONDS s"
  done
done
