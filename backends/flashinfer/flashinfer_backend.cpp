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
// docs/decisions/flashinfer-backend.md says what is planned beyond this.
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/flashinfer/flashinfer_batch_decode.hpp"
#include "backends/flashinfer/flashinfer_cascade.hpp"
#include "backends/flashinfer/flashinfer_single_decode.hpp"
#include "backends/flashinfer/flashinfer_slot_pages.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"
#include "harness/backend.hpp"
#include "harness/cuda_check.hpp"
#include "kernels/traffic_model.hpp"

namespace decode_bench {
namespace {

using namespace flashinfer_launch;

// Turns a launcher's failure into the exception the pipeline expects from plan(): a refusal
// (cudaErrorInvalidValue with FlashInfer's or our sentence) is the point's error, anything else
// CUDA's.
void check(cudaError_t status, const std::string& error, const char* what) {
  if (status == cudaSuccess) return;
  if (status == cudaErrorInvalidValue) throw std::invalid_argument(std::string("FlashInfer ") + what + ": " + error);
  throw CudaError(status, std::string("FlashInfer ") + what + ": " + cudaGetErrorName(status) + " (" + error + ")");
}

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

class FlashInferBackend final : public Backend {
 public:
  std::string name() const override { return "flashinfer"; }
  // The flashinfer-python release whose headers this build compiled.
  std::string version() const override { return std::string(flashinfer_version()); }

  std::optional<std::string> supports(const AttentionProblem& p) const override {
    if (!kernel_uses_backend(p.kernel))
      return "kernel " + std::string(kernel_name(p.kernel)) + " is not computed by a backend";
    if (p.kernel == KernelKind::baseline) return std::string("kernel baseline is decode-bench's 3-kernel decode: FlashInfer has none");
    if (p.kernel == KernelKind::shared_prefix) {
      if (auto why = cascade_unsupported_reason(p)) return why;
      if (p.prefix_overlap)
        return std::string("prefix_overlap true: FlashInfer's cascade runs its steps in order on one stream "
                           "(set prefix_overlap false)");
    }
    if (p.kv_dtype == DType::fp32)
      return std::string("dtype fp32: FlashInfer's CUDA-core decode reads fp16, bf16 or fp8 K/V");
    if (auto why = cuda_core_decode_unsupported_reason(p.shape.heads_q, p.shape.heads_kv, p.shape.head_dim))
      return "FlashInfer's CUDA-core decode: " + *why;
    if (p.splits != 0)
      return "blocks " + std::to_string(p.splits) + ": FlashInfer's plan chooses its own splits";
    for (std::size_t b = 0; b < p.host_seq_lens.size(); ++b)
      if (p.host_seq_lens[b] < 1)
        return "sequence " + std::to_string(b) + " has no token: FlashInfer's decode needs at least one per sequence";
    return std::nullopt;
  }

  // The 16-bit type FlashInfer's kernel reads q in and writes o in: the K/V type for BF16, else FP16.
  DType io_dtype(const AttentionProblem& p) const override {
    return p.kv_dtype == DType::bf16 ? DType::bf16 : DType::fp16;
  }
  LseBase lse_base() const override { return LseBase::two; }

  void plan(const AttentionProblem& p, Workspace& workspace) override {
    if (auto why = supports(p)) throw std::invalid_argument(*why);
    if (p.io_dtype != io_dtype(p))
      throw std::invalid_argument("the flashinfer backend reads q and writes o in " +
                                  std::string(dtype_name(io_dtype(p))) + " for " +
                                  std::string(dtype_name(p.kv_dtype)) + " K/V, not " +
                                  std::string(dtype_name(p.io_dtype)));
    launch_ = nullptr;
    plan_json_ = {{"path", "cuda_core"}, {"flashinfer", version()}};
    if (dtype_is_fp8(p.kv_dtype))
      plan_json_["variant"] = {{"name", "kv_head_scale"},
                               {"k_scale", "per KV head, on the logits (LogitsTransform)"},
                               {"v_scale", "per KV head, on the output (OutputTransform)"}};
    extra_bytes_ = 0;
    if (p.kernel == KernelKind::shared_prefix) {
      plan_cascade_cuda_core(p, workspace);
      return;
    }
    with_kv_type(p.kv_dtype, [&](auto kv_tag) {
      using KV = typename decltype(kv_tag)::type;
      if (p.layout == KvLayoutKind::contiguous && p.batch == 1)
        plan_single<KV>(p, workspace);
      else
        plan_batch<KV>(p, workspace);
    });
    base_model_ = minimum_model(p);
  }

  cudaError_t run(cudaStream_t stream) override {
    if (!launch_) return cudaErrorNotReady;
    return launch_(stream);
  }

  nlohmann::json plan_json() const override { return plan_json_; }

  std::optional<BackendTrafficModel> traffic_model(const AttentionProblem&) const override {
    BackendTrafficModel m{base_model_, basis_};
    m.model.extra_bytes += extra_bytes_;
    return m;
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

  // FlashInfer's cascade (flashinfer_cascade.hpp) with the suffix through the CUDA-core batch decode.
  void plan_cascade_cuda_core(const AttentionProblem& p, Workspace& workspace) {
    PlannedCascade c = plan_cascade(p, CascadeSuffix::cuda_core_decode, workspace);
    launch_ = std::move(c.run);
    extra_bytes_ = c.extra_bytes;
    plan_json_.update(c.plan);
    plan_json_.update({{"family", "flashinfer_cascade"}, {"kv_access", "paged"}, {"launches", c.launches}});
    basis_ = "shared_prefix_unique_bytes+level_states+flashinfer_partials";
    base_model_ = shared_prefix_traffic_model(p.shape, p.kv_dtype, *p.prefix, true, 1);
    base_model_.extra_bytes = 0;
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
    std::string error;
    std::size_t float_bytes = 0, int_bytes = 0;
    check(paged_decode_workspace_bytes(a, indptr_host, &float_bytes, &int_bytes, &error), error, "plan");
    void* float_ws = workspace.allocate(float_bytes);
    void* int_ws = workspace.allocate(int_bytes);
    int_host_.assign(int_bytes, 0);
    PagedDecodePlan plan;
    check(paged_decode_plan(a, indptr_host, float_ws, float_bytes, int_ws, int_host_.data(), int_bytes,
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

  // The minimum the pipeline would count for this problem, so GB/s compare across backends: the
  // plain decode's, or over a shared-prefix batch the plain decode of its pages (with the shared
  // tokens it reads again, as decode-bench's batch_decode counts them).
  static TrafficModel minimum_model(const AttentionProblem& p) {
    if (p.prefix) return shared_prefix_traffic_model(p.shape, p.kv_dtype, *p.prefix, false, 1);
    std::vector<std::int32_t> pages_per_seq;
    for (std::size_t b = 0; p.layout == KvLayoutKind::paged && b + 1 < p.host_indptr.size(); ++b)
      pages_per_seq.push_back(p.host_indptr[b + 1] - p.host_indptr[b]);
    TrafficModel m = decode_traffic_model(DecodeKernel::flash_decode, p.shape, p.kv_dtype, p.host_seq_lens, pages_per_seq, 1);
    m.extra_bytes = 0;
    return m;
  }

  std::function<cudaError_t(cudaStream_t)> launch_;
  nlohmann::json plan_json_;
  TrafficModel base_model_;
  std::string basis_;
  double extra_bytes_ = 0;
  // Host copies the plan's uploads read from (kept until the next plan).
  SlotPages slots_;
  std::vector<unsigned char> int_host_;
};

}  // namespace

std::unique_ptr<Backend> make_flashinfer_backend() { return std::make_unique<FlashInferBackend>(); }

}  // namespace decode_bench
