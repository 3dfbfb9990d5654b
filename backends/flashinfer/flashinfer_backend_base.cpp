#include "backends/flashinfer/flashinfer_backend_base.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include "backends/flashinfer/flashinfer_support.hpp"
#include "kernels/variant_traffic_model.hpp"

namespace decode_bench {

std::string FlashInferBackendBase::version() const { return std::string(flashinfer_launch::flashinfer_version()); }

cudaError_t FlashInferBackendBase::run(cudaStream_t stream) {
  if (!launch_) return cudaErrorNotReady;
  return launch_(stream);
}

std::optional<BackendTrafficModel> FlashInferBackendBase::traffic_model(const AttentionProblem&) const {
  BackendTrafficModel m{base_model_, basis_};
  m.model.extra_bytes += extra_bytes_;
  return m;
}

std::optional<std::string> FlashInferBackendBase::common_refusal(const AttentionProblem& p) {
  if (p.mla)
    return std::string("attention mla: this FlashInfer backend runs FlashInfer's MHA/GQA kernels; its MLA decode "
                       "is the flashinfer_mla backend");
  if (!kernel_uses_backend(p.kernel))
    return "kernel " + std::string(kernel_name(p.kernel)) + " is not computed by a backend";
  if (p.kernel == KernelKind::baseline)
    return std::string("kernel baseline is decode-bench's 3-kernel decode: FlashInfer has none");
  if (p.kernel == KernelKind::shared_prefix) {
    if (auto why = cascade_unsupported_reason(p)) return why;
    if (p.prefix_overlap)
      return std::string("prefix_overlap true: FlashInfer's cascade runs its steps in order on one stream "
                         "(set prefix_overlap false)");
  }
  // The variants: each backend's own paths (variant_refusal), none through the cascade.
  if (!p.variant.plain() && (p.kernel == KernelKind::shared_prefix || p.prefix))
    return "the " + std::string(p.kernel == KernelKind::shared_prefix ? "cascade" : "decode of a shared-prefix batch") +
           " of this backend has no path for " + p.variant.describe();
  if (p.splits != 0) return "blocks " + std::to_string(p.splits) + ": FlashInfer's plan chooses its own splits";
  for (std::size_t b = 0; b < p.host_seq_lens.size(); ++b)
    if (p.host_seq_lens[b] < 1)
      return "sequence " + std::to_string(b) + " has no token: FlashInfer's decode needs at least one per sequence";
  return std::nullopt;
}

std::optional<std::string> FlashInferBackendBase::variant_refusal(const AttentionProblem& p) {
  if (p.variant.plain()) return std::nullopt;
  if (p.kv_dtype != DType::fp16)
    return p.variant.describe() + ", dtype " + std::string(dtype_name(p.kv_dtype)) +
           ": FlashInfer's variants are compiled here for fp16 (the variants preset's dtype)";
  if (p.shape.head_dim != 128)
    return p.variant.describe() + ", head_dim " + std::to_string(p.shape.head_dim) +
           ": FlashInfer's variants are compiled here for head_dim 128 (the variants preset's)";
  return std::nullopt;
}

void FlashInferBackendBase::start_plan(const AttentionProblem& p, const char* path) {
  if (auto why = supports(p)) throw std::invalid_argument(*why);
  if (p.io_dtype != io_dtype(p))
    throw std::invalid_argument("the " + name() + " backend reads q and writes o in " +
                                std::string(dtype_name(io_dtype(p))) + " for " + std::string(dtype_name(p.kv_dtype)) +
                                " K/V, not " + std::string(dtype_name(p.io_dtype)));
  launch_ = nullptr;
  plan_json_ = {{"path", path}, {"flashinfer", version()}};
  extra_bytes_ = 0;
}

void FlashInferBackendBase::plan_cascade_step(const AttentionProblem& p, CascadeSuffix suffix, Workspace& workspace) {
  PlannedCascade c = plan_cascade(p, suffix, workspace);
  launch_ = std::move(c.run);
  extra_bytes_ = c.extra_bytes;
  plan_json_.update(c.plan);
  plan_json_.update({{"family", "flashinfer_cascade"}, {"kv_access", "paged"}, {"launches", c.launches}});
  basis_ = "shared_prefix_unique_bytes+level_states+flashinfer_partials";
  base_model_ = shared_prefix_traffic_model(p.shape, p.kv_dtype, *p.prefix, true, 1);
  base_model_.extra_bytes = 0;
}

TrafficModel FlashInferBackendBase::minimum_model(const AttentionProblem& p) {
  if (!p.variant.plain()) {
    TrafficModel m = variant_traffic_model(p.shape, p.kv_dtype, p.host_seq_lens,
                                           p.layout == KvLayoutKind::paged ? p.paged.page_size : 0, p.variant);
    m.extra_bytes = 0;
    return m;
  }
  if (p.prefix) return shared_prefix_traffic_model(p.shape, p.kv_dtype, *p.prefix, false, 1);
  std::vector<std::int32_t> pages_per_seq;
  for (std::size_t b = 0; p.layout == KvLayoutKind::paged && b + 1 < p.host_indptr.size(); ++b)
    pages_per_seq.push_back(p.host_indptr[b + 1] - p.host_indptr[b]);
  TrafficModel m = decode_traffic_model(DecodeKernel::flash_decode, p.shape, p.kv_dtype, p.host_seq_lens, pages_per_seq, 1);
  m.extra_bytes = 0;
  return m;
}

}  // namespace decode_bench
