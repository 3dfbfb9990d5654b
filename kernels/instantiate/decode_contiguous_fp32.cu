// plan_decode / run_decode for ContiguousKV<float>: 12 flash-decode kernels (head dims 64/128/256 x
// GQA groups 1/2/4/8), the short tiling's 3 (group 1), 3 merge kernels and the 3 baseline stages.
#include "kernels/decode_dispatch.cuh"

DECODE_BENCH_INSTANTIATE_DECODE(decode_bench::ContiguousKV<float>)
