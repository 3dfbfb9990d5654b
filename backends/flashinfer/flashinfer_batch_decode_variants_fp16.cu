// FlashInfer's paged batch decode on CUDA cores (flashinfer_batch_decode_impl.cuh) with the attention
// variants the variants preset runs, FP16 K/V, q and o: FlashInfer's DefaultAttention with its
// sliding window (window_left) or with its soft-cap, each alone. Each compiles FlashInfer's decode
// kernels for every GQA group of its table and both shared-memory stage counts, so no other
// combination is compiled. Sinks have no path here: FlashInfer's decode kernels call no hook that
// could add a logit to the softmax's denominator (its prefill kernels do: flashinfer_sink_attention.cuh).
#include <string>
#include <type_traits>

#include "backends/flashinfer/flashinfer_batch_decode_impl.cuh"

namespace decode_bench::flashinfer_launch {
namespace {

using KV = __half;
using Window = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/true,
                                            /*logits_soft_cap=*/false, /*alibi=*/false>;
using SoftCap = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                             /*logits_soft_cap=*/true, /*alibi=*/false>;

// Calls f with a tag of the variant's softmax, after refusing what is not compiled.
template <class F>
cudaError_t with_variant(const PagedDecodeArgs<KV>& a, std::string* error, F&& f) {
  if (auto reason = paged_decode_variant_unsupported_reason(a)) return refuse(*reason, error);
  if (a.window_left >= 0) return f(std::type_identity<Window>{});
  return f(std::type_identity<SoftCap>{});
}

}  // namespace

std::optional<std::string> paged_decode_variant_unsupported_reason(const PagedDecodeArgs<KV>& a) {
  if (!paged_decode_has_variant(a)) return "no window or soft-cap asked: paged_decode_run runs it";
  if (a.window_left < -1) return "window_left " + std::to_string(a.window_left) + " must be >= -1 (-1: no window)";
  if (!(a.logits_soft_cap >= 0)) return std::string("logits_soft_cap must be >= 0 (0: off)");
  if (a.window_left >= 0 && a.logits_soft_cap != 0)
    return std::string("a window with a soft-cap is not compiled for FlashInfer's CUDA-core decode: each alone is");
  return std::nullopt;
}

cudaError_t paged_decode_variant_workspace_bytes_fp16(const PagedDecodeArgs<KV>& s, const std::int32_t* indptr_host,
                                                      std::size_t* float_bytes, std::size_t* int_bytes,
                                                      std::string* error) {
  return with_variant(s, error, [&](auto softmax) {
    using Softmax = typename decltype(softmax)::type;
    return paged_detail::workspace_bytes_with<KV, Softmax>(s, indptr_host, float_bytes, int_bytes, error);
  });
}

cudaError_t paged_decode_variant_plan_fp16(const PagedDecodeArgs<KV>& s, const std::int32_t* indptr_host,
                                           void* float_workspace, std::size_t float_bytes, void* int_workspace,
                                           void* int_workspace_host, std::size_t int_bytes, cudaStream_t stream,
                                           PagedDecodePlan* plan, std::string* error) {
  return with_variant(s, error, [&](auto softmax) {
    using Softmax = typename decltype(softmax)::type;
    return paged_detail::plan_with<KV, Softmax>(s, indptr_host, float_workspace, float_bytes, int_workspace,
                                                int_workspace_host, int_bytes, stream, plan, error);
  });
}

cudaError_t paged_decode_variant_run_fp16(const PagedDecodeArgs<KV>& a, const PagedDecodePlan& plan,
                                          void* float_workspace, void* int_workspace, cudaStream_t stream,
                                          std::string* error) {
  return with_variant(a, error, [&](auto softmax) {
    using Softmax = typename decltype(softmax)::type;
    return paged_detail::run_with<KV, Softmax>(a, plan, float_workspace, int_workspace, stream, error);
  });
}

}  // namespace decode_bench::flashinfer_launch
