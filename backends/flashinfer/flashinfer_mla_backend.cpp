// The `flashinfer_mla` and `flashinfer_mla_fa3` backends: FlashInfer's MLA decode over
// decode-bench's latent cache, with FlashInfer's MLAPlan on the host, for attention mla points
// (kernels/mla/mla_shape.hpp), through either of its kernels (flashinfer_mla.hpp):
//   flashinfer_mla       BatchMLAPagedAttention, its FA2 kernel (mma.sync), on any GPU
//   flashinfer_mla_fa3   BatchMLAPageAttentionHopper, its Hopper kernel (warpgroup MMA), on compute
//                        capability 9.0, in a build for Hopper that found the wheel's CUTLASS headers
// Both run the same plan over the same layouts:
//   paged        the pool's own block table; ckv and kpe are the two column ranges of its rows
//   contiguous   each sequence's slab a page of max_len rows (flashinfer_mla_layout.hpp)
// BF16 and FP16 latents with q and o in the same dtype, kv_lora_rank 512 and rope_dim 64, q_len 1
// and 2 (and more) under FlashInfer's causal mask, which is decode-bench's rule. LSE base 2 (the
// pipeline converts it outside timing); run() launches FlashInfer's one cooperative kernel.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/flashinfer/flashinfer_backend_base.hpp"
#include "backends/flashinfer/flashinfer_mla.hpp"
#include "backends/flashinfer/flashinfer_mla_layout.hpp"
#include "backends/flashinfer/flashinfer_steps.hpp"
#include "flashinfer_build.hpp"
#include "harness/backend.hpp"
#include "harness/cuda_check.hpp"
#include "kernels/device_attribute_cache.hpp"
#include "kernels/mla/mla_point_model.hpp"

namespace decode_bench {
namespace {

using namespace flashinfer_launch;

// Which of FlashInfer's two MLA kernels a backend runs.
enum class MlaKernelPath { fa2, fa3 };

// Why FlashInfer's Hopper MLA kernel cannot run on the current device, or nullopt: it is sm_90a code.
std::optional<std::string> fa3_device_reason() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cached_device_attribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cached_device_attribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();  // the failed query is answered here; it must not surface at a later call
    return std::string("no CUDA device: FlashInfer's Hopper MLA kernel runs on compute capability 9.0");
  }
  if (major != 9 || minor != 0)
    return "compute capability " + std::to_string(major) + "." + std::to_string(minor) +
           ": FlashInfer's Hopper MLA kernel is sm_90a code (compute capability 9.0 only); flashinfer_mla runs its "
           "FA2 kernel";
  return std::nullopt;
}

class FlashInferMlaBackend final : public FlashInferBackendBase {
 public:
  explicit FlashInferMlaBackend(MlaKernelPath path) : path_(path) {}

  std::string name() const override { return path_ == MlaKernelPath::fa3 ? "flashinfer_mla_fa3" : "flashinfer_mla"; }

  std::string version() const override {
    return path_ == MlaKernelPath::fa3 && *flashinfer_build::kMlaFa3NotBuiltReason != '\0'
               ? "not built"
               : FlashInferBackendBase::version();
  }

  std::optional<std::string> supports(const AttentionProblem& p) const override {
    if (path_ == MlaKernelPath::fa3 && *flashinfer_build::kMlaFa3NotBuiltReason != '\0')
      return "backend flashinfer_mla_fa3 not built: " + std::string(flashinfer_build::kMlaFa3NotBuiltReason);
    if (!p.mla)
      return "attention mha: the " + name() +
             " backend runs FlashInfer's MLA decode (attention mla); its MHA/GQA decode is the flashinfer and "
             "flashinfer_tc backends";
    const MlaShape& m = *p.mla;
    if (p.kernel != KernelKind::flash_decode && p.kernel != KernelKind::batch_decode)
      return "attention mla: kernel " + std::string(kernel_name(p.kernel)) +
             ": FlashInfer's MLA decode runs for kernel flash_decode or batch_decode";
    if (p.kv_dtype != DType::bf16 && p.kv_dtype != DType::fp16)
      return "attention mla: dtype " + std::string(dtype_name(p.kv_dtype)) + ": the " + name() +
             " backend compiles FlashInfer's MLA kernel for bf16 and fp16 latents (its FP8 path, one scale per "
             "tensor with BF16 q, is not instantiated here)";
    if (m.kv_lora_rank != kFlashInferMlaCkvDim || m.rope_dim != kFlashInferMlaKpeDim)
      return "attention mla: kv_lora_rank " + std::to_string(m.kv_lora_rank) + ", rope_dim " +
             std::to_string(m.rope_dim) + ": FlashInfer's MLA kernel is compiled here for 512 and 64";
    if (p.variant.window != 0 || p.variant.sinks || p.variant.logits_soft_cap != 0)
      return "attention mla: " + p.variant.describe() +
             ": FlashInfer's MLA decode is run here with its causal mask only";
    if (m.q_len < 1 || m.q_len != p.variant.q_len)
      return "attention mla: q_len " + std::to_string(m.q_len) + " must be >= 1 and the variant's q_len";
    if (p.splits != 0)
      return "attention mla: blocks " + std::to_string(p.splits) + ": FlashInfer's MLAPlan chooses its own splits";
    for (std::size_t b = 0; b < p.host_seq_lens.size(); ++b)
      if (p.host_seq_lens[b] < m.q_len)
        return "attention mla: sequence " + std::to_string(b) + " has " + std::to_string(p.host_seq_lens[b]) +
               " tokens, fewer than q_len " + std::to_string(m.q_len) +
               ": a query row would see no token (FlashInfer's causal mask counts its KV length in unsigned "
               "arithmetic)";
    if (auto why = mla_latent_pages_reason(p)) return "attention mla: FlashInfer's MLA layout: " + *why;
    if (path_ == MlaKernelPath::fa3) return fa3_device_reason();
    return std::nullopt;
  }

  // q and o in the latent dtype, as FlashInfer's MLA wrapper takes them.
  DType io_dtype(const AttentionProblem& p) const override { return io_dtype_for(p.kv_dtype); }

  // Its FA2 kernel sums d over P rounded to the operand type (attention/mla.cuh, compute_mla_pv's
  // m16k16_rowsum_f16f16f32 over p_f16) and writes lse = log2(d) + m: docs/backends.md. Its Hopper
  // kernel sums the FP32 weights before they are rounded for P V (attention/mla_hopper.cuh,
  // update_md_), as the reference does.
  bool denominator_sums_rounded_weights() const override { return path_ == MlaKernelPath::fa2; }

  void plan(const AttentionProblem& p, Workspace& workspace) override {
    start_plan(p, path_ == MlaKernelPath::fa3 ? "fa3" : "fa2");
    MlaLatentPages pages;
    if (auto why = mla_latent_pages_reason(p, &pages)) throw std::invalid_argument(*why);
    int device = 0, num_sm = 0;
    DB_CUDA_CHECK(cudaGetDevice(&device));
    DB_CUDA_CHECK(cudaDeviceGetAttribute(&num_sm, cudaDevAttrMultiProcessorCount, device));
    const MlaShape& m = *p.mla;
    MlaArgs a;
    a.q = p.q;
    a.o = p.o;
    a.lse = p.lse;
    a.batch = p.batch;
    a.q_len = m.q_len;
    a.heads = m.heads_q;
    a.kv_lora_rank = m.kv_lora_rank;
    a.rope_dim = m.rope_dim;
    a.page_size = pages.page_size;
    a.page_stride = pages.page_stride;
    a.row_stride = pages.row_stride;
    a.kpe_offset = pages.kpe_offset;
    a.sm_scale = static_cast<float>(m.softmax_scale);
    std::vector<std::int32_t> pages_per_seq;
    if (pages.slots_as_pages) {
      a.latent = p.contiguous.k;
      indices_ = pages.indices;
      auto* d = static_cast<std::int32_t*>(workspace.allocate(indices_.size() * sizeof(std::int32_t)));
      DB_CUDA_CHECK(cudaMemcpyAsync(d, indices_.data(), indices_.size() * sizeof(std::int32_t),
                                    cudaMemcpyHostToDevice, workspace.stream()));
      a.page_indices = d;
      // One page index per sequence read beyond the minimum (the minimum has no table for a
      // contiguous cache).
      extra_bytes_ += static_cast<double>(indices_.size() * sizeof(std::int32_t));
      plan_json_["kv_access"] = "contiguous_as_pages";
    } else {
      a.latent = p.paged.k;
      a.page_indices = p.paged.page_indices;
      for (std::size_t b = 0; b + 1 < p.host_indptr.size(); ++b)
        pages_per_seq.push_back(p.host_indptr[b + 1] - p.host_indptr[b]);
      plan_json_["kv_access"] = "paged";
    }
    if (auto why = mla_work_list_reason(a.batch, a.q_len, a.heads, num_sm)) throw std::invalid_argument(*why);
    std::size_t float_bytes = 0, int_bytes = 0;
    mla_workspace_bytes(num_sm, &float_bytes, &int_bytes);
    void* float_ws = workspace.allocate(float_bytes);
    void* int_ws = workspace.allocate(int_bytes);
    std::vector<unsigned char> int_host(int_bytes, 0);  // MLAPlan's host image; the plan waits for its upload
    MlaPlan plan;
    std::string error;
    check_flashinfer(mla_plan(a, pages.indptr.data(), p.host_seq_lens.data(), float_ws, float_bytes, int_ws,
                              int_host.data(), int_bytes, workspace.stream(), &plan, &error),
                     error, "MLA plan");
    const bool bf16 = p.kv_dtype == DType::bf16;
    const auto run = path_ == MlaKernelPath::fa3 ? (bf16 ? &mla_fa3_run_bf16 : &mla_fa3_run_fp16)
                                                 : (bf16 ? &mla_run_bf16 : &mla_run_fp16);
    launch_ = [a, plan, float_ws, int_ws, run](cudaStream_t s) { return run(a, plan, float_ws, int_ws, s, nullptr); };
    plan_json_.update({{"family", "flashinfer_mla"},
                       {"mask", "causal"},
                       {"page_size", a.page_size},
                       {"cluster_ctas", plan.num_blks_x},
                       {"clusters", plan.num_blks_y},
                       {"work_items", plan.work_items},
                       {"merge_ranges", plan.merge_ranges},
                       {"partial_rows", plan.partial_rows},
                       {"float_workspace_bytes", float_bytes},
                       {"int_workspace_bytes", int_bytes}});
    // The minimum decode-bench's own MLA kernel is measured against (GB/s compare), plus the split
    // partials FlashInfer writes and its merge reads back: 512 values in the o dtype and an FP32
    // LSE per partial row.
    base_model_ = mla_point_traffic_model(m, p.kv_dtype, p.host_seq_lens, pages_per_seq);
    extra_bytes_ += 2.0 * static_cast<double>(plan.partial_rows) * (m.value_dim() * 2.0 + sizeof(float));
    basis_ = pages.slots_as_pages ? "mla_latent_once+flashinfer_partials+page_tables"
                                  : "mla_latent_once+flashinfer_partials";
  }

 private:
  MlaKernelPath path_;
  std::vector<std::int32_t> indices_;  // contiguous: the host page table uploaded by plan
};

}  // namespace

std::unique_ptr<Backend> make_flashinfer_mla_backend() {
  return std::make_unique<FlashInferMlaBackend>(MlaKernelPath::fa2);
}
std::unique_ptr<Backend> make_flashinfer_mla_fa3_backend() {
  return std::make_unique<FlashInferMlaBackend>(MlaKernelPath::fa3);
}

}  // namespace decode_bench
