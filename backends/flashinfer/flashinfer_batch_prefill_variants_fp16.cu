// FlashInfer's batch prefill over paged KV with the attention variants the variants preset runs
// (flashinfer_batch_prefill.hpp, paged_prefill_variant_unsupported_reason), FP16 at head dim 128:
//   causal                 MaskMode::kCausal, FlashInfer's default softmax; query tiles 16 and 64
//   window                 no mask, DefaultAttention<.., sliding_window, ..> (window_left)
//   soft-cap               no mask, DefaultAttention<.., logits_soft_cap, ..>
//   sinks (and soft-cap)   no mask, SinkAttention<soft-cap> (flashinfer_sink_attention.cuh)
// the last three at query tile 16 only (one query token a request, GQA groups up to 16). Each
// combination compiles FlashInfer's kernels for every KV-step count it dispatches over at run time;
// only these combinations are, since each costs compile time.
#include <cuda_fp16.h>

#include "backends/flashinfer/flashinfer_batch_prefill_run.cuh"
#include "backends/flashinfer/flashinfer_sink_attention.cuh"

namespace decode_bench::flashinfer_launch {
namespace {

using flashinfer::MaskMode;
using T = __half;
constexpr std::uint32_t kHeadDim = kPrefillVariantHeadDim;
using Stock = prefill_detail::StockParams<T>;

template <MaskMode Mask, class Softmax, std::uint32_t MaxTileQ>
cudaError_t launch_default(const PagedPrefillArgs& a, const PagedPrefillPlan& plan, void* float_ws, void* int_ws,
                           cudaStream_t stream, std::string* error) {
  return prefill_detail::launch_head_dim<T, kHeadDim, Mask, Softmax, Stock, MaxTileQ>(
      a, plan, float_ws, int_ws, stream, error, [](Stock&) {});
}

template <bool SoftCap>
cudaError_t launch_sinks(const PagedPrefillArgs& a, const PagedPrefillPlan& plan, void* float_ws, void* int_ws,
                         cudaStream_t stream, std::string* error) {
  using Params = SinkParams<Stock>;
  return prefill_detail::launch_head_dim<T, kHeadDim, MaskMode::kNone, SinkAttention<SoftCap>, Params,
                                         kPrefillVariantMaxTileQ>(a, plan, float_ws, int_ws, stream, error,
                                                                  [&](Params& p) { p.sinks = a.sinks; });
}

template <bool Window, bool SoftCap>
using Default = flashinfer::DefaultAttention</*custom_mask=*/false, Window, SoftCap, /*alibi=*/false>;

}  // namespace

cudaError_t paged_prefill_run_variant_fp16(const PagedPrefillArgs& a, const PagedPrefillPlan& plan,
                                           void* float_workspace, void* int_workspace, cudaStream_t stream,
                                           std::string* error) {
  if (auto reason = paged_prefill_unsupported_reason(a)) return refuse(*reason, error);
  if (!paged_prefill_has_variant(a)) return refuse("no attention variant asked: paged_prefill_run_fp16 runs it", error);
  // The combination and head dim. The query tile the plan picked is checked by the launch's switch;
  // without the causal mask every request must hold one query token (total_rows = requests), so
  // the mean, rounded up, is 1 exactly then.
  const int qo_len = a.causal ? 1 : (a.total_rows + a.requests - 1) / a.requests;
  if (auto reason = paged_prefill_variant_unsupported_reason(a, qo_len)) return refuse(*reason, error);
  void* f = float_workspace;
  void* i = int_workspace;
  if (a.causal)
    return launch_default<MaskMode::kCausal, Default<false, false>, kPrefillCausalMaxTileQ>(a, plan, f, i, stream,
                                                                                           error);
  if (a.sinks != nullptr)
    return a.logits_soft_cap != 0 ? launch_sinks<true>(a, plan, f, i, stream, error)
                                  : launch_sinks<false>(a, plan, f, i, stream, error);
  if (a.window_left >= 0)
    return launch_default<MaskMode::kNone, Default<true, false>, kPrefillVariantMaxTileQ>(a, plan, f, i, stream, error);
  return launch_default<MaskMode::kNone, Default<false, true>, kPrefillVariantMaxTileQ>(a, plan, f, i, stream, error);
}

}  // namespace decode_bench::flashinfer_launch
