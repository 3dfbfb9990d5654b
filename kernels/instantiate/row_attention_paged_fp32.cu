// plan_row_attention / run_row_attention for PagedKV<float>: head dims 64/128/256, the CUDA-core kernel.
#include "kernels/row_attention_launch.cuh"

DECODE_BENCH_INSTANTIATE_ROW_ATTENTION(decode_bench::PagedKV<float>)
