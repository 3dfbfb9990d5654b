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
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/flashinfer/flashinfer_batch_prefill.hpp"
#include "backends/flashinfer/flashinfer_cascade.hpp"
#include "backends/flashinfer/flashinfer_slot_pages.hpp"
#include "backends/flashinfer/flashinfer_steps.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"
#include "harness/backend.hpp"
#include "harness/cuda_check.hpp"
#include "kernels/traffic_model.hpp"

namespace decode_bench {
namespace {

using namespace flashinfer_launch;

class FlashInferTcBackend final : public Backend {
 public:
  std::string name() const override { return "flashinfer_tc"; }
  // The flashinfer-python release whose headers this build compiled.
  std::string version() const override { return std::string(flashinfer_version()); }

  std::optional<std::string> supports(const AttentionProblem& p) const override {
    if (!kernel_uses_backend(p.kernel))
      return "kernel " + std::string(kernel_name(p.kernel)) + " is not computed by a backend";
    if (p.kernel == KernelKind::baseline)
      return std::string("kernel baseline is decode-bench's 3-kernel decode: FlashInfer has none");
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
    if (p.kernel == KernelKind::shared_prefix) {
      if (auto why = cascade_unsupported_reason(p)) return why;
      if (p.prefix_overlap)
        return std::string("prefix_overlap true: FlashInfer's cascade runs its steps in order on one stream "
                           "(set prefix_overlap false)");
    }
    if (p.splits != 0) return "blocks " + std::to_string(p.splits) + ": FlashInfer's plan chooses its own splits";
    for (std::size_t b = 0; b < p.host_seq_lens.size(); ++b)
      if (p.host_seq_lens[b] < 1)
        return "sequence " + std::to_string(b) + " has no token: FlashInfer's decode needs at least one per sequence";
    return std::nullopt;
  }

  // q and o in the K/V dtype, as FlashInfer's wrapper defaults them.
  DType io_dtype(const AttentionProblem& p) const override { return p.kv_dtype == DType::bf16 ? DType::bf16 : DType::fp16; }
  LseBase lse_base() const override { return LseBase::two; }

  void plan(const AttentionProblem& p, Workspace& workspace) override {
    if (auto why = supports(p)) throw std::invalid_argument(*why);
    if (p.io_dtype != io_dtype(p))
      throw std::invalid_argument("the flashinfer_tc backend reads q and writes o in " +
                                  std::string(dtype_name(io_dtype(p))) + ", not " + std::string(dtype_name(p.io_dtype)));
    launch_ = nullptr;
    plan_json_ = {{"path", "tensor_core"}, {"flashinfer", version()}};
    extra_bytes_ = 0;
    if (p.kernel == KernelKind::shared_prefix) {
      PlannedCascade c = plan_cascade(p, CascadeSuffix::batch_prefill, workspace);
      launch_ = std::move(c.run);
      extra_bytes_ = c.extra_bytes;
      plan_json_.update(c.plan);
      plan_json_.update({{"family", "flashinfer_cascade"}, {"kv_access", "paged"}, {"launches", c.launches}});
      basis_ = "shared_prefix_unique_bytes+level_states+flashinfer_partials";
      base_model_ = shared_prefix_traffic_model(p.shape, p.kv_dtype, *p.prefix, true, 1);
      base_model_.extra_bytes = 0;
      return;
    }
    plan_decode(p, workspace);
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
  // One request per sequence with one query token (qo_indptr 0, 1, ..., B), over its pages.
  void plan_decode(const AttentionProblem& p, Workspace& workspace) {
    PagedPrefillArgs a;
    a.q = p.q;
    a.o = p.o;
    a.lse = p.lse;
    a.requests = a.total_rows = p.batch;
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
    for (int b = 0; b <= p.batch; ++b) qo_indptr_[b] = b;
    auto* d_qo = static_cast<std::int32_t*>(workspace.allocate(qo_indptr_.size() * sizeof(std::int32_t)));
    DB_CUDA_CHECK(cudaMemcpyAsync(d_qo, qo_indptr_.data(), qo_indptr_.size() * sizeof(std::int32_t),
                                  cudaMemcpyHostToDevice, workspace.stream()));
    a.qo_indptr = d_qo;
    PlannedStep step = plan_prefill_step(a, p.kv_dtype, qo_indptr_.data(), kv_indptr_host, workspace);
    launch_ = std::move(step.run);
    extra_bytes_ += step.partial_bytes;
    plan_json_.update(step.plan);
    plan_json_.update({{"family", "flashinfer_prefill_as_decode"}, {"page_size", a.page_size}, {"requests", p.batch}});
  }

  // The minimum the pipeline would count for this problem, so GB/s compare across backends: the
  // plain decode's, or over a shared-prefix batch (kernel batch_decode) the plain decode of its
  // pages, with the shared tokens it reads again.
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
  std::vector<std::int32_t> qo_indptr_;
};

}  // namespace

std::unique_ptr<Backend> make_flashinfer_tc_backend() { return std::make_unique<FlashInferTcBackend>(); }

}  // namespace decode_bench
