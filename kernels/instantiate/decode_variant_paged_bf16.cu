// The CUDA-core split-K variant twins for PagedKV<__nv_bfloat16>: head dim 128 at GQA groups 1 (standard and
// short tilings) and 2, with their merge kernels. A unit of its own, as the row family's twins are,
// so the plain kernels' units compile none of them (kernels/flash_decode_variant.hpp).
#include "kernels/flash_decode_variant_launch.cuh"

DECODE_BENCH_INSTANTIATE_DECODE_VARIANT(decode_bench::PagedKV<__nv_bfloat16>)
