#include "sweeps/shared_prefix_runner.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/kernel_kind.hpp"
#include "harness/l2_flush.hpp"
#include "harness/nvtx.hpp"
#include "harness/read_floor.hpp"
#include "harness/results_schema.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/plan_json.hpp"
#include "kernels/shared_prefix.hpp"
#include "kernels/traffic_model.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/block_timeline_capture.hpp"
#include "sweeps/counter_pass.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/decode_verify.hpp"
#include "sweeps/phase_timer.hpp"
#include "sweeps/shared_prefix_bound.hpp"
#include "sweeps/shared_prefix_fill.hpp"
#include "sweeps/shared_prefix_point.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// Reference work (tokens x query heads x D per sequence) verified at most per point. Small points
// verify every sequence; the cascade's largest (1024 x 33K tokens x 32 heads) would take the
// float64 reference hours, so those verify the first and last sequence of every group and then
// sequences in a seeded random order until the budget is spent (the JSON records how many).
constexpr double kVerifyBudget = 8.0e9;

// The batch in device memory for the kernels, and (for --verify cpu) a host mirror for the float64
// CPU reference, built by the same fork/append operations from the same data, so block tables
// agree token for token. Data: generated in place on the device (default), or on the host and
// uploaded through the appends (--fill host, and always with the host mirror); both give the same
// values (sweeps/shared_prefix_fill.hpp).
template <class T>
struct SharedPrefixState {
  std::unique_ptr<PagedPool> device_pool, host_pool;  // host_pool only with the mirror
  std::vector<SequenceHandle> device_handles, host_handles;
  SharedPrefixLayout layout;
  std::vector<float> q_host;  // (N, H_q, D), only with the mirror
  DeviceBuffer<float> q;      // (N, H_q, D)
  KvScales scales;  // FP8: per-KV-head dequantization scales (the pools store bytes only)
};

struct DataOptions {
  bool host_mirror = false;  // host pool + CPU reference
  bool host_fill = false;    // generate on the host and upload
};

template <class T>
SharedPrefixState<T> build_state(const SharedPrefixPoint& sp, const DataOptions& options, cudaStream_t stream) {
  const DecodePoint& d = sp.decode;
  SharedPrefixState<T> st;
  PagedPoolConfig cfg;
  cfg.layout = {d.shape.heads_kv, d.shape.head_dim, d.dtype};
  cfg.page_size = d.page_size;
  cfg.num_pages = static_cast<std::int32_t>(shared_prefix_pages(sp.spec, d.page_size));
  cfg.max_seq_len = sp.spec.length();
  cfg.max_seqs = sp.spec.batch + static_cast<std::int32_t>(sp.spec.group_sizes().size()) + 1;
  cfg.page_order = parse_page_order(d.page_order).value_or(PageOrder::sequential);
  cfg.order_seed = d.seed + 1;
  st.device_pool = std::make_unique<PagedPool>(cfg, make_device_backend(stream));
  std::vector<PagedPool*> pools{st.device_pool.get()};
  if (options.host_mirror) {
    PagedPoolConfig host_cfg = cfg;
    host_cfg.page_order = PageOrder::sequential;  // its own placement: the reference reads by block table
    st.host_pool = std::make_unique<PagedPool>(host_cfg, make_host_backend());
    pools.push_back(st.host_pool.get());
  }
  SharedSegmentFill fill;  // empty: pages reserved, data written on the device below
  if (options.host_fill || options.host_mirror)
    fill = [&](SharedSegment kind, int index, std::int64_t len, void* k, void* v) {
      fill_shared_segment_host(static_cast<T*>(k), false, kind, index, len, d.shape.heads_kv, d.shape.head_dim, d.seed);
      fill_shared_segment_host(static_cast<T*>(v), true, kind, index, len, d.shape.heads_kv, d.shape.head_dim, d.seed);
    };
  auto handles = build_shared_prefix_batch(pools, sp.spec, fill);
  st.device_handles = std::move(handles[0]);
  if (options.host_mirror) st.host_handles = std::move(handles[1]);
  st.layout = shared_prefix_layout(sp.spec, d.page_size);
  // The layout is derived from the spec; the pool is what the kernels read. They must agree: every
  // sequence of a level holds the same physical pages over the level's tokens.
  for (const SharedLevel& level : st.layout.levels)
    for (int s = level.first_seq + 1; s < level.first_seq + level.num_seqs; ++s) {
      const auto a = st.device_pool->block_table(st.device_handles[level.first_seq]);
      const auto b = st.device_pool->block_table(st.device_handles[s]);
      if (!std::equal(a.begin() + level.token_begin / d.page_size, a.begin() + level.token_end / d.page_size,
                      b.begin() + level.token_begin / d.page_size))
        throw std::logic_error("shared-prefix batch: sequence " + std::to_string(s) +
                               " does not share the pages of its level's tokens [" +
                               std::to_string(level.token_begin) + ", " + std::to_string(level.token_end) + ")");
    }
  // FP8: the generator's bytes are in units of the format; the scales give them their magnitude.
  st.scales = KvScales::for_point(d.dtype, d.shape.heads_kv, d.seed);
  const std::size_t q_elems = static_cast<std::size_t>(sp.spec.batch) * d.shape.heads_q * d.shape.head_dim;
  st.q = DeviceBuffer<float>(q_elems);
  if (!fill) {
    const auto in_place = st.device_pool->template batch<T>(st.device_handles);
    DB_CUDA_CHECK(fill_shared_prefix_device(in_place.kv, in_place.seq_lens_device, sp.spec, st.layout,
                                            d.shape.heads_kv, d.shape.head_dim, d.seed, stream));
  }
  if (options.host_mirror || options.host_fill) {
    st.q_host.resize(q_elems);
    fill_q_host(st.q_host, d.seed, sp.spec.batch, d.shape.heads_q, d.shape.head_dim);
    st.q.upload(st.q_host);
    if (!options.host_mirror) st.q_host.clear();
  } else {
    DB_CUDA_CHECK(fill_q_device(st.q.get(), d.seed, sp.spec.batch, d.shape.heads_q, d.shape.head_dim, stream));
  }
  st.device_pool->backend().synchronize();
  return st;
}

// Which sequences to verify, in order, within kVerifyBudget: every group's first and last, then
// the rest in a seeded random order.
std::vector<int> sequences_to_verify(const SharedPrefixPoint& sp) {
  const int n = sp.spec.batch;
  std::vector<int> order;
  std::vector<bool> taken(n, false);
  const auto take = [&](int s) {
    if (!taken[s]) order.push_back(s);
    taken[s] = true;
  };
  int first = 0;
  for (int size : sp.spec.group_sizes()) {
    take(first);
    take(first + size - 1);
    first += size;
  }
  std::vector<int> rest;
  for (int s = 0; s < n; ++s)
    if (!taken[s]) rest.push_back(s);
  std::shuffle(rest.begin(), rest.end(), std::mt19937_64(sp.decode.seed + 31));
  order.insert(order.end(), rest.begin(), rest.end());
  const double per_seq = static_cast<double>(sp.spec.length()) * sp.decode.shape.heads_q * sp.decode.shape.head_dim;
  const auto affordable = static_cast<std::size_t>(std::max(2.0, std::floor(kVerifyBudget / per_seq)));
  if (order.size() > affordable) order.resize(affordable);
  return order;
}

// The float64 reference over each chosen whole sequence (host pool), in parallel over sequences.
template <class T>
VerificationResult verify_sequences(const SharedPrefixPoint& sp, SharedPrefixState<T>& st, const std::vector<int>& seqs,
                                    const std::vector<float>& o, const std::vector<float>& lse) {
  const auto host = st.host_pool->template batch<T>(st.host_handles);
  const DecodeShape shape = sp.decode.shape;
  const std::size_t hd = static_cast<std::size_t>(shape.heads_q) * shape.head_dim;
  std::vector<VerificationResult> each(seqs.size());
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < seqs.size();) {
      const int s = seqs[i];
      const auto ref = reference_decode(st.scales.attach(host.kv, false), s, host.lengths_host[s],
                                        std::span<const float>(st.q_host.data() + s * hd, hd), shape);
      each[i] = verify_decode(std::span<const float>(o.data() + s * hd, hd),
                              std::span<const float>(lse.data() + s * shape.heads_q, shape.heads_q), ref,
                              sp.decode.dtype);
    }
  };
  const unsigned threads = std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, seqs.size()); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  VerificationResult total;
  total.passed = true;
  for (const auto& r : each) accumulate(total, r);
  return total;
}

// The point's roofline bound (sweeps/shared_prefix_bound.hpp) from its model and prefix levels.
json bound_json(const TrafficModel& model, const SharedPrefixLayout& layout, const DecodeShape& shape,
                const json& ceilings, TimingMode mode) {
  double prefix_row_tokens = 0;
  for (const SharedLevel& l : layout.levels)
    prefix_row_tokens += static_cast<double>(l.token_end - l.token_begin) * l.num_seqs;
  return shared_prefix_bound(model.k_bytes + model.v_bytes, prefix_row_tokens, shape.heads_q, shape.head_dim,
                             ceilings, mode);
}

// A second stream and fork/join events for the overlapped launch (created once per runner).
struct OverlapResources {
  SharedPrefixStreams s;
  OverlapResources() {
    DB_CUDA_CHECK(cudaStreamCreateWithFlags(&s.aux, cudaStreamNonBlocking));
    DB_CUDA_CHECK(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming));
    DB_CUDA_CHECK(cudaEventCreateWithFlags(&s.join, cudaEventDisableTiming));
  }
  ~OverlapResources() {
    cudaEventDestroy(s.join);
    cudaEventDestroy(s.fork);
    cudaStreamDestroy(s.aux);
  }
  OverlapResources(const OverlapResources&) = delete;
  OverlapResources& operator=(const OverlapResources&) = delete;
};

class SharedPrefixRunner final : public PointRunner {
 public:
  // composed: kernel=shared_prefix; otherwise the plain batch decode over the same pages.
  explicit SharedPrefixRunner(bool composed) : composed_(composed) {}
  std::string name() const override {
    return std::string(kernel_name(composed_ ? KernelKind::shared_prefix : KernelKind::batch_decode));
  }
  std::optional<std::string> cannot_run(const Point& point) const override {
    return shared_prefix_point_unsupported(point.parameters);
  }

  json run(const Point& point, RunContext& ctx) override {
    const SharedPrefixPoint sp = parse_shared_prefix_point(point.parameters);
    switch (sp.decode.dtype) {
      case DType::fp32: return run_typed<float>(point, sp, ctx);
      case DType::fp16: return run_typed<__half>(point, sp, ctx);
      case DType::bf16: return run_typed<__nv_bfloat16>(point, sp, ctx);
      case DType::fp8_e4m3: return run_typed<__nv_fp8_e4m3>(point, sp, ctx);
      case DType::fp8_e5m2: return run_typed<__nv_fp8_e5m2>(point, sp, ctx);
    }
    return {};
  }

 private:
  template <class T>
  json run_typed(const Point& point, const SharedPrefixPoint& sp, RunContext& ctx) {
    if (!flusher_) flusher_ = std::make_unique<L2Flusher>(ctx.device);
    const DecodePoint& d = sp.decode;
    // The device reference covers every sequence; the host one (--verify cpu, or a head_dim the
    // device reference cannot hold) a budgeted sample of them.
    const bool host_mirror = ctx.verify_on_host || !device_reference_supports(d);
    SharedPrefixState<T> st = [&] {
      NvtxRange range("build " + point.id);
      // The pools, their forks and appends, and the data: one phase (a host fill and its upload
      // happen inside the builder's appends).
      PhaseTimer phase(ctx.phases, kPhaseDataFill);
      return build_state<T>(sp, {.host_mirror = host_mirror, .host_fill = ctx.fill_on_host}, ctx.stream);
    }();
    const int n = sp.spec.batch;
    DeviceBuffer<float> o(static_cast<std::size_t>(n) * d.shape.heads_q * d.shape.head_dim),
        lse(static_cast<std::size_t>(n) * d.shape.heads_q);
    const DeviceBuffer<float>& q = st.q;
    const auto view = st.device_pool->template batch<T>(st.device_handles);
    const PagedKV<T> kv = st.scales.attach(view.kv, true);  // what the kernels and the reference read
    // Uploads and the batch CSR gather run on the pool's stream; the kernels on others.
    st.device_pool->backend().synchronize();

    json result, plan_json;
    TrafficModel model;
    LaunchFn launch, serial;
    std::function<cudaError_t(cudaStream_t)> init_workspace;
    DeviceBuffer<std::uint8_t> workspace;
    SharedPrefixPlan sp_plan;  // outlives init_workspace (its metadata image is uploaded from it)
    DecodePlan plan;
    const SharedPrefixProblem sp_problem{d.shape, d.dtype, q.get(), o.get(), lse.get()};
    const DecodeProblem problem{d.shape, d.dtype, n, view.max_len, view.seq_lens_device, q.get(), o.get(), lse.get()};
    if (composed_) {
      const SharedPrefixOptions options{.prefix = {}, .suffix = {.splits = d.blocks}, .overlap = sp.overlap};
      DB_CUDA_CHECK(plan_shared_prefix<T>(kv, sp_problem, st.layout, options, &sp_plan));
      workspace = DeviceBuffer<std::uint8_t>(sp_plan.workspace_bytes);
      if (sp.overlap && sp_plan.has_prefix && !overlap_) overlap_ = std::make_unique<OverlapResources>();
      const SharedPrefixStreams* streams = sp.overlap && sp_plan.has_prefix ? &overlap_->s : nullptr;
      launch = [&, streams](cudaStream_t s) {
        return run_shared_prefix<T>(kv, sp_problem, sp_plan, workspace.get(), s, streams);
      };
      serial = [&](cudaStream_t s) { return run_shared_prefix<T>(kv, sp_problem, sp_plan, workspace.get(), s, nullptr); };
      init_workspace = [&](cudaStream_t s) { return init_shared_prefix_workspace(sp_plan, workspace.get(), s); };
      model = shared_prefix_traffic_model(d.shape, d.dtype, st.layout, true, sp_plan.suffix.num_splits);
      plan_json = to_json(sp_plan, st.layout.levels.size(), streams != nullptr);
    } else {
      DB_CUDA_CHECK(plan_decode<PagedKV<T>>(DecodeKernel::flash_decode, problem, {.splits = d.blocks}, &plan));
      workspace = DeviceBuffer<std::uint8_t>(plan.workspace_bytes);
      launch = [&](cudaStream_t s) { return run_decode<PagedKV<T>>(kv, problem, plan, workspace.get(), s); };
      serial = launch;
      init_workspace = [&](cudaStream_t s) { return init_decode_workspace(plan, workspace.get(), s); };
      model = shared_prefix_traffic_model(d.shape, d.dtype, st.layout, false, plan.num_splits);
      plan_json = to_json(plan);
    }

    // 1. Verify: poisoned outputs and workspace, one launch, whole sequences against the reference.
    {
      NvtxRange range("verify " + point.id);
      PhaseTimer phase(ctx.phases, kPhaseVerification);
      o.poison();
      lse.poison();
      workspace.poison();
      DB_CUDA_CHECK(init_workspace(ctx.stream));
      DB_CUDA_CHECK(launch(ctx.stream));
      DB_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    }
    VerificationResult verification;
    std::size_t checked = static_cast<std::size_t>(n);
    if (host_mirror) {
      const std::vector<int> seqs = sequences_to_verify(sp);
      PhaseTimer reference_phase(ctx.phases, kPhaseReference);  // the host float64 reference and comparison
      verification = verify_sequences(sp, st, seqs, o.download(), lse.download());
      checked = seqs.size();
    } else {
      // d.lengths: N whole sequences (parse_shared_prefix_point), as the reference sees them.
      verification = verify_on_device(d, kv, view.seq_lens_device, view.max_len, q.get(), o.get(), lse.get(),
                                      ctx.stream, ctx.phases);
    }
    result["verification"] = verification.to_json();
    result["verification"]["method"] = host_mirror ? kVerifyOnHost : kVerifyOnDevice;
    result["verification"]["sequences_checked"] = checked;
    result["verification"]["sequences"] = n;
    result["model"] = model.to_json(composed_ ? "shared_prefix_unique_bytes+level_states"
                                              : "shared_prefix_unique_bytes+prefix_reread");
    result["plan"] = plan_json;
    const TimingMode mode = parse_timing_mode(d.timing);
    result["bound"] = bound_json(model, st.layout, d.shape, ctx.ceilings, mode);
    if (!verification.passed) {
      result["status"] = std::string(kStatusVerificationFailed);
      result["reason"] = verification.summary();
      return result;
    }

    // 2. Time the launch (both phases and the merge; cold: L2 flushed before each).
    TimingOptions topt;
    topt.mode = mode;
    PhaseTimer timing_phase(ctx.phases, kPhaseTiming);
    const TimingResult timing = time_launches(point.id, launch, topt, *flusher_, ctx.stream);
    timing_phase.stop();
    if (!timing.ok()) {
      if (timing.sticky_error) throw CudaError(static_cast<cudaError_t>(timing.cuda_error), point.id + ": " + timing.error);
      result["status"] = std::string(kStatusError);
      result["reason"] = timing.filtered_out ? "excluded by --benchmark_filter" : timing.error;
      return result;
    }
    if (!block_timeline_file().empty()) {  // a diagnostic launch after timing (sweeps/block_timeline_capture.hpp)
      std::string why;
      if (capture_block_timeline(point.id, launch, *flusher_, ctx.stream, &why) != cudaSuccess)
        result["block_timeline_error"] = why;
    }
    const double median = timing.stats.median;
    result["status"] = std::string(kStatusOk);
    result["timing"] = timing.to_json();
    ctx.measured_seconds += median * 1e-6 * timing.samples_us.size() *
                            std::max<long long>(1, timing.iterations_per_repetition);
    result["achieved"] = achieved_rates(model.minimum_bytes(), model.flops, median, ctx.ceilings, topt.mode);
    add_bound_ratios(result["bound"], median);

    // 3. Count: a separate profiled pass of the one-stream launch (the same kernels; the range
    // profiler replays a range, which two concurrent streams would not make clearer).
    if (d.counters) {  // the counters axis / --no-counters, as for the decode runner
      PhaseTimer phase(ctx.phases, kPhaseCounters);
      result["counters"] = counters_.profile(ctx, serial, result["model"], *flusher_);
    }
    return result;
  }

  bool composed_;
  std::unique_ptr<L2Flusher> flusher_;
  std::unique_ptr<OverlapResources> overlap_;
  CounterPass counters_;
};

// kernel=batch_decode: prefix points over forked pages here, the rest to the decode runner.
class BatchDecodeRunner final : public PointRunner {
 public:
  explicit BatchDecodeRunner(std::unique_ptr<PointRunner> plain) : plain_(std::move(plain)), shared_(false) {}
  std::string name() const override { return std::string(kernel_name(KernelKind::batch_decode)); }
  std::optional<std::string> cannot_run(const Point& point) const override {
    return has_prefix(point) ? shared_.cannot_run(point) : plain_->cannot_run(point);
  }
  std::uint64_t device_bytes_needed(const Point& point) const override {
    return has_prefix(point) ? shared_.device_bytes_needed(point) : plain_->device_bytes_needed(point);
  }
  json run(const Point& point, RunContext& ctx) override {
    return has_prefix(point) ? shared_.run(point, ctx) : plain_->run(point, ctx);
  }

 private:
  static bool has_prefix(const Point& p) { return p.parameters.value("prefix_len", std::int64_t{0}) > 0; }
  std::unique_ptr<PointRunner> plain_;
  SharedPrefixRunner shared_;
};

}  // namespace

std::unique_ptr<PointRunner> make_shared_prefix_runner() { return std::make_unique<SharedPrefixRunner>(true); }
std::unique_ptr<PointRunner> make_batch_decode_runner(std::unique_ptr<PointRunner> plain) {
  return std::make_unique<BatchDecodeRunner>(std::move(plain));
}

}  // namespace decode_bench::sweeps
