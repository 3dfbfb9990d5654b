// FlashInfer's MergeStateInPlace and MergeState (attention/cascade.cuh) for FP16 and BF16 states
// (flashinfer_merge_state.hpp); its own switch compiles head dimensions 64 to 512.
#include "backends/flashinfer/flashinfer_merge_state.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <flashinfer/attention/cascade.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

// FlashInfer's merge kernels run one block of (head_dim / vec) x heads threads per row, vec =
// max(16 bytes / 2, head_dim / 32) = 8 for 16-bit types up to head dimension 256.
constexpr int kVec = 8;

template <class T>
cudaError_t in_place(const MergeStateArgs& a, cudaStream_t stream) {
  return flashinfer::MergeStateInPlace<T>(static_cast<T*>(a.o_a), a.lse_a, static_cast<T*>(const_cast<void*>(a.o_b)),
                                          const_cast<float*>(a.lse_b), static_cast<std::uint32_t>(a.rows),
                                          static_cast<std::uint32_t>(a.heads), static_cast<std::uint32_t>(a.head_dim),
                                          /*mask=*/nullptr, stream);
}

template <class T>
cudaError_t out_of_place(const MergeStateArgs& a, cudaStream_t stream) {
  return flashinfer::MergeState<T, T>(static_cast<T*>(a.o_a), a.lse_a, static_cast<T*>(const_cast<void*>(a.o_b)),
                                      const_cast<float*>(a.lse_b), static_cast<T*>(a.o_out), a.lse_out,
                                      static_cast<std::uint32_t>(a.rows), static_cast<std::uint32_t>(a.heads),
                                      static_cast<std::uint32_t>(a.head_dim), stream);
}

}  // namespace

std::optional<std::string> merge_state_unsupported_reason(const MergeStateArgs& s) {
  if (s.dtype != DType::fp16 && s.dtype != DType::bf16)
    return "dtype " + std::string(dtype_name(s.dtype)) + ": the FlashInfer merge launchers take fp16 and bf16";
  if (s.head_dim != 64 && s.head_dim != 128 && s.head_dim != 256)
    return "head_dim " + std::to_string(s.head_dim) + ": the FlashInfer merge launchers take head_dim 64, 128 and 256";
  const int threads_per_head = s.head_dim / kVec;
  if (s.heads < 1 || s.heads * threads_per_head > 1024)
    return "heads " + std::to_string(s.heads) + ": FlashInfer's merge runs a block of heads x " +
           std::to_string(threads_per_head) + " threads at head_dim " + std::to_string(s.head_dim) + ", so 1 .. " +
           std::to_string(1024 / threads_per_head);
  if (s.rows < 0) return "rows " + std::to_string(s.rows) + " must be >= 0";
  return std::nullopt;
}

cudaError_t merge_state_in_place(const MergeStateArgs& a, cudaStream_t stream, std::string* error) {
  if (auto reason = merge_state_unsupported_reason(a)) return refuse(*reason, error);
  if (a.o_a == nullptr || a.lse_a == nullptr || a.o_b == nullptr || a.lse_b == nullptr)
    return refuse("o_a, lse_a, o_b and lse_b must be set", error);
  if (a.rows == 0) return cudaSuccess;
  return call_flashinfer([&] { return a.dtype == DType::fp16 ? in_place<__half>(a, stream) : in_place<__nv_bfloat16>(a, stream); },
                         error);
}

cudaError_t merge_state(const MergeStateArgs& a, cudaStream_t stream, std::string* error) {
  if (auto reason = merge_state_unsupported_reason(a)) return refuse(*reason, error);
  if (a.o_a == nullptr || a.lse_a == nullptr || a.o_b == nullptr || a.lse_b == nullptr || a.o_out == nullptr ||
      a.lse_out == nullptr)
    return refuse("o_a, lse_a, o_b, lse_b, o_out and lse_out must be set", error);
  if (a.rows == 0) return cudaSuccess;
  return call_flashinfer(
      [&] { return a.dtype == DType::fp16 ? out_of_place<__half>(a, stream) : out_of_place<__nv_bfloat16>(a, stream); },
      error);
}

}  // namespace decode_bench::flashinfer_launch
