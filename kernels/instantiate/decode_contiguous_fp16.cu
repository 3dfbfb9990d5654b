// plan_decode / run_decode for ContiguousKV<__half>: 12 flash-decode kernels (head dims 64/128/256
// x GQA groups 1/2/4/8), the short tiling's 3 (group 1), the deep tiling's 1 (group 1, head dim
// 128), 3 merge kernels and the 3 baseline stages.
#include "kernels/decode_dispatch.cuh"

DECODE_BENCH_INSTANTIATE_DECODE(decode_bench::ContiguousKV<__half>)
