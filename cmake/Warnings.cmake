# Host warnings on and clean; nvcc forwards the same set to the host compiler for .cu files.
set(DECODE_BENCH_HOST_WARNINGS -Wall -Wextra -Wno-unused-parameter)

function(decode_bench_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${DECODE_BENCH_HOST_WARNINGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter --expt-relaxed-constexpr>)
endfunction()
