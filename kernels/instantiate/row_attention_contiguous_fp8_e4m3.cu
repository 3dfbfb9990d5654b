// plan_row_attention / run_row_attention for ContiguousKV<__nv_fp8_e4m3>: head dims 64/128/256, the tensor-core and CUDA-core kernels.
#include "kernels/row_attention_launch.cuh"

DECODE_BENCH_INSTANTIATE_ROW_ATTENTION(decode_bench::ContiguousKV<__nv_fp8_e4m3>)
