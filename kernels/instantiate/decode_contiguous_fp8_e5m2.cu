// plan_decode / run_decode for ContiguousKV<__nv_fp8_e5m2>: 12 flash-decode kernels (head dims
// 64/128/256 x GQA groups 1/2/4/8), the short tiling's 3 (group 1) and 3 merge kernels; no baseline
// (it has no FP8 path).
#include "kernels/decode_dispatch.cuh"

DECODE_BENCH_INSTANTIATE_DECODE(decode_bench::ContiguousKV<__nv_fp8_e5m2>)
