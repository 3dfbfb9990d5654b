#pragma once
// FlashInfer's merge of two attention states (attention/cascade.cuh), as its cascade composition
// uses it: MergeStateInPlace folds state b into state a (o_a, lse_a updated), MergeState writes
// the merge of a and b to a third place. A state is o (rows, heads, head_dim) of the o dtype and
// lse (rows, heads) float in base 2, FlashInfer's own. Head dimension 64, 128 or 256 (the batch
// prefill's); FP16 and BF16.
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "kernels/dtype.hpp"

namespace decode_bench::flashinfer_launch {

struct MergeStateArgs {
  DType dtype = DType::fp16;  // of o: fp16 or bf16
  void* o_a = nullptr;        // device; in place: updated
  float* lse_a = nullptr;     // device; in place: updated
  const void* o_b = nullptr;  // device
  const float* lse_b = nullptr;
  void* o_out = nullptr;      // device, MergeState only
  float* lse_out = nullptr;   // device, MergeState only
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
};

// Why these shapes cannot be merged (dtype, head_dim, heads: FlashInfer's block is heads x
// head_dim / 8 threads for 16-bit states, at most 1024), or nullopt. Pointers are not looked at.
std::optional<std::string> merge_state_unsupported_reason(const MergeStateArgs& shape);

// One launch each on stream; capturable.
cudaError_t merge_state_in_place(const MergeStateArgs& args, cudaStream_t stream, std::string* error);
cudaError_t merge_state(const MergeStateArgs& args, cudaStream_t stream, std::string* error);

}  // namespace decode_bench::flashinfer_launch
