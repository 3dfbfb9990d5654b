// Compile-time check: the headers of both decode stacks, the split-K CUDA-core flash-decode
// (kernels/flash_decode*.cuh) and the tensor-core row attention (kernels/row_attention_*.cuh), in
// one translation unit. Each stack defines its own device types and helpers; a name both define
// alike (one definition rule) stops this file compiling, so the two stay includable together (a
// launcher that plans on one and falls back to the other needs both). Compiled into an object
// library of the test build (tests/CMakeLists.txt); nothing runs.
#include <type_traits>

#include "kernels/decode_dispatch.cuh"
#include "kernels/flash_decode.cuh"
#include "kernels/flash_decode_launch.cuh"
#include "kernels/flash_decode_variant_launch.cuh"
#include "kernels/row_attention_common.cuh"
#include "kernels/row_attention_launch.cuh"
#include "kernels/row_attention_mma.cuh"
#include "kernels/row_attention_simt.cuh"
#include "kernels/row_attention_variant.cuh"

namespace decode_bench::device {

// The block-work types of the two stacks are different types with different members.
static_assert(!std::is_same_v<SplitBlockWork, RowBlockWork>);
static_assert(std::is_member_function_pointer_v<decltype(&SplitBlockWork::partial_row)>);
static_assert(std::is_same_v<decltype(RowBlockWork::item), ItemView>);

}  // namespace decode_bench::device
