#!/usr/bin/env bash
# One H200 machine (gpu.txt), 2026-11-28, at 3036147: decode-bench alone
# (-DDECODE_BENCH_FLASHINFER=OFF -DDECODE_BENCH_BUILD_TESTS=OFF). Every run is the models preset's
# experiments named, without counters; the knobs and --set as named.
set -uo pipefail
P=results/reference/h200/planner-probes-3036147
echo 3036147 > .decode-bench-commit
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDECODE_BENCH_PTX_ONLY=OFF -DDECODE_BENCH_FLASHINFER=OFF -DDECODE_BENCH_BUILD_TESTS=OFF
cmake --build build -j16 --target decode-bench
X=build/sweeps/decode-bench
run() { local name=$1 args=$2; shift 2; env "$@" $X sweep --no-counters --preset models $args --output $P/$name.json; }
for round in 1 2; do
  run local-auto-$round "--experiment gemma3_27b_local" X=1
  run local-b8-$round "--experiment gemma3_27b_local --set gemma3_27b_local.blocks=8" X=1
  run local-b16-$round "--experiment gemma3_27b_local --set gemma3_27b_local.blocks=16" X=1
  run local-tc-$round "--experiment gemma3_27b_local" DECODE_BENCH_FD_VARIANT_PATH=tensor_core
  run local-tcslots-$round "--experiment gemma3_27b_local" DECODE_BENCH_FD_VARIANT_PATH=tensor_core DECODE_BENCH_ROW_DECODE_SPLITS=slots
done
run phi3-auto "--experiment phi3_mini" X=1
run phi3-short "--experiment phi3_mini" DECODE_BENCH_FD_TILING=short
run global-auto "--experiment gemma3_27b_global" X=1
run global-scale2 "--experiment gemma3_27b_global" DECODE_BENCH_FD_SPLIT_SCALE=2
G="--experiment llama3_8b --experiment qwen2_5_7b --filter T=32768"
run g32k-auto "$G" X=1
run g32k-steal25 "$G" DECODE_BENCH_ROW_STEAL=0.25
run g32k-steal50 "$G" DECODE_BENCH_ROW_STEAL=0.5
run g32k-off "$G" DECODE_BENCH_ROW_STEAL=off
# ncu of DeepSeek-V3's MLA at 1 x 32K, h_q 16 (BF16, paged 64, hot L2): three attention kernels and
# their merges, ncu's clock control and cache flush between passes as by default.
cat > /tmp/one.json <<'J'
{"schema_version": 1, "name": "one", "description": "1 x 32K h_q 16 for ncu",
 "common": {"attention": "mla", "kernel": "flash_decode", "kv_lora_rank": 512, "rope_dim": 64, "dtype": "bf16", "layout": "paged", "page_size": 64, "timing": "hot", "q_len": 1, "batch": 1, "T": 32768, "counters": false},
 "experiments": [{"name": "b1", "description": "1 x 32K", "axes": {"heads_q": [16]}}]}
J
ncu --kernel-name regex:mla_ --launch-count 6 --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed $X sweep --no-counters --preset /tmp/one.json --output /tmp/one.json.out > $P/ncu-mla.txt 2>&1
python3 $P/table.py > $P/table.md
