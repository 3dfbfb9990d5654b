// plan_row_attention / run_row_attention for PagedKV<__nv_fp8_e5m2>: head dims 64/128/256, the tensor-core and CUDA-core kernels.
#include "kernels/row_attention_launch.cuh"

DECODE_BENCH_INSTANTIATE_ROW_ATTENTION(decode_bench::PagedKV<__nv_fp8_e5m2>)
