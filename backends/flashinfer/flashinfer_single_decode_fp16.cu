// FlashInfer's SingleDecodeWithKVCacheDispatched instantiated for FP16 Q/K/V/O, head dimension 128,
// no positional encoding and its default softmax variant (no mask, window, soft cap or ALiBi): the
// six GQA groups of its dispatch table, each one kernel, and the MergeStates kernel of its split path.
#include "backends/flashinfer/flashinfer_single_decode.hpp"

#include <limits>
#include <sstream>

#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/variants.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

using Params = flashinfer::SingleDecodeParams<__half, __half, __half>;
using Variant = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                             /*logits_soft_cap=*/false, /*alibi=*/false>;

// FlashInfer never splits a sequence into chunks shorter than this (decode.cuh).
constexpr std::int64_t kMinChunk = 256;

}  // namespace

std::optional<std::string> single_decode_unsupported_reason(const SingleDecodeArgs& a) {
  if (auto reason = cuda_core_decode_unsupported_reason(a.heads_q, a.heads_kv, a.head_dim)) return reason;
  if (a.kv_len < 1) return "kv_len " + std::to_string(a.kv_len) + " must be >= 1";
  if (a.kv_token_stride < a.head_dim || a.kv_head_stride < a.head_dim) return "K/V strides must be >= head_dim";
  // The kernel forms element offsets in 32 bits, up to a tile past the last token.
  const double last = static_cast<double>(a.heads_kv) * static_cast<double>(a.kv_head_stride) +
                      static_cast<double>(a.kv_len + kMinChunk) * static_cast<double>(a.kv_token_stride);
  if (last > static_cast<double>(std::numeric_limits<std::uint32_t>::max())) {
    std::ostringstream s;
    s << "K/V of " << a.heads_kv << " heads x " << a.kv_len << " tokens exceed the 32-bit element offsets of "
      << "FlashInfer's single-decode kernel";
    return s.str();
  }
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr) return "q, k, v and o must be set";
  if (!(a.sm_scale > 0)) return "sm_scale must be > 0";
  return std::nullopt;
}

std::size_t single_decode_workspace_bytes(const SingleDecodeArgs& a) {
  if (a.kv_len <= kMinChunk) return 0;
  const auto chunks = static_cast<std::size_t>((a.kv_len + kMinChunk - 1) / kMinChunk);
  // Partial outputs in the output type, then one float LSE each (decode.cuh's tmp / tmp_lse).
  return chunks * static_cast<std::size_t>(a.heads_q) * (static_cast<std::size_t>(a.head_dim) * sizeof(__half) + sizeof(float));
}

cudaError_t single_decode_fp16(const SingleDecodeArgs& a, void* workspace, std::size_t workspace_bytes,
                               cudaStream_t stream, std::string* error) {
  if (auto reason = single_decode_unsupported_reason(a)) return refuse(*reason, error);
  if (workspace != nullptr && workspace_bytes < single_decode_workspace_bytes(a)) {
    return refuse("workspace of " + std::to_string(workspace_bytes) + " bytes, " +
                      std::to_string(single_decode_workspace_bytes(a)) + " needed",
                  error);
  }
  Params p;
  p.q = const_cast<__half*>(a.q);
  p.k = const_cast<__half*>(a.k);
  p.v = const_cast<__half*>(a.v);
  p.o = a.o;
  p.lse = a.lse;
  p.kv_len = static_cast<std::uint32_t>(a.kv_len);
  p.num_qo_heads = static_cast<std::uint32_t>(a.heads_q);
  p.num_kv_heads = static_cast<std::uint32_t>(a.heads_kv);
  p.q_stride_n = static_cast<std::uint32_t>(a.heads_q * a.head_dim);
  p.q_stride_h = static_cast<std::uint32_t>(a.head_dim);
  p.kv_stride_n = static_cast<std::uint32_t>(a.kv_token_stride);
  p.kv_stride_h = static_cast<std::uint32_t>(a.kv_head_stride);
  p.window_left = -1;
  p.sm_scale = a.sm_scale;
  p.rope_rcp_scale = 1.f;
  p.rope_rcp_theta = 1.f;
  auto* tmp = workspace_bytes > 0 ? static_cast<__half*>(workspace) : nullptr;
  return call_flashinfer(
      [&] {
        return flashinfer::SingleDecodeWithKVCacheDispatched<kHeadDim, flashinfer::PosEncodingMode::kNone, Variant>(
            p, tmp, stream);
      },
      error);
}

}  // namespace decode_bench::flashinfer_launch
