#pragma once
// FlashInfer's single-sequence decode (SingleDecodeWithKVCache, its CUDA-core kernel) over one
// sequence's contiguous K/V, FP16 in and out, head dimension 128. One query token per query head;
// query head h reads KV head h / group.
//
// Layout: token t of KV head g at k[g * kv_head_stride + t * kv_token_stride] (and the same offset
// in v), in elements. decode-bench's contiguous pool (slots, H_kv, max_len, D) is, for the slot's
// base pointer, kv_head_stride = max_len * D and kv_token_stride = D (FlashInfer's "HND").
//
// lse is FlashInfer's: base 2, log2 sum_t exp2(s_t * log2 e) of the scaled scores s_t; multiply by
// ln 2 for decode-bench's natural-log lse.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace decode_bench::flashinfer_launch {

struct SingleDecodeArgs {
  const __half* q = nullptr;  // (heads_q, head_dim), device
  const __half* k = nullptr;  // device, offsets above
  const __half* v = nullptr;  // device, the offsets of k
  __half* o = nullptr;        // (heads_q, head_dim), device
  float* lse = nullptr;       // (heads_q), device, base 2; nullptr: not written
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  std::int64_t kv_len = 0;
  std::int64_t kv_head_stride = 0;   // elements
  std::int64_t kv_token_stride = 0;  // elements
  float sm_scale = 0;                // applied to q . k before the softmax
};

// Why these arguments cannot run (shape, GQA group by FlashInfer's table, strides past the kernel's
// 32-bit offsets, missing pointers), or nullopt.
std::optional<std::string> single_decode_unsupported_reason(const SingleDecodeArgs& args);

// Workspace that lets FlashInfer split a sequence longer than 256 tokens over several blocks (its
// partials and their LSE, then its MergeStates): an upper bound, a chunk being at least 256 tokens.
// Without it (workspace nullptr) one block per KV head reads the whole sequence.
std::size_t single_decode_workspace_bytes(const SingleDecodeArgs& args);

// Launches on stream (asynchronous). cudaErrorInvalidValue with *error set when the arguments are
// refused (by the checks above or by FlashInfer) or the workspace is smaller than
// single_decode_workspace_bytes; otherwise the first CUDA error. Stream capture is fine.
cudaError_t single_decode_fp16(const SingleDecodeArgs& args, void* workspace, std::size_t workspace_bytes,
                               cudaStream_t stream, std::string* error);

}  // namespace decode_bench::flashinfer_launch
