// The `flashinfer_tc` backend: decode through FlashInfer's tensor-core batch prefill kernel
// (BatchPrefillWithPagedKVCache, FA2), each sequence a request of one query token, as FlashInfer's
// BatchDecodeWithPagedKVCacheWrapper(use_tensor_cores=True) runs it; the GQA group is packed into
// the query tile, so every group runs (FlashInfer's CUDA-core table lacks 5, 7, 9-16 and MQA).
//   paged                      the pool's own page tables
//   contiguous                 page tables into the slots (flashinfer_slot_pages.hpp)
//   kernel shared_prefix       FlashInfer's cascade (flashinfer_cascade.hpp), suffix through the
//                              same prefill kernel
// FP16 and BF16 K/V (q and o in the same dtype) at head dims 64, 128 and 256; FlashInfer's
// PrefillPlan chooses the query tile and the KV split. Its LSE is base 2 (lse_base): the pipeline
// converts it outside timing, so run() launches FlashInfer's kernels only.
// Attention variants (FP16, head dim 128; flashinfer_variant_map.hpp): q_len query tokens a sequence
// as q_len tokens a request with FlashInfer's causal mask, as its prefill wrappers run speculative
// decoding; on one query token a window (window_left), a soft-cap, sinks (decode-bench's own
// FlashInfer variant, flashinfer_sink_attention.cuh) and sinks with a soft-cap.
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/flashinfer/flashinfer_backend_base.hpp"
#include "backends/flashinfer/flashinfer_batch_prefill.hpp"
#include "backends/flashinfer/flashinfer_cascade.hpp"
#include "backends/flashinfer/flashinfer_slot_pages.hpp"
#include "backends/flashinfer/flashinfer_steps.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"
#include "backends/flashinfer/flashinfer_variant_map.hpp"
#include "harness/backend.hpp"
#include "harness/cuda_check.hpp"
#include "kernels/traffic_model.hpp"

namespace decode_bench {
namespace {

using namespace flashinfer_launch;

class FlashInferTcBackend final : public FlashInferBackendBase {
 public:
  std::string name() const override { return "flashinfer_tc"; }

  std::optional<std::string> supports(const AttentionProblem& p) const override {
    if (auto why = common_refusal(p)) return why;
    if (p.kv_dtype != DType::fp16 && p.kv_dtype != DType::bf16)
      return "dtype " + std::string(dtype_name(p.kv_dtype)) + ": the flashinfer_tc backend runs fp16 and bf16";
    PagedPrefillArgs shape;
    shape.heads_q = p.shape.heads_q;
    shape.heads_kv = p.shape.heads_kv;
    shape.head_dim = p.shape.head_dim;
    shape.requests = shape.total_rows = 1;
    shape.page_size = 1;
    shape.sm_scale = 1;
    if (auto why = paged_prefill_unsupported_reason(shape)) return "FlashInfer's batch prefill: " + *why;
    if (auto why = variant_refusal(p)) return why;
    apply_variant(p.variant, &shape, nullptr);
    if (auto why = paged_prefill_variant_unsupported_reason(shape, p.variant.q_len))
      return p.variant.describe() + ": " + *why;
    return std::nullopt;
  }

  // q and o in the K/V dtype, as FlashInfer's wrapper defaults them.
  DType io_dtype(const AttentionProblem& p) const override { return io_dtype_for(p.kv_dtype); }

  void plan(const AttentionProblem& p, Workspace& workspace) override {
    start_plan(p, "tensor_core");
    if (p.kernel == KernelKind::shared_prefix) {
      plan_cascade_step(p, CascadeSuffix::batch_prefill, workspace);
      return;
    }
    plan_decode(p, workspace);
    base_model_ = minimum_model(p);
    if (!p.variant.plain()) basis_ = "variant_min_bytes" + basis_.substr(basis_.find('+'));
  }

 private:
  // FlashInfer's fields for the variant (flashinfer_variant_map.hpp); `sinks` the device logits, or
  // (described problems, no memory yet) null, when a stand-in marks them asked for.
  static void apply_variant(const AttentionVariant& v, PagedPrefillArgs* a, const float* sinks) {
    static const float kAsked = 0;
    const FlashInferVariantArgs f = flashinfer_variant_args(v);
    a->causal = f.causal;
    a->window_left = f.window_left;
    a->logits_soft_cap = f.logits_soft_cap;
    a->sinks = f.sinks ? (sinks != nullptr ? sinks : &kAsked) : nullptr;
  }

  // One request per sequence with its q_len query tokens (qo_indptr 0, q_len, 2 q_len, ..., B q_len:
  // decode-bench's rows b q_len + i are FlashInfer's ragged rows as they are), over its pages.
  void plan_decode(const AttentionProblem& p, Workspace& workspace) {
    const int q_len = p.variant.q_len;
    PagedPrefillArgs a;
    a.q = p.q;
    a.o = p.o;
    a.lse = p.lse;
    a.requests = p.batch;
    a.total_rows = p.batch * q_len;
    if (p.variant.sinks && p.sinks == nullptr) throw std::invalid_argument("sinks requested without sink logits");
    apply_variant(p.variant, &a, p.sinks);
    a.heads_q = p.shape.heads_q;
    a.heads_kv = p.shape.heads_kv;
    a.head_dim = p.shape.head_dim;
    a.sm_scale = static_cast<float>(p.shape.softmax_scale());
    const std::int32_t* kv_indptr_host = nullptr;
    if (p.layout == KvLayoutKind::paged) {
      a.k_pages = p.paged.k;
      a.v_pages = p.paged.v;
      a.page_indices = p.paged.page_indices;
      a.kv_indptr = p.paged.indptr;
      a.last_page_len = p.last_page_len;
      a.page_size = p.paged.page_size;
      kv_indptr_host = p.host_indptr.data();
      plan_json_["kv_access"] = "paged";
      basis_ = p.prefix ? "shared_prefix_plain_decode+flashinfer_partials" : "decode_min_bytes+flashinfer_partials";
    } else {
      slots_ = address_slots_as_pages(p, workspace);
      a.k_pages = p.contiguous.k;
      a.v_pages = p.contiguous.v;
      a.page_indices = slots_.device_indices;
      a.kv_indptr = slots_.device_indptr;
      a.last_page_len = slots_.device_last_page_len;
      a.page_size = slots_.page_size;
      a.page_stride = slots_.page_stride;
      a.head_stride = slots_.head_stride;
      a.token_stride = slots_.token_stride;
      kv_indptr_host = slots_.indptr.data();
      extra_bytes_ += slots_.table_bytes();
      plan_json_["kv_access"] = "contiguous_as_pages";
      basis_ = "decode_min_bytes+flashinfer_partials+page_tables";
    }
    qo_indptr_.resize(p.batch + 1);
    for (int b = 0; b <= p.batch; ++b) qo_indptr_[b] = b * q_len;
    auto* d_qo = static_cast<std::int32_t*>(workspace.allocate(qo_indptr_.size() * sizeof(std::int32_t)));
    DB_CUDA_CHECK(cudaMemcpyAsync(d_qo, qo_indptr_.data(), qo_indptr_.size() * sizeof(std::int32_t),
                                  cudaMemcpyHostToDevice, workspace.stream()));
    a.qo_indptr = d_qo;
    PlannedStep step = plan_prefill_step(a, p.kv_dtype, qo_indptr_.data(), kv_indptr_host, workspace);
    launch_ = std::move(step.run);
    extra_bytes_ += step.partial_bytes;
    plan_json_.update(step.plan);
    plan_json_.update({{"family", "flashinfer_prefill_as_decode"}, {"page_size", a.page_size}, {"requests", p.batch}});
    if (!p.variant.plain())
      plan_json_["flashinfer_variant"] = {{"mask", a.causal ? "causal" : "none"},
                                          {"qo_len", q_len},
                                          {"window_left", a.window_left},
                                          {"logits_soft_cap", a.logits_soft_cap},
                                          {"sinks", a.sinks != nullptr}};
  }

  std::vector<std::int32_t> qo_indptr_;  // host copy of the plan's upload (kept until the next plan)
};

}  // namespace

std::unique_ptr<Backend> make_flashinfer_tc_backend() { return std::make_unique<FlashInferTcBackend>(); }

}  // namespace decode_bench
