#pragma once
// FlashInfer's single-sequence decode (SingleDecodeWithKVCache, its CUDA-core kernel) over one
// sequence's contiguous K/V, head dimension 128, for each K/V type of flashinfer_types.hpp (q and o
// in io_type_of<KV>). One query token per query head; query head h reads KV head h / group.
//
// Layout: token t of KV head g at k[g * kv_head_stride + t * kv_token_stride] (and the same offset
// in v), in elements. decode-bench's contiguous pool (slots, H_kv, max_len, D) is, for the slot's
// base pointer, kv_head_stride = max_len * D and kv_token_stride = D (FlashInfer's "HND").
//
// FP8 K/V: an element of KV head g is stored x k_scale[g] (or v_scale[g]), decode-bench's
// per-KV-head scales (kernels/fp8_quantize.hpp); the kernel applies them (flashinfer_kv_head_scale.cuh).
//
// lse is FlashInfer's: base 2, log2 sum_t exp2(s_t * log2 e) of the scaled scores s_t; multiply by
// ln 2 for decode-bench's natural-log lse.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include <cuda_runtime.h>

#include "backends/flashinfer/flashinfer_support.hpp"
#include "backends/flashinfer/flashinfer_types.hpp"

namespace decode_bench::flashinfer_launch {

template <InstantiatedKv KV>
struct SingleDecodeArgs {
  using IO = io_type_of<KV>;
  const IO* q = nullptr;  // (heads_q, head_dim), device
  const KV* k = nullptr;  // device, offsets above
  const KV* v = nullptr;  // device, the offsets of k
  IO* o = nullptr;        // (heads_q, head_dim), device
  float* lse = nullptr;   // (heads_q), device, base 2; nullptr: not written
  const float* k_scale = nullptr;  // (heads_kv), device: FP8 K/V only, required there
  const float* v_scale = nullptr;  // (heads_kv), device: FP8 K/V only, required there
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  std::int64_t kv_len = 0;
  std::int64_t kv_head_stride = 0;   // elements
  std::int64_t kv_token_stride = 0;  // elements
  float sm_scale = 0;                // applied to q . k before the softmax
};

// FlashInfer never splits a sequence into chunks shorter than this (decode.cuh).
inline constexpr std::int64_t kSingleDecodeMinChunk = 256;

// Why these arguments cannot run (shape, GQA group by FlashInfer's table, strides past the kernel's
// 32-bit offsets, missing pointers or scales), or nullopt.
template <InstantiatedKv KV>
std::optional<std::string> single_decode_unsupported_reason(const SingleDecodeArgs<KV>& a) {
  if (auto reason = cuda_core_decode_unsupported_reason(a.heads_q, a.heads_kv, a.head_dim)) return reason;
  if (a.kv_len < 1) return "kv_len " + std::to_string(a.kv_len) + " must be >= 1";
  if (a.kv_token_stride < a.head_dim || a.kv_head_stride < a.head_dim) return "K/V strides must be >= head_dim";
  // The kernel forms element offsets in 32 bits, up to a tile past the last token.
  const double last = static_cast<double>(a.heads_kv) * static_cast<double>(a.kv_head_stride) +
                      static_cast<double>(a.kv_len + kSingleDecodeMinChunk) * static_cast<double>(a.kv_token_stride);
  if (last > static_cast<double>(std::numeric_limits<std::uint32_t>::max())) {
    std::ostringstream s;
    s << "K/V of " << a.heads_kv << " heads x " << a.kv_len << " tokens exceed the 32-bit element offsets of "
      << "FlashInfer's single-decode kernel";
    return s.str();
  }
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr) return "q, k, v and o must be set";
  if (auto reason = kv_scales_reason<KV>(a.k_scale, a.v_scale)) return reason;
  if (!(a.sm_scale > 0)) return "sm_scale must be > 0";
  return std::nullopt;
}

// Workspace that lets FlashInfer split a sequence longer than 256 tokens over several blocks (its
// partials in the output type and their float LSE, then its MergeStates): an upper bound, a chunk
// being at least 256 tokens. Without it (workspace nullptr) one block per KV head reads the whole
// sequence.
template <InstantiatedKv KV>
std::size_t single_decode_workspace_bytes(const SingleDecodeArgs<KV>& a) {
  if (a.kv_len <= kSingleDecodeMinChunk) return 0;
  const auto chunks = static_cast<std::size_t>((a.kv_len + kSingleDecodeMinChunk - 1) / kSingleDecodeMinChunk);
  return chunks * static_cast<std::size_t>(a.heads_q) *
         (static_cast<std::size_t>(a.head_dim) * sizeof(io_type_of<KV>) + sizeof(float));
}

// Launches on stream (asynchronous). cudaErrorInvalidValue with *error set when the arguments are
// refused (by the checks above or by FlashInfer) or the workspace is smaller than
// single_decode_workspace_bytes; otherwise the first CUDA error. Stream capture is fine. One
// translation unit per K/V type defines it (flashinfer_single_decode_<dtype>.cu).
template <InstantiatedKv KV>
cudaError_t single_decode(const SingleDecodeArgs<KV>& args, void* workspace, std::size_t workspace_bytes,
                          cudaStream_t stream, std::string* error);

}  // namespace decode_bench::flashinfer_launch
