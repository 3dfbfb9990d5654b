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
#include "pools/latent_cache.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/block_timeline_capture.hpp"
#include "sweeps/counter_pass.hpp"
#include "sweeps/decode_end_to_end.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/decode_state.hpp"
#include "sweeps/decode_verify.hpp"
#include "sweeps/io_dtype.hpp"
#include "sweeps/mla_point.hpp"
#include "sweeps/mla_verify.hpp"
#include "sweeps/phase_timer.hpp"
#include "sweeps/shared_prefix_point.hpp"
#include "sweeps/shared_prefix_state.hpp"
#include "sweeps/window_release.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// An MLA point's latent cache: the host copy the reference reads and the device copy the kernel
// reads, with its block table, lengths and scale. It depends on the storage and the lengths only,
// so the next point that differs in heads_q, q_len, splits or timing reuses the last one's.
struct MlaLatentOnDevice {
  std::string key;
  LatentCache host;
  DeviceBuffer<std::byte> data;
  DeviceBuffer<std::int32_t> page_indices, indptr, seq_lens, last_page_len;
  DeviceBuffer<float> scale;  // FP8's one scale; empty otherwise (the accessor's null scale is 1)

  MlaLatentOnDevice(std::string k, const LatentCacheConfig& config, const std::vector<std::int32_t>& lengths)
      : key(std::move(k)), host(config, lengths), data(host.data()), seq_lens(lengths) {
    if (config.storage == LatentStorage::paged) {
      // At least one entry each, so that an all-empty batch still has device arrays.
      page_indices = DeviceBuffer<std::int32_t>(host.page_indices().empty() ? std::vector<std::int32_t>{0}
                                                                            : host.page_indices());
      indptr = DeviceBuffer<std::int32_t>(host.indptr());
      std::vector<std::int32_t> last;
      for (const std::int32_t len : lengths) last.push_back(len == 0 ? 0 : (len - 1) % config.page_size + 1);
      last_page_len = DeviceBuffer<std::int32_t>(last);
    }
    if (dtype_is_fp8(config.dtype)) scale = DeviceBuffer<float>(std::vector<float>{host.scale()});
  }
};

// What a device's points reuse: the flusher's 2 x L2 buffer, the counter pass's profiler, and the
// last MLA point's latent cache (dropped as soon as another kind of point runs).
struct DeviceResources {
  std::unique_ptr<L2Flusher> flusher;
  CounterPass counters;
  std::shared_ptr<MlaLatentOnDevice> mla;
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
    finish_outputs(o_, lse_, o_io_, lse_base);
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
  json counters(const LaunchFn& launch, const json& model, TimingMode mode) override {
    return resources_.counters.profile(ctx_, launch, model, flusher(), mode == TimingMode::cold_write);
  }

 protected:
  L2Flusher& flusher() {
    if (!resources_.flusher) resources_.flusher = std::make_unique<L2Flusher>(ctx_.device);
    return *resources_.flusher;
  }

  // One layer's outputs (and its q in a 16-bit io dtype).
  struct IoBuffers {
    DeviceBuffer<float> o, lse;                // (B, q_len, H_q, D), (B, q_len, H_q): what verification reads
    DeviceBuffer<std::uint16_t> q_io, o_io;    // 16-bit io dtype only
  };

  // o and lse of the batch, and the problem's q, o, lse pointers. With a 16-bit io dtype, q is
  // rounded once (the backend reads the 16-bit values, the reference their exact float values,
  // on the device and in q_host) and o is written into a 16-bit buffer widened after the launch.
  static void attach_io_buffers(AttentionProblem& p, DeviceBuffer<float>& q, std::vector<float>& q_host,
                                IoBuffers& b) {
    // q_len query rows a sequence (the attention variants).
    const std::size_t rows = static_cast<std::size_t>(p.batch) * p.variant.q_len * p.shape.heads_q;
    const std::size_t elems = rows * p.shape.head_dim;
    b.o = DeviceBuffer<float>(elems);
    b.lse = DeviceBuffer<float>(rows);
    p.q = q.get();
    p.o = b.o.get();
    p.lse = b.lse.get();
    if (p.io_dtype == DType::fp32) return;
    const std::vector<std::uint16_t> bits = to_io_bits(q.download(), p.io_dtype);
    const std::vector<float> rounded = from_io_bits(bits, p.io_dtype);
    q.upload(rounded);
    if (!q_host.empty()) q_host = rounded;
    b.q_io = DeviceBuffer<std::uint16_t>(bits);
    b.o_io = DeviceBuffer<std::uint16_t>(elems);
    p.q = b.q_io.get();
    p.o = b.o_io.get();
  }
  // The point's own io buffers, and the sink logits when asked for (layers share them).
  void attach_io(AttentionProblem& p, DeviceBuffer<float>& q, std::vector<float>& q_host, std::uint64_t seed) {
    if (p.variant.sinks) {
      sinks_ = DeviceBuffer<float>(sink_logits(p.shape.heads_q, seed));
      p.sinks = sinks_.get();
    }
    IoBuffers b;
    attach_io_buffers(p, q, q_host, b);  // device pointers survive the moves below
    io_ = p.io_dtype;
    o_ = std::move(b.o);
    lse_ = std::move(b.lse);
    q_io_ = std::move(b.q_io);
    o_io_ = std::move(b.o_io);
  }
  // After a launch: o widened from the io dtype (poison included: NaN stays NaN), lse to the natural log.
  void finish_outputs(DeviceBuffer<float>& o, DeviceBuffer<float>& lse, const DeviceBuffer<std::uint16_t>& o_io,
                      LseBase lse_base) const {
    if (io_ != DType::fp32) o.upload(from_io_bits(o_io.download(), io_));
    if (lse_base != LseBase::natural) {
      std::vector<float> l = lse.download();
      lse_to_natural(l, lse_base);
      lse.upload(l);
    }
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
        verify_on_host_(ctx.verify_on_host || !device_reference_supports(d_)),
        window_release_(window_release_plan(point.parameters)) {}

  ~DecodeSteps() override {
    if (step_graph_) cudaGraphExecDestroy(step_graph_);
    if (capture_stream_) cudaStreamDestroy(capture_stream_);
  }

  void build(AttentionProblem& p) override {
    flusher();  // allocated before the point's pool, as every timed point needs it
    st_ = build_decode_state<T>(d_, data_options(), ctx_.stream, ctx_.phases);
    attach_views(p, st_, paged_, contiguous_, last_page_len_);
    attach_io(p, st_.q, st_.q_host, d_.seed);
  }

  // A paged point with a window: its pages, those released behind the window (every layer of a
  // layers > 1 point releases the same, having the same lengths), or why none were.
  json pool_record() const override {
    if (!window_release_.applies) return nullptr;
    const std::uint64_t page_bytes_kv = 2ull * static_cast<std::uint64_t>(d_.page_size) * d_.shape.heads_kv *
                                        d_.shape.head_dim * dtype_bytes(d_.dtype);
    return window_pool_json(window_release_, d_.page_size, st_.pages, st_.pages_released, page_bytes_kv);
  }

  // ---- layers > 1 (sweeps/layer_step.hpp) ----
  std::optional<std::string> layers_unsupported() const override { return std::nullopt; }

  std::vector<AttentionProblem> build_layers(const AttentionProblem& problem, int layers) override {
    std::vector<AttentionProblem> out;
    layers_.reserve(static_cast<std::size_t>(layers - 1));
    for (int l = 1; l < layers; ++l) {
      Layer& layer = layers_.emplace_back();
      layer.d = d_;  // the same lengths (so the same plan holds); another layer's values
      layer.d.seed = layer_seed(d_.seed, l);
      layer.st = build_decode_state<T>(layer.d, data_options(), ctx_.stream, ctx_.phases);
      AttentionProblem p = problem;
      attach_views(p, layer.st, layer.paged, layer.contiguous, layer.last_page_len);
      attach_io_buffers(p, layer.st.q, layer.st.q_host, layer.io);
      out.push_back(std::move(p));
    }
    return out;
  }

  // Captured on a stream of its own (the legacy default stream, ctx.stream, cannot be captured);
  // the graph is then launched on ctx.stream like any launch.
  LaunchFn capture_step(const std::vector<LaunchFn>& launches) override {
    if (!capture_stream_) DB_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
    DB_CUDA_CHECK(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
    cudaError_t launch_err = cudaSuccess;
    for (const LaunchFn& launch : launches)
      if (launch_err == cudaSuccess) launch_err = launch(capture_stream_);
    cudaGraph_t graph = nullptr;
    const cudaError_t end_err = cudaStreamEndCapture(capture_stream_, &graph);
    if (launch_err == cudaSuccess && end_err == cudaSuccess) launch_err = cudaGraphInstantiate(&step_graph_, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    DB_CUDA_CHECK(launch_err);
    DB_CUDA_CHECK(end_err);
    cudaGraphExec_t exec = step_graph_;
    return [exec](cudaStream_t s) { return cudaGraphLaunch(exec, s); };
  }

  void checked_step(const LaunchFn& step, LseBase lse_base) override {
    poison_outputs();
    for (Layer& layer : layers_) {
      layer.io.o.poison();
      layer.io.lse.poison();
      layer.io.o_io.poison();
    }
    DB_CUDA_CHECK(step(ctx_.stream));
    DB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
    finish_outputs(o_, lse_, o_io_, lse_base);
    for (Layer& layer : layers_) finish_outputs(layer.io.o, layer.io.lse, layer.io.o_io, lse_base);
  }

  CheckedVerification verify_layer(int l) override {
    if (l == 0) return verify();
    Layer& layer = layers_.at(static_cast<std::size_t>(l - 1));
    CheckedVerification v;
    if (verify_on_host_)
      v.result = verify_on_host(layer.d, layer.st, sinks_, layer.io.o, layer.io.lse, ctx_.phases);
    else if (layer.paged)
      v.result = verify_on_device(layer.d, layer.paged->kv, layer.paged->seq_lens_device, layer.paged->max_len,
                                  layer.st.q.get(), sinks_.get(), layer.io.o.get(), layer.io.lse.get(), ctx_.stream,
                                  ctx_.phases);
    else
      v.result = verify_on_device(layer.d, layer.contiguous->kv, layer.contiguous->seq_lens_device,
                                  layer.contiguous->max_len, layer.st.q.get(), sinks_.get(), layer.io.o.get(),
                                  layer.io.lse.get(), ctx_.stream, ctx_.phases);
    v.details["method"] = verify_on_host_ ? kVerifyOnHost : kVerifyOnDevice;
    return v;
  }

  CheckedVerification verify() override {
    CheckedVerification v;
    if (verify_on_host_)
      v.result = verify_on_host(d_, st_, sinks_, o_, lse_, ctx_.phases);
    else if (paged_)
      v.result = verify_on_device(d_, paged_->kv, paged_->seq_lens_device, paged_->max_len, st_.q.get(),
                                  sinks_.get(), o_.get(), lse_.get(), ctx_.stream, ctx_.phases);
    else
      v.result = verify_on_device(d_, contiguous_->kv, contiguous_->seq_lens_device, contiguous_->max_len,
                                  st_.q.get(), sinks_.get(), o_.get(), lse_.get(), ctx_.stream, ctx_.phases);
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
  // A further layer of a layers > 1 point: its own pool, data, q and outputs.
  struct Layer {
    DecodePoint d;
    DecodeState<T> st;
    std::optional<BatchView<PagedKV<T>>> paged;
    std::optional<BatchView<ContiguousKV<T>>> contiguous;
    DeviceBuffer<std::int32_t> last_page_len;
    IoBuffers io;
  };
  // Layer l's data seed: distinct per layer, layer 0 the point's own.
  static std::uint64_t layer_seed(std::uint64_t seed, int l) { return seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(l); }

  // The pool's batch view as the problem's K/V, lengths and (paged) last-page lengths.
  void attach_views(AttentionProblem& p, DecodeState<T>& st, std::optional<BatchView<PagedKV<T>>>& paged,
                    std::optional<BatchView<ContiguousKV<T>>>& contiguous, DeviceBuffer<std::int32_t>& last_page_len) {
    if (d_.paged) {
      paged = static_cast<PagedPool&>(*st.pool).batch<T>(st.handles);
      paged->kv = st.scales.attach(paged->kv, true);
      p.paged = erased_kv(paged->kv);
      p.seq_lens = paged->seq_lens_device;
      p.max_len = paged->max_len;
      last_page_len = DeviceBuffer<std::int32_t>(p.host_last_page_len);
      p.last_page_len = last_page_len.get();
    } else {
      contiguous = static_cast<ContiguousPool&>(*st.pool).batch<T>(st.handles);
      contiguous->kv = st.scales.attach(contiguous->kv, true);
      p.contiguous = erased_kv(contiguous->kv);
      p.seq_lens = contiguous->seq_lens_device;
      p.max_len = contiguous->max_len;
    }
    // The pool's uploads and batch()'s block-table gather run on the pool's own stream (a
    // non-blocking one: ctx.stream is the legacy default); the backend runs on ctx.stream. Without
    // this wait a long page-1 table could still be in flight when the kernel reads it (it was:
    // shuffled page-1 points at T = 2^18 failed verification on the H100).
    st.pool->backend().synchronize();
  }

  DecodeDataOptions data_options() const {
    return {.fill_on_host = ctx_.fill_on_host, .host_copy = verify_on_host_,
            .release_behind_window = window_release_.release};
  }

  DecodePoint d_;
  bool verify_on_host_;
  WindowReleasePlan window_release_;
  DecodeState<T> st_;
  std::optional<BatchView<PagedKV<T>>> paged_;
  std::optional<BatchView<ContiguousKV<T>>> contiguous_;
  std::vector<Layer> layers_;
  cudaStream_t capture_stream_ = nullptr;
  cudaGraphExec_t step_graph_ = nullptr;
};

// A shared-prefix batch (forked pages): the device reference checks every sequence; the host one
// (--verify cpu, or a head_dim the device reference cannot hold) a budgeted sample of them.
template <class T>
class SharedPrefixSteps final : public GpuSteps {
 public:
  SharedPrefixSteps(const Point& point, RunContext& ctx, DeviceResources& resources)
      : GpuSteps(point, ctx, resources),
        sp_(parse_shared_prefix_point(point.parameters)),
        host_mirror_(ctx.verify_on_host || !device_reference_supports(sp_.decode)),
        window_release_(window_release_plan(point.parameters)) {}

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

  // A windowed batch: every page kept (the pages the pool holds, shared ones once), and why.
  json pool_record() const override {
    if (!window_release_.applies) return nullptr;
    const DecodePoint& d = sp_.decode;
    const std::uint64_t page_bytes_kv =
        2ull * static_cast<std::uint64_t>(d.page_size) * d.shape.heads_kv * d.shape.head_dim * dtype_bytes(d.dtype);
    return window_pool_json(window_release_, d.page_size, st_.device_pool->pages().used_count(), 0, page_bytes_kv);
  }

  CheckedVerification verify() override {
    CheckedVerification v;
    std::size_t checked = static_cast<std::size_t>(sp_.spec.batch);
    if (host_mirror_) {
      const std::vector<int> seqs = shared_prefix_sequences_to_verify(sp_);
      PhaseTimer reference_phase(ctx_.phases, kPhaseReference);  // the host float64 reference and comparison
      v.result = verify_shared_prefix_on_host(sp_, st_, seqs, o_.download(), lse_.download(),
                                              sp_.decode.variant.sinks ? sinks_.download() : std::vector<float>{});
      checked = seqs.size();
    } else {
      // sp_.decode.lengths: N whole sequences (parse_shared_prefix_point), as the reference sees them.
      v.result = verify_on_device(sp_.decode, view_.kv, view_.seq_lens_device, view_.max_len, st_.q.get(),
                                  sinks_.get(), o_.get(), lse_.get(), ctx_.stream, ctx_.phases);
    }
    v.details = {{"method", host_mirror_ ? kVerifyOnHost : kVerifyOnDevice},
                 {"sequences_checked", checked},
                 {"sequences", sp_.spec.batch}};
    return v;
  }

 private:
  SharedPrefixPoint sp_;
  bool host_mirror_;
  WindowReleasePlan window_release_;
  SharedPrefixState<T> st_;
  BatchView<PagedKV<T>> view_;
};

// An MLA decode batch (attention = mla): the latent cache filled on the host from the seed
// (pools/latent_cache.hpp) and uploaded, q drawn and rounded to the kernel's operand type
// (sweeps/mla_verify.hpp), o (B, q_len, H_q, value_dim) and lse; checked on the host against the
// float64 MLA reference over a budgeted sample of rows (the GPU reference computes MHA only). A
// backend that reads q and writes o in FP16 or BF16 (flashinfer_mla) gets q rounded to it (the
// reference then reads the rounded values) and o in a 16-bit buffer widened after the launch.
template <class T>
class MlaSteps final : public GpuSteps {
 public:
  MlaSteps(const Point& point, RunContext& ctx, DeviceResources& resources)
      : GpuSteps(point, ctx, resources), m_(parse_mla_point(point.parameters)) {}

  void build(AttentionProblem& p) override {
    flusher();
    const DecodePoint& d = m_.decode;
    {
      PhaseTimer phase(ctx_.phases, kPhaseDataFill);
      latent_ = latent_cache();
      q_host_ = mla_query(m_.shape, static_cast<int>(d.lengths.size()), d.dtype, d.seed);
      q_ = DeviceBuffer<float>(q_host_);
    }
    const LatentCache& c = latent_->host;
    const T* base = reinterpret_cast<const T*>(latent_->data.get());
    const float* scale = latent_->scale.get();  // null unless FP8
    if (d.paged) {
      p.paged = erased_kv(c.paged_view<T>(base, latent_->page_indices.get(), latent_->indptr.get(), scale));
      p.last_page_len = latent_->last_page_len.get();
    } else {
      p.contiguous = erased_kv(c.contiguous_view<T>(base, scale));
    }
    p.seq_lens = latent_->seq_lens.get();
    p.max_len = c.max_len();
    const std::size_t rows = d.lengths.size() * static_cast<std::size_t>(m_.shape.rows());
    o_ = DeviceBuffer<float>(rows * m_.shape.value_dim());
    lse_ = DeviceBuffer<float>(rows);
    p.q = q_.get();
    p.o = o_.get();
    p.lse = lse_.get();
    io_ = p.io_dtype;
    rounded_weights_ = p.denominator_sums_rounded_weights;
    if (p.io_dtype != DType::fp32) {
      const std::vector<std::uint16_t> bits = to_io_bits(q_host_, p.io_dtype);
      q_host_ = from_io_bits(bits, p.io_dtype);
      q_.upload(q_host_);
      q_io_ = DeviceBuffer<std::uint16_t>(bits);
      o_io_ = DeviceBuffer<std::uint16_t>(rows * m_.shape.value_dim());
      p.q = q_io_.get();
      p.o = o_io_.get();
    }
  }

  CheckedVerification verify() override {
    CheckedVerification v;
    const MlaRowSample sample = mla_rows_to_verify(m_.shape, m_.decode.lengths);
    {
      PhaseTimer phase(ctx_.phases, kPhaseReference);  // the host float64 reference and comparison
      const MlaVerification m = verify_mla_on_host(m_.shape, latent_->host, q_host_, o_.download(), lse_.download(),
                                                   sample, {io_, rounded_weights_});
      v.result = m;
      v.details = m.terms_json();
    }
    v.details.update({{"method", kVerifyOnHost},
                      {"reference", "mla_reference"},
                      {"rule", kMlaVerificationRule},
                      {"sequences_checked", sample.sequences.size()},
                      {"rows_checked", sample.rows() * m_.shape.q_len},
                      {"rows", m_.decode.lengths.size() * static_cast<std::size_t>(m_.shape.rows())}});
    return v;
  }

 private:
  std::shared_ptr<MlaLatentOnDevice> latent_cache() {
    const DecodePoint& d = m_.decode;
    LatentCacheConfig config;
    config.key_dim = m_.shape.key_dim();
    config.dtype = d.dtype;
    config.storage = d.paged ? LatentStorage::paged : LatentStorage::contiguous;
    config.page_size = d.page_size;
    config.shuffle_pages = d.page_order == "shuffled";
    config.seed = d.seed;
    std::string key = std::string(dtype_name(d.dtype)) + "/" + std::to_string(config.key_dim) + "/" +
                      (d.paged ? "paged" + std::to_string(d.page_size) + d.page_order : "contiguous") + "/" +
                      std::to_string(d.seed) + "/";
    for (const std::int32_t len : d.lengths) key += std::to_string(len) + ",";
    if (resources_.mla && resources_.mla->key == key) return resources_.mla;
    resources_.mla.reset();  // its device memory back before the next one is allocated
    resources_.mla = std::make_shared<MlaLatentOnDevice>(key, config, d.lengths);
    return resources_.mla;
  }

  MlaPoint m_;
  bool rounded_weights_ = false;  // the backend's denominator sums rounded weights: the lse rule
  std::shared_ptr<MlaLatentOnDevice> latent_;
  std::vector<float> q_host_;
  DeviceBuffer<float> q_;
};

}  // namespace

StepsFactory gpu_steps_factory() {
  auto resources = std::make_shared<DeviceResources>();
  return [resources](const AttentionProblem& described, const Point& point,
                     RunContext& ctx) -> std::unique_ptr<PointSteps> {
    // The pipeline's one switch on the storage type.
    return with_storage_type(described.kv_dtype, [&]<class T>(std::type_identity<T>) -> std::unique_ptr<PointSteps> {
      if (described.mla) return std::make_unique<MlaSteps<T>>(point, ctx, *resources);
      resources->mla.reset();  // another kind of point: the last MLA point's latent cache goes
      if (described.prefix) return std::make_unique<SharedPrefixSteps<T>>(point, ctx, *resources);
      return std::make_unique<DecodeSteps<T>>(point, ctx, *resources);
    });
  };
}

}  // namespace decode_bench::sweeps
