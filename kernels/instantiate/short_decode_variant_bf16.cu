// The short-sequence path's attention-variant kernels (one query token with a window, soft-cap or
// sinks) for ContiguousKV<__nv_bfloat16> and PagedKV<__nv_bfloat16>: head bounds 4, 8 and 16 at
// both stages, 12 kernels. A unit of its own, so the plain kernels' units compile none of them
// (kernels/short_decode_variant.hpp).
#include "kernels/short_decode_variant_launch.cuh"

DECODE_BENCH_INSTANTIATE_SHORT_DECODE_VARIANT(decode_bench::ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_SHORT_DECODE_VARIANT(decode_bench::PagedKV<__nv_bfloat16>)
