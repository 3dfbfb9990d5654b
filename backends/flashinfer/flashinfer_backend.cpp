// The `flashinfer` backend: FlashInfer's CUDA-core decode kernels (backends/flashinfer/ launchers)
// behind harness/backend.hpp, measured by the same pipeline as decode-bench's own kernels.
//   contiguous, one sequence   SingleDecodeWithKVCache over its slot (FlashInfer's contiguous API)
//   contiguous, a batch        BatchDecodeWithPagedKVCache over page tables into the slots
//                              (FlashInfer has no batched contiguous decode)
//   paged                      BatchDecodeWithPagedKVCache over the pool's own page tables, also the
//                              plain decode of a shared-prefix batch's forked pages (batch_decode)
//   kernel shared_prefix       FlashInfer's cascade (flashinfer_cascade.hpp): batch prefill per
//                              shared level, the suffixes through BatchDecodeWithPagedKVCache
// Head dim 128; K/V in FP16 or BF16 (q and o in the same type), or FP8 E4M3 / E5M2 (q and o in
// FP16, the per-KV-head scales applied in FlashInfer's kernel by an attention variant:
// flashinfer_kv_head_scale.cuh); the cascade in FP16. FlashInfer plans its own splits. Its LSE is base 2
// (lse_base): the pipeline converts it outside timing, so run() launches FlashInfer's kernels only.
// Attention variants (FP16): a window (FlashInfer's window_left) or a logit soft-cap through the
// batch decode at any batch (flashinfer_variant_map.hpp); several query tokens and sinks have no
// path in its CUDA-core decode (flashinfer_tc runs them).
// docs/decisions/flashinfer-backend.md says what is planned beyond this.
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/flashinfer/flashinfer_backend_base.hpp"
#include "backends/flashinfer/flashinfer_batch_decode.hpp"
#include "backends/flashinfer/flashinfer_cascade.hpp"
#include "backends/flashinfer/flashinfer_single_decode.hpp"
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

// Calls f with a tag whose ::type is the C++ storage type of a K/V dtype the launchers compile.
template <class F>
void with_kv_type(DType kv_dtype, F&& f) {
  switch (kv_dtype) {
    case DType::fp16: return f(std::type_identity<__half>{});
    case DType::bf16: return f(std::type_identity<__nv_bfloat16>{});
    case DType::fp8_e4m3: return f(std::type_identity<__nv_fp8_e4m3>{});
    case DType::fp8_e5m2: return f(std::type_identity<__nv_fp8_e5m2>{});
    case DType::fp32: break;
  }
  throw std::invalid_argument("dtype " + std::string(dtype_name(kv_dtype)) + ": no FlashInfer launcher compiled");
}

class FlashInferBackend final : public FlashInferBackendBase {
 public:
  std::string name() const override { return "flashinfer"; }

  std::optional<std::string> supports(const AttentionProblem& p) const override {
    if (auto why = common_refusal(p)) return why;
    if (p.kv_dtype == DType::fp32)
      return std::string("dtype fp32: FlashInfer's CUDA-core decode reads fp16, bf16 or fp8 K/V");
    if (auto why = cuda_core_decode_unsupported_reason(p.shape.heads_q, p.shape.heads_kv, p.shape.head_dim))
      return "FlashInfer's CUDA-core decode: " + *why;
    return variant_unsupported(p);
  }

  // The variants FlashInfer's CUDA-core decode takes here: a window or a soft-cap, each alone.
  static std::optional<std::string> variant_unsupported(const AttentionProblem& p) {
    if (auto why = variant_refusal(p)) return why;
    if (p.variant.plain()) return std::nullopt;
    if (p.variant.q_len > 1)
      return "q_len " + std::to_string(p.variant.q_len) +
             ": FlashInfer's CUDA-core decode takes one query token a request (flashinfer_tc runs q_len > 1 "
             "through its batch prefill with a causal mask)";
    if (p.variant.sinks)
      return std::string("sinks: FlashInfer 0.6.18's CUDA-core decode kernels have no sink term and call no variant "
                         "hook that could add one (its prefill kernels do: flashinfer_tc runs sinks)");
    const FlashInferVariantArgs v = flashinfer_variant_args(p.variant);
    PagedDecodeArgs<__half> shape;
    shape.window_left = v.window_left;
    shape.logits_soft_cap = v.logits_soft_cap;
    if (auto why = paged_decode_variant_unsupported_reason(shape)) return p.variant.describe() + ": " + *why;
    return std::nullopt;
  }

  // The 16-bit type FlashInfer's kernel reads q in and writes o in: the K/V type for BF16, else FP16.
  DType io_dtype(const AttentionProblem& p) const override { return io_dtype_for(p.kv_dtype); }

  void plan(const AttentionProblem& p, Workspace& workspace) override {
    start_plan(p, "cuda_core");
    if (dtype_is_fp8(p.kv_dtype))
      plan_json_["variant"] = {{"name", "kv_head_scale"},
                               {"k_scale", "per KV head, on the logits (LogitsTransform)"},
                               {"v_scale", "per KV head, on the output (OutputTransform)"}};
    if (p.kernel == KernelKind::shared_prefix) {
      plan_cascade_step(p, CascadeSuffix::cuda_core_decode, workspace);
      return;
    }
    with_kv_type(p.kv_dtype, [&](auto kv_tag) {
      using KV = typename decltype(kv_tag)::type;
      // A variant runs the batch decode at batch 1 too (the single decode has no variant compiled).
      if (p.layout == KvLayoutKind::contiguous && p.batch == 1 && p.variant.plain())
        plan_single<KV>(p, workspace);
      else
        plan_batch<KV>(p, workspace);
    });
    base_model_ = minimum_model(p);
    if (!p.variant.plain()) {
      // The window's tokens are the minimum; FlashInfer's CUDA-core decode reads the whole
      // sequence and masks what lies before the window, so the rest is its extra traffic.
      const double masked = window_masked_bytes(p);
      extra_bytes_ += masked;
      basis_ = "variant_min_bytes" + basis_.substr(basis_.find('+'));
      if (masked > 0) basis_ += "+masked_window_tokens";
    }
  }

 private:
  // SingleDecodeWithKVCache over the one slot, with the workspace that lets it split.
  template <class KV>
  void plan_single(const AttentionProblem& p, Workspace& workspace) {
    using IO = io_type_of<KV>;
    const ContiguousKV<void>& kv = p.contiguous;
    SingleDecodeArgs<KV> a;
    a.q = static_cast<const IO*>(p.q);
    a.k = static_cast<const KV*>(kv.k);
    a.v = static_cast<const KV*>(kv.v);
    a.o = static_cast<IO*>(p.o);
    a.lse = p.lse;
    a.k_scale = kv.k_scale;
    a.v_scale = kv.v_scale;
    a.heads_q = p.shape.heads_q;
    a.heads_kv = p.shape.heads_kv;
    a.head_dim = p.shape.head_dim;
    a.kv_len = p.host_seq_lens.at(0);
    a.kv_head_stride = kv.head_stride;
    a.kv_token_stride = kv.head_dim;
    a.sm_scale = static_cast<float>(p.shape.softmax_scale());
    if (auto why = single_decode_unsupported_reason(a)) throw std::invalid_argument("FlashInfer single decode: " + *why);
    const std::size_t bytes = single_decode_workspace_bytes(a);
    void* ws = workspace.allocate(bytes);
    launch_ = [a, ws, bytes](cudaStream_t s) { return single_decode(a, ws, bytes, s, nullptr); };
    // FlashInfer picks the chunk count at launch (from occupancy, chunks of at least 256 tokens):
    // its partials are counted at that bound.
    const std::int64_t max_chunks = bytes == 0 ? 1 : (a.kv_len + 255) / 256;
    if (max_chunks > 1) extra_bytes_ += 2.0 * static_cast<double>(bytes);
    basis_ = "decode_min_bytes+flashinfer_partials_at_most";
    plan_json_.update({{"family", "flashinfer_single_decode"},
                       {"kv_access", "contiguous"},
                       {"max_chunks", max_chunks},
                       {"workspace_bytes", bytes}});
  }

  // BatchDecodeWithPagedKVCache: FlashInfer's plan (its scheduler and work list), then its run.
  template <class KV>
  void plan_batch(const AttentionProblem& p, Workspace& workspace) {
    using IO = io_type_of<KV>;
    PagedDecodeArgs<KV> a;
    a.q = static_cast<const IO*>(p.q);
    a.o = static_cast<IO*>(p.o);
    a.lse = p.lse;
    a.batch = p.batch;
    a.heads_q = p.shape.heads_q;
    a.heads_kv = p.shape.heads_kv;
    a.head_dim = p.shape.head_dim;
    a.sm_scale = static_cast<float>(p.shape.softmax_scale());
    const std::int32_t* indptr_host = nullptr;
    if (p.layout == KvLayoutKind::paged) {
      a.k_pages = static_cast<const KV*>(p.paged.k);
      a.v_pages = static_cast<const KV*>(p.paged.v);
      a.k_scale = p.paged.k_scale;
      a.v_scale = p.paged.v_scale;
      a.page_indices = p.paged.page_indices;
      a.indptr = p.paged.indptr;
      a.last_page_len = p.last_page_len;
      a.page_size = p.paged.page_size;
      indptr_host = p.host_indptr.data();
      plan_json_["kv_access"] = "paged";
      basis_ = p.prefix ? "shared_prefix_plain_decode+flashinfer_partials"
                        : "decode_min_bytes+flashinfer_partials";
    } else {
      slots_ = address_slots_as_pages(p, workspace);
      a.k_pages = static_cast<const KV*>(p.contiguous.k);
      a.v_pages = static_cast<const KV*>(p.contiguous.v);
      a.k_scale = p.contiguous.k_scale;
      a.v_scale = p.contiguous.v_scale;
      a.page_indices = slots_.device_indices;
      a.indptr = slots_.device_indptr;
      a.last_page_len = slots_.device_last_page_len;
      a.page_size = slots_.page_size;
      a.page_stride = slots_.page_stride;
      a.head_stride = slots_.head_stride;
      a.token_stride = slots_.token_stride;
      extra_bytes_ += slots_.table_bytes();
      indptr_host = slots_.indptr.data();
      plan_json_["kv_access"] = "contiguous_as_pages";
      basis_ = "decode_min_bytes+flashinfer_partials+page_tables";
    }
    if (!p.variant.plain()) {
      if constexpr (std::is_same_v<KV, __half>) {
        plan_variant(p, a, indptr_host, workspace);
        return;
      }
      throw std::invalid_argument(p.variant.describe() + ": FlashInfer's variants are compiled for fp16");
    }
    std::string error;
    std::size_t float_bytes = 0, int_bytes = 0;
    check_flashinfer(paged_decode_workspace_bytes(a, indptr_host, &float_bytes, &int_bytes, &error), error, "plan");
    void* float_ws = workspace.allocate(float_bytes);
    void* int_ws = workspace.allocate(int_bytes);
    int_host_.assign(int_bytes, 0);
    PagedDecodePlan plan;
    check_flashinfer(paged_decode_plan(a, indptr_host, float_ws, float_bytes, int_ws, int_host_.data(), int_bytes,
                                       workspace.stream(), &plan, &error),
                     error, "plan");
    launch_ = [a, plan, float_ws, int_ws](cudaStream_t s) { return paged_decode_run(a, plan, float_ws, int_ws, s, nullptr); };
    // Split work items write their partial o (in o's type) and lse (fp32) and the merge reads them back.
    if (plan.split_kv)
      extra_bytes_ += 2.0 * static_cast<double>(plan.padded_batch_size) * p.shape.heads_q *
                      (p.shape.head_dim * sizeof(IO) + sizeof(float));
    plan_json_.update({{"family", "flashinfer_batch_decode"},
                       {"page_size", a.page_size},
                       {"split_kv", plan.split_kv},
                       {"work_items", plan.padded_batch_size},
                       {"float_workspace_bytes", float_bytes},
                       {"int_workspace_bytes", int_bytes}});
  }

  // The batch decode with FlashInfer's window_left or logits_soft_cap (flashinfer_variant_map.hpp).
  void plan_variant(const AttentionProblem& p, PagedDecodeArgs<__half> a, const std::int32_t* indptr_host,
                    Workspace& workspace) {
    const FlashInferVariantArgs v = flashinfer_variant_args(p.variant);
    a.window_left = v.window_left;
    a.logits_soft_cap = v.logits_soft_cap;
    PlannedStep step = plan_decode_step_fp16(a, indptr_host, workspace);
    launch_ = std::move(step.run);
    extra_bytes_ += step.partial_bytes;
    plan_json_.update(step.plan);
    plan_json_.update({{"family", "flashinfer_batch_decode"},
                       {"page_size", a.page_size},
                       {"flashinfer_variant", {{"window_left", a.window_left}, {"logits_soft_cap", a.logits_soft_cap}}}});
  }

  // K and V of the tokens before each sequence's window (read and masked by FlashInfer's CUDA-core
  // decode), and, paged, the page-table entries of the pages holding only such tokens.
  static double window_masked_bytes(const AttentionProblem& p) {
    if (p.variant.window == 0) return 0;
    const double row = static_cast<double>(p.shape.head_dim) * dtype_bytes(p.kv_dtype) * p.shape.heads_kv;
    double bytes = 0;
    for (const std::int32_t len : p.host_seq_lens) {
      const VisibleRange r = read_range(len, p.variant);
      bytes += 2.0 * row * static_cast<double>(r.begin);
      if (p.layout == KvLayoutKind::paged) bytes += 4.0 * static_cast<double>(r.begin / p.paged.page_size);
    }
    return bytes;
  }

  std::vector<unsigned char> int_host_;  // the plan's host work list (kept until the next plan)
};

}  // namespace

std::unique_ptr<Backend> make_flashinfer_backend() { return std::make_unique<FlashInferBackend>(); }

}  // namespace decode_bench
