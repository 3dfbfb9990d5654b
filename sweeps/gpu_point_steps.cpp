#include "sweeps/gpu_point_steps.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_workspace.hpp"
#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"
#include "kernels/dtype_dispatch.hpp"
#include "pools/contiguous_pool.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/block_timeline_capture.hpp"
#include "sweeps/counter_pass.hpp"
#include "sweeps/decode_end_to_end.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/decode_state.hpp"
#include "sweeps/decode_verify.hpp"
#include "sweeps/io_dtype.hpp"
#include "sweeps/phase_timer.hpp"
#include "sweeps/shared_prefix_point.hpp"
#include "sweeps/shared_prefix_state.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// What a device's points reuse: the flusher's 2 x L2 buffer and the counter pass's profiler.
struct DeviceResources {
  std::unique_ptr<L2Flusher> flusher;
  CounterPass counters;
};

// The steps both kinds of point share: o and lse, q in the backend's dtype, the workspace, the
// checked launch, timing, the block timeline and the counter pass.
class GpuSteps : public PointSteps {
 public:
  GpuSteps(const Point& point, RunContext& ctx, DeviceResources& resources)
      : id_(point.id), ctx_(ctx), resources_(resources), workspace_(ctx.stream) {}

  void poison_outputs() override {
    o_.poison();
    lse_.poison();
    o_io_.poison();
  }
  Workspace& workspace() override { return workspace_; }
  void checked_launch(const LaunchFn& launch, LseBase lse_base) override {
    DB_CUDA_CHECK(launch(ctx_.stream));
    DB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
    if (io_ != DType::fp32) o_.upload(from_io_bits(o_io_.download(), io_));  // poison included: NaN stays NaN
    if (lse_base != LseBase::natural) {
      std::vector<float> lse = lse_.download();
      lse_to_natural(lse, lse_base);
      lse_.upload(lse);
    }
  }
  TimingResult time(const LaunchFn& launch, const TimingOptions& options, bool end_to_end) override {
    if (end_to_end) throw std::logic_error(id_ + ": end_to_end times contiguous decode points only");
    return time_launches(id_, launch, options, flusher(), ctx_.stream);
  }
  std::optional<std::string> capture_block_timeline(const LaunchFn& launch) override {
    if (block_timeline_file().empty()) return std::nullopt;
    std::string why;
    if (decode_bench::capture_block_timeline(id_, launch, flusher(), ctx_.stream, &why) != cudaSuccess) return why;
    return std::nullopt;
  }
  json counters(const LaunchFn& launch, const json& model) override {
    return resources_.counters.profile(ctx_, launch, model, flusher());
  }

 protected:
  L2Flusher& flusher() {
    if (!resources_.flusher) resources_.flusher = std::make_unique<L2Flusher>(ctx_.device);
    return *resources_.flusher;
  }

  // o and lse of the batch, and the problem's q, o, lse pointers. With a 16-bit io dtype, q is
  // rounded once (the backend reads the 16-bit values, the reference their exact float values,
  // on the device and in q_host) and o is written into a 16-bit buffer widened after the launch.
  // q_len query rows a sequence (the attention variants), and the sink logits when asked for.
  void attach_io(AttentionProblem& p, DeviceBuffer<float>& q, std::vector<float>& q_host, std::uint64_t seed) {
    const std::size_t rows = static_cast<std::size_t>(p.batch) * p.variant.q_len * p.shape.heads_q;
    const std::size_t elems = rows * p.shape.head_dim;
    o_ = DeviceBuffer<float>(elems);
    lse_ = DeviceBuffer<float>(rows);
    io_ = p.io_dtype;
    p.q = q.get();
    p.o = o_.get();
    p.lse = lse_.get();
    if (p.variant.sinks) {
      sinks_ = DeviceBuffer<float>(sink_logits(p.shape.heads_q, seed));
      p.sinks = sinks_.get();
    }
    if (io_ == DType::fp32) return;
    const std::vector<std::uint16_t> bits = to_io_bits(q.download(), io_);
    const std::vector<float> rounded = from_io_bits(bits, io_);
    q.upload(rounded);
    if (!q_host.empty()) q_host = rounded;
    q_io_ = DeviceBuffer<std::uint16_t>(bits);
    o_io_ = DeviceBuffer<std::uint16_t>(elems);
    p.q = q_io_.get();
    p.o = o_io_.get();
  }

  std::string id_;
  RunContext& ctx_;
  DeviceResources& resources_;
  DeviceWorkspace workspace_;
  DType io_ = DType::fp32;
  DeviceBuffer<float> o_, lse_;            // (B, q_len, H_q, D), (B, q_len, H_q): what verification reads
  DeviceBuffer<float> sinks_;              // (H_q) sink logits, sinks only
  DeviceBuffer<std::uint16_t> q_io_, o_io_;  // 16-bit io dtype only
  DeviceBuffer<std::int32_t> last_page_len_;
};

// A plain decode batch: the pool of its layout, filled (sweeps/decode_state.hpp), checked by the
// GPU reference or, with --verify cpu or a head_dim the GPU reference cannot hold, the CPU one.
template <class T>
class DecodeSteps final : public GpuSteps {
 public:
  DecodeSteps(const Point& point, RunContext& ctx, DeviceResources& resources)
      : GpuSteps(point, ctx, resources),
        d_(parse_decode_point(point.parameters)),
        verify_on_host_(ctx.verify_on_host || !device_reference_supports(d_)) {}

  void build(AttentionProblem& p) override {
    flusher();  // allocated before the point's pool, as every timed point needs it
    st_ = build_decode_state<T>(d_, {.fill_on_host = ctx_.fill_on_host, .host_copy = verify_on_host_}, ctx_.stream,
                                ctx_.phases);
    if (d_.paged) {
      paged_ = static_cast<PagedPool&>(*st_.pool).batch<T>(st_.handles);
      paged_->kv = st_.scales.attach(paged_->kv, true);
      p.paged = erased_kv(paged_->kv);
      p.seq_lens = paged_->seq_lens_device;
      p.max_len = paged_->max_len;
      last_page_len_ = DeviceBuffer<std::int32_t>(p.host_last_page_len);
      p.last_page_len = last_page_len_.get();
    } else {
      contiguous_ = static_cast<ContiguousPool&>(*st_.pool).batch<T>(st_.handles);
      contiguous_->kv = st_.scales.attach(contiguous_->kv, true);
      p.contiguous = erased_kv(contiguous_->kv);
      p.seq_lens = contiguous_->seq_lens_device;
      p.max_len = contiguous_->max_len;
    }
    // The pool's uploads and batch()'s block-table gather run on the pool's own stream (a
    // non-blocking one: ctx.stream is the legacy default); the backend runs on ctx.stream. Without
    // this wait a long page-1 table could still be in flight when the kernel reads it (it was:
    // shuffled page-1 points at T = 2^18 failed verification on the H100).
    st_.pool->backend().synchronize();
    attach_io(p, st_.q, st_.q_host, d_.seed);
  }

  CheckedVerification verify() override {
    CheckedVerification v;
    if (verify_on_host_)
      v.result = verify_on_host(d_, st_, o_, lse_, ctx_.phases);
    else if (paged_)
      v.result = verify_on_device(d_, paged_->kv, paged_->seq_lens_device, paged_->max_len, st_.q.get(), o_.get(),
                                  lse_.get(), ctx_.stream, ctx_.phases);
    else
      v.result = verify_on_device(d_, contiguous_->kv, contiguous_->seq_lens_device, contiguous_->max_len,
                                  st_.q.get(), o_.get(), lse_.get(), ctx_.stream, ctx_.phases);
    v.details["method"] = verify_on_host_ ? kVerifyOnHost : kVerifyOnDevice;
    return v;
  }

  // end_to_end is genuinely different timing, not a different pipeline: every sample also uploads
  // the batch's contiguous K/V slabs and q and downloads o and lse (sweeps/decode_end_to_end.hpp).
  TimingResult time(const LaunchFn& launch, const TimingOptions& options, bool end_to_end) override {
    if (!end_to_end) return GpuSteps::time(launch, options, false);
    if (!contiguous_) throw std::logic_error(id_ + ": end_to_end times contiguous layouts only");
    return time_end_to_end(id_, contiguous_->kv, static_cast<int>(d_.lengths.size()), launch, st_.q, o_, lse_,
                           options, flusher(), ctx_.stream);
  }

 private:
  DecodePoint d_;
  bool verify_on_host_;
  DecodeState<T> st_;
  std::optional<BatchView<PagedKV<T>>> paged_;
  std::optional<BatchView<ContiguousKV<T>>> contiguous_;
};

// A shared-prefix batch (forked pages): the device reference checks every sequence; the host one
// (--verify cpu, or a head_dim the device reference cannot hold) a budgeted sample of them.
template <class T>
class SharedPrefixSteps final : public GpuSteps {
 public:
  SharedPrefixSteps(const Point& point, RunContext& ctx, DeviceResources& resources)
      : GpuSteps(point, ctx, resources),
        sp_(parse_shared_prefix_point(point.parameters)),
        host_mirror_(ctx.verify_on_host || !device_reference_supports(sp_.decode)) {}

  void build(AttentionProblem& p) override {
    flusher();
    {
      // The pools, their forks and appends, and the data: one phase (a host fill and its upload
      // happen inside the builder's appends).
      PhaseTimer phase(ctx_.phases, kPhaseDataFill);
      st_ = build_shared_prefix_state<T>(sp_, {.host_mirror = host_mirror_, .host_fill = ctx_.fill_on_host},
                                         ctx_.stream);
    }
    view_ = st_.device_pool->template batch<T>(st_.device_handles);
    view_.kv = st_.scales.attach(view_.kv, true);  // what the kernels and the reference read
    p.paged = erased_kv(view_.kv);
    p.seq_lens = view_.seq_lens_device;
    p.max_len = view_.max_len;
    last_page_len_ = DeviceBuffer<std::int32_t>(p.host_last_page_len);
    p.last_page_len = last_page_len_.get();
    // Uploads and the batch CSR gather run on the pool's stream; the kernels on others.
    st_.device_pool->backend().synchronize();
    attach_io(p, st_.q, st_.q_host, sp_.decode.seed);
  }

  CheckedVerification verify() override {
    CheckedVerification v;
    std::size_t checked = static_cast<std::size_t>(sp_.spec.batch);
    if (host_mirror_) {
      const std::vector<int> seqs = shared_prefix_sequences_to_verify(sp_);
      PhaseTimer reference_phase(ctx_.phases, kPhaseReference);  // the host float64 reference and comparison
      v.result = verify_shared_prefix_on_host(sp_, st_, seqs, o_.download(), lse_.download());
      checked = seqs.size();
    } else {
      // sp_.decode.lengths: N whole sequences (parse_shared_prefix_point), as the reference sees them.
      v.result = verify_on_device(sp_.decode, view_.kv, view_.seq_lens_device, view_.max_len, st_.q.get(), o_.get(),
                                  lse_.get(), ctx_.stream, ctx_.phases);
    }
    v.details = {{"method", host_mirror_ ? kVerifyOnHost : kVerifyOnDevice},
                 {"sequences_checked", checked},
                 {"sequences", sp_.spec.batch}};
    return v;
  }

 private:
  SharedPrefixPoint sp_;
  bool host_mirror_;
  SharedPrefixState<T> st_;
  BatchView<PagedKV<T>> view_;
};

}  // namespace

StepsFactory gpu_steps_factory() {
  auto resources = std::make_shared<DeviceResources>();
  return [resources](const AttentionProblem& described, const Point& point,
                     RunContext& ctx) -> std::unique_ptr<PointSteps> {
    // The pipeline's one switch on the storage type.
    return with_storage_type(described.kv_dtype, [&]<class T>(std::type_identity<T>) -> std::unique_ptr<PointSteps> {
      if (described.prefix) return std::make_unique<SharedPrefixSteps<T>>(point, ctx, *resources);
      return std::make_unique<DecodeSteps<T>>(point, ctx, *resources);
    });
  };
}

}  // namespace decode_bench::sweeps
