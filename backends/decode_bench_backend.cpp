// The `decode-bench` backend: this project's own kernels behind harness/backend.hpp.
//   kernel baseline                 the seed's 3-kernel decode (plan_decode, DecodeKernel::baseline)
//   kernel flash_decode, batch_decode  split-K flash-decode or tensor-core row attention, as the
//                                   planner chooses (plan_decode, DecodeKernel::flash_decode); over
//                                   a shared-prefix batch, the plain decode of its forked pages
//   kernel shared_prefix            prefix phase + suffix phase + merge (plan_shared_prefix), the
//                                   suffix phase on a second stream when prefix_overlap is set
//   attention mla (flash_decode, batch_decode)  the MLA decode kernels over the latent cache
//                                   (plan_mla_decode_for_device, run_mla_decode: kernels/mla/)
// Its plan JSON is kernels/plan_json.hpp's, naming the family the planner chose; its traffic
// models are kernels/traffic_model.hpp's, with the intermediates each family writes.
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "backends/decode_bench_support.hpp"
#include "build_info.hpp"
#include "harness/backend.hpp"
#include "harness/cuda_check.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/dtype_dispatch.hpp"
#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_decode_wgmma.hpp"
#include "kernels/mla/mla_point_model.hpp"
#include "kernels/plan_json.hpp"
#include "kernels/shared_prefix.hpp"
#include "kernels/staged_workspace_init.hpp"
#include "kernels/traffic_model.hpp"
#include "kernels/variant_traffic_model.hpp"

namespace decode_bench {
namespace {

// The second stream and the fork/join events of an overlapped shared-prefix launch, created on
// the first point that overlaps and kept for the backend's life.
struct OverlapStreams {
  SharedPrefixStreams s;
  OverlapStreams() {
    DB_CUDA_CHECK(cudaStreamCreateWithFlags(&s.aux, cudaStreamNonBlocking));
    DB_CUDA_CHECK(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming));
    DB_CUDA_CHECK(cudaEventCreateWithFlags(&s.join, cudaEventDisableTiming));
  }
  ~OverlapStreams() {
    cudaEventDestroy(s.join);
    cudaEventDestroy(s.fork);
    cudaStreamDestroy(s.aux);
  }
  OverlapStreams(const OverlapStreams&) = delete;
  OverlapStreams& operator=(const OverlapStreams&) = delete;
};

class DecodeBenchBackend final : public Backend {
 public:
  std::string name() const override { return "decode-bench"; }
  // The kernels are this build's: the tool version and the commit it was configured at.
  std::string version() const override {
    return std::string(build_info::kToolVersion) + "+" + build_info::kGitSha + (build_info::kGitDirty ? ".dirty" : "");
  }

  std::optional<std::string> supports(const AttentionProblem& p) const override {
    if (p.mla) return mla_unsupported(p);
    if (p.kernel == KernelKind::shared_prefix && !p.prefix)
      return std::string("kernel shared_prefix needs a shared-prefix batch (prefix_len > 0, layout paged)");
    if (p.kernel == KernelKind::shared_prefix && p.layout != KvLayoutKind::paged)
      return std::string("kernel shared_prefix reads shared pages: it needs layout paged");
    if (!kernel_uses_backend(p.kernel))
      return "kernel " + std::string(kernel_name(p.kernel)) + " is not computed by a backend";
    return decode_bench_unsupported(p.kernel, p.shape, p.kv_dtype, p.variant);
  }

  void plan(const AttentionProblem& problem, Workspace& workspace) override {
    if (auto why = supports(problem)) throw std::invalid_argument(*why);
    if (problem.io_dtype != io_dtype(problem))
      throw std::invalid_argument(std::string(problem.mla ? "decode-bench's MLA kernels" : "decode-bench's kernels") +
                                  " read q and write o in " + std::string(dtype_name(io_dtype(problem))) + " here, not " +
                                  std::string(dtype_name(problem.io_dtype)));
    problem_ = problem;
    launch_ = serial_ = nullptr;  // nothing of an earlier point's plan survives a failed one
    layer_ = nullptr;
    plan_json_ = nlohmann::json::object();
    model_.reset();
    describe_ = nullptr;
    with_storage_type(problem_.kv_dtype, [&]<class T>(std::type_identity<T>) {
      if (problem_.mla)
        plan_mla_typed<T>(workspace);
      else if (problem_.kernel == KernelKind::shared_prefix)
        plan_shared_prefix_typed<T>(workspace);
      else if (problem_.layout == KvLayoutKind::paged)
        plan_decode_typed<PagedKV<T>>(typed_kv<T>(problem_.paged), workspace);
      else
        plan_decode_typed<ContiguousKV<T>>(typed_kv<T>(problem_.contiguous), workspace);
    });
  }

  // q and o: FP32 for the attention kernels; the MMA's 16-bit type for MLA (MlaIo,
  // kernels/mla/mla_decode.hpp), as the latent cache's servers hold them.
  DType io_dtype(const AttentionProblem& p) const override {
    return p.mla && !mla_unsupported(p) ? mla_io_dtype(p.kv_dtype) : DType::fp32;
  }

  cudaError_t run(cudaStream_t stream) override { return launch_ ? launch_(stream) : cudaErrorNotReady; }
  cudaError_t run_serial(cudaStream_t stream) override { return serial_ ? serial_(stream) : cudaErrorNotReady; }
  std::optional<std::string> layers_unsupported(const AttentionProblem& p) const override {
    if (p.kernel == KernelKind::shared_prefix) return std::string("kernel shared_prefix: layers > 1 is not measured yet");
    if (p.mla) return std::string("attention mla: the MLA kernel's plan is not run over further layers yet");
    return std::nullopt;
  }
  std::function<cudaError_t(cudaStream_t)> layer_launch(const AttentionProblem& layer) override {
    return layer_ ? layer_(layer) : nullptr;
  }
  nlohmann::json plan_json() const override {
    describe();
    return plan_json_;
  }
  std::optional<BackendTrafficModel> traffic_model(const AttentionProblem&) const override {
    describe();
    return model_;
  }

 private:
  // Attention mla: the MLA decode kernel's shapes and storage types, the decode kernels, q_len 1 or 2.
  static std::optional<std::string> mla_unsupported(const AttentionProblem& p) {
    if (p.kernel != KernelKind::flash_decode && p.kernel != KernelKind::batch_decode)
      return "attention mla: decode-bench computes MLA decode for kernel flash_decode or batch_decode, not " +
             std::string(kernel_name(p.kernel));
    if (const std::string why = mla_decode_unsupported_reason(*p.mla, p.kv_dtype); !why.empty())
      return "attention mla: " + why;
    if (p.variant.window != 0 || p.variant.sinks || p.variant.logits_soft_cap != 0)
      return "attention mla: " + p.variant.describe() + ": the MLA kernel computes causal q_len only";
    if (p.mla->q_len != p.variant.q_len || p.mla->q_len > 2)
      return "attention mla: q_len " + std::to_string(p.mla->q_len) + ": the MLA kernel is tested at q_len 1 and 2";
    return std::nullopt;
  }

  // The storage types the MLA kernel is built for (FP16, BF16, FP8 E4M3); supports() refuses the rest.
  template <class T>
  static constexpr bool kMlaStorage =
      std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __nv_fp8_e4m3>;

  template <class T>
  void plan_mla_typed(Workspace& workspace) {
    if constexpr (!kMlaStorage<T>) {
      throw std::invalid_argument("attention mla: no MLA kernel for dtype " + std::string(dtype_name(problem_.kv_dtype)));
    } else {
      plan_mla_kernel<T>(workspace);
    }
  }

  template <class T>
  void plan_mla_kernel(Workspace& workspace) {
    const AttentionProblem& p = problem_;
    const MlaShape shape = *p.mla;
    int device = 0;
    DB_CUDA_CHECK(cudaGetDevice(&device));
    // The dispatch of plan_mla_decode_for_device (the warpgroup-MMA kernel where it runs and is
    // preferred, in the tiling DECODE_BENCH_MLA_TILE names; else the narrow kernel up to 32 rows,
    // the 64-row mma.sync kernel above), or the kernel DECODE_BENCH_MLA_KERNEL pins.
    mla_plan_ = plan_mla_decode_for_device(shape, p.kv_dtype, p.batch, p.max_len, device, p.splits, p.tuning.mla_tile,
                                           p.tuning.merge_pdl, p.tuning.mla_kernel, p.tuning.mla_fused_merge,
                                           p.tuning.mla_cluster_merge, p.tuning.mla_spread_merge);
    void* ws = workspace.allocate(mla_plan_.workspace_bytes);
    DB_CUDA_CHECK(init_mla_workspace(mla_plan_, ws, workspace.stream()));  // the fused or spread merge's counters
    const auto* q = static_cast<const MlaIo<T>*>(p.q);  // in io_dtype(p), which plan() checked
    auto* o = static_cast<MlaIo<T>*>(p.o);
    if (p.layout == KvLayoutKind::paged) {
      const PagedKV<T> kv = typed_kv<T>(p.paged);
      launch_ = [this, shape, kv, q, o, ws](cudaStream_t s) {
        return run_mla_decode(shape, kv, problem_.seq_lens, q, o, problem_.lse, ws, mla_plan_, s);
      };
    } else {
      const ContiguousKV<T> kv = typed_kv<T>(p.contiguous);
      launch_ = [this, shape, kv, q, o, ws](cudaStream_t s) {
        return run_mla_decode(shape, kv, problem_.seq_lens, q, o, problem_.lse, ws, mla_plan_, s);
      };
    }
    serial_ = launch_;
    plan_json_ = mla_plan_.to_json();
    plan_json_["family"] = "mla_decode";
    std::vector<std::int32_t> pages_per_seq;
    for (std::size_t b = 0; p.layout == KvLayoutKind::paged && b + 1 < p.host_indptr.size(); ++b)
      pages_per_seq.push_back(p.host_indptr[b + 1] - p.host_indptr[b]);
    TrafficModel m = mla_point_traffic_model(shape, p.kv_dtype, p.host_seq_lens, pages_per_seq);
    // Split partials: written by the splits, read by the merge (a cluster plan has none: its
    // blocks' states stay in shared memory).
    m.extra_bytes = 2.0 * static_cast<double>(mla_plan_.workspace_bytes);
    const bool partials = mla_plan_.num_splits > 1 && !mla_plan_.cluster_merge;
    model_ = BackendTrafficModel{m, partials ? "mla_latent_once+split_partials" : "mla_latent_once"};
  }

  template <class KV>
  void plan_decode_typed(const KV& kv, Workspace& workspace) {
    const AttentionProblem& p = problem_;
    const DecodeKernel kernel = p.kernel == KernelKind::baseline ? DecodeKernel::baseline : DecodeKernel::flash_decode;
    // The plain decode of a shared-prefix batch is planned without host lengths, as it was
    // before this backend existed: they can change the tiling the planner picks at GQA group 1,
    // and the cascade's recorded points were planned without them.
    const std::int32_t* host_lens = p.prefix ? nullptr : p.host_seq_lens.data();
    const DecodeProblem problem{p.shape,    p.kv_dtype,
                                p.batch,    p.max_len,
                                p.seq_lens, static_cast<const float*>(p.q),
                                static_cast<float*>(p.o), p.lse,
                                host_lens,  row_attention_variant(p.variant, p.sinks)};
    if (p.variant.sinks && p.sinks == nullptr) throw std::invalid_argument("sinks requested without sink logits");
    DB_CUDA_CHECK(plan_decode<KV>(kernel, problem, {.splits = p.splits, .tuning = p.tuning}, &plan_));
    void* ws = workspace.allocate(plan_.workspace_bytes);
    DB_CUDA_CHECK(init_decode_workspace_staged(plan_, ws, workspace.stream(), workspace.host_staging()));
    launch_ = [this, kv, problem, ws](cudaStream_t s) { return run_decode<KV>(kv, problem, plan_, ws, s); };
    serial_ = launch_;
    // Another layer: the same plan and workspace over that layer's pointers.
    layer_ = [this, problem, ws](const AttentionProblem& l) -> std::function<cudaError_t(cudaStream_t)> {
      KV layer_kv;
      if constexpr (std::is_same_v<KV, PagedKV<typename KV::value_type>>)
        layer_kv = typed_kv<typename KV::value_type>(l.paged);
      else
        layer_kv = typed_kv<typename KV::value_type>(l.contiguous);
      DecodeProblem layer_problem = problem;
      layer_problem.seq_lens = l.seq_lens;
      layer_problem.q = static_cast<const float*>(l.q);
      layer_problem.o = static_cast<float*>(l.o);
      layer_problem.lse = l.lse;
      return [this, layer_kv, layer_problem, ws](cudaStream_t s) {
        return run_decode<KV>(layer_kv, layer_problem, plan_, ws, s);
      };
    };
    // The plan's JSON and traffic model are made when asked for, not at every plan: a serving
    // loop plans every step and asks for neither (both read only plan_ and problem_, which stay
    // until the next plan()).
    describe_ = [this] { describe_decode(); };
  }

  void describe_decode() const {
    const AttentionProblem& p = problem_;
    const DecodeKernel kernel = p.kernel == KernelKind::baseline ? DecodeKernel::baseline : DecodeKernel::flash_decode;
    plan_json_ = to_json(plan_);
    if (p.prefix) {
      model_ = BackendTrafficModel{
          shared_prefix_traffic_model(p.shape, p.kv_dtype, *p.prefix, false, plan_.num_splits, p.variant),
          "shared_prefix_unique_bytes+prefix_reread"};
      return;
    }
    std::vector<std::int32_t> pages_per_seq;
    if (p.layout == KvLayoutKind::paged)
      for (auto len : p.host_seq_lens) pages_per_seq.push_back((len + p.paged.page_size - 1) / p.paged.page_size);
    // A cluster merge keeps the split states in shared memory: no partials cross the bus.
    const bool cluster = plan_.path == DecodePath::tensor_core && plan_.rows.cluster_merge;
    model_ = BackendTrafficModel{
        decode_traffic_model(kernel, p.shape, p.kv_dtype, p.host_seq_lens, pages_per_seq, cluster ? 1 : plan_.num_splits),
        kernel == DecodeKernel::baseline                  ? "decode_min_bytes+baseline_scores"
        : plan_.path == DecodePath::short_seq || cluster ? "decode_min_bytes"  // no partials: one block a
                                                                                // (sequence, KV head), or a cluster
                                                           : "decode_min_bytes+splitk_partials"};
    if (!p.variant.plain()) {
      // The variants' minimum (a window's tokens only, q_len rows of q and o) and the split
      // partials of q_len rows a query head (none on the short path: one block a sequence and KV head).
      TrafficModel m = variant_traffic_model(p.shape, p.kv_dtype, p.host_seq_lens,
                                             p.layout == KvLayoutKind::paged ? p.paged.page_size : 0, p.variant);
      m.extra_bytes = model_->model.extra_bytes * p.variant.q_len;
      model_ = BackendTrafficModel{
          m, plan_.path == DecodePath::short_seq ? "variant_min_bytes" : "variant_min_bytes+splitk_partials"};
    }
  }

  template <class T>
  void plan_shared_prefix_typed(Workspace& workspace) {
    const AttentionProblem& p = problem_;
    const PagedKV<T> kv = typed_kv<T>(p.paged);
    if (p.variant.sinks && p.sinks == nullptr) throw std::invalid_argument("sinks requested without sink logits");
    const SharedPrefixProblem problem{p.shape, p.kv_dtype, static_cast<const float*>(p.q), static_cast<float*>(p.o),
                                      p.lse, row_attention_variant(p.variant, p.sinks)};
    if (auto why = shared_prefix_unsupported_reason(problem, *p.prefix)) throw std::invalid_argument(*why);
    const SharedPrefixOptions options{
        .prefix = {}, .suffix = {.splits = p.splits}, .overlap = p.prefix_overlap, .tuning = p.tuning};
    DB_CUDA_CHECK(plan_shared_prefix<T>(kv, problem, *p.prefix, options, &sp_plan_));
    void* ws = workspace.allocate(sp_plan_.workspace_bytes);
    const bool overlap = p.prefix_overlap && sp_plan_.has_prefix;
    if (overlap && !overlap_) overlap_ = std::make_unique<OverlapStreams>();
    const SharedPrefixStreams* streams = overlap ? &overlap_->s : nullptr;
    // Uploads the plan's metadata from sp_plan_, which stays until the next plan().
    DB_CUDA_CHECK(init_shared_prefix_workspace_staged(sp_plan_, ws, workspace.stream(), workspace.host_staging()));
    launch_ = [this, kv, problem, ws, streams](cudaStream_t s) {
      return run_shared_prefix<T>(kv, problem, sp_plan_, ws, s, streams);
    };
    serial_ = [this, kv, problem, ws](cudaStream_t s) {
      return run_shared_prefix<T>(kv, problem, sp_plan_, ws, s, nullptr);
    };
    sp_streams_ = streams != nullptr;
    describe_ = [this] {
      plan_json_ = to_json(sp_plan_, problem_.prefix->levels.size(), sp_streams_);
      const AttentionProblem& q = problem_;
      model_ = BackendTrafficModel{
          shared_prefix_traffic_model(q.shape, q.kv_dtype, *q.prefix, true, sp_plan_.suffix.num_splits, q.variant),
          "shared_prefix_unique_bytes+level_states"};
    };
  }

  AttentionProblem problem_;
  DecodePlan plan_;
  SharedPrefixPlan sp_plan_;
  MlaDecodePlan mla_plan_;
  std::function<cudaError_t(cudaStream_t)> launch_, serial_;
  std::function<std::function<cudaError_t(cudaStream_t)>(const AttentionProblem&)> layer_;
  // The last plan's JSON and traffic model; describe_ fills them on first use (nullptr: filled).
  void describe() const {
    if (!describe_) return;
    const std::function<void()> fill = std::move(describe_);
    describe_ = nullptr;
    fill();
  }
  mutable std::function<void()> describe_;
  mutable nlohmann::json plan_json_;
  mutable std::optional<BackendTrafficModel> model_;
  bool sp_streams_ = false;
  std::unique_ptr<OverlapStreams> overlap_;
};

}  // namespace

std::unique_ptr<Backend> make_decode_bench_backend() { return std::make_unique<DecodeBenchBackend>(); }

}  // namespace decode_bench
