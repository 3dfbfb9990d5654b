#include "sweeps/decode_runner.hpp"

#include <chrono>
#include <cmath>
#include <type_traits>
#include <variant>

#include "harness/counters/derived_metrics.hpp"
#include "harness/counters/metric_table.hpp"
#include "harness/counters/range_profiler.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/l2_flush.hpp"
#include "harness/nvtx.hpp"
#include "harness/pinned_buffer.hpp"
#include "harness/results_schema.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/traffic_model.hpp"
#include "pools/contiguous_pool.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/memory_estimate.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using counters::counters_unavailable;
using counters::derive_counters;
using counters::metric_names_with_extras;
using counters::RangeProfiler;
using counters::raw_map;

// Fresh random values in [-1, 1) (never zeros): splitmix64 per element, fast enough for 2^28.
template <class T>
void fill_random(std::vector<T>& out, std::uint64_t seed) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : out) {
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = from_float<T>(static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0));
  }
}

// The axis table has already checked the value.
PageOrder page_order_of(const std::string& s) { return parse_page_order(s).value_or(PageOrder::sequential); }

// The KV state of one point: the pool, its sequences, and the host copy the reference reads.
template <class T>
struct DecodeState {
  std::unique_ptr<KVPool> pool;
  std::vector<SequenceHandle> handles;
  std::vector<std::vector<T>> k, v;  // per sequence, (H_kv, len, D)
  std::vector<float> q;              // (B, H_q, D)
};

template <class T>
DecodeState<T> build_state(const DecodePoint& d, cudaStream_t stream) {
  DecodeState<T> st;
  const KVLayout layout{d.shape.heads_kv, d.shape.head_dim, d.dtype};
  const int batch = static_cast<int>(d.lengths.size());
  if (d.paged) {
    PagedPoolConfig cfg;
    cfg.layout = layout;
    cfg.page_size = d.page_size;
    std::int64_t pages = 0;
    for (auto len : d.lengths) pages += (len + d.page_size - 1) / d.page_size;
    cfg.num_pages = static_cast<std::int32_t>(std::max<std::int64_t>(pages, 1));
    cfg.max_seq_len = std::max<std::int64_t>(d.max_len(), 1);
    cfg.max_seqs = batch;
    cfg.page_order = page_order_of(d.page_order);
    cfg.order_seed = d.seed + 1;
    st.pool = std::make_unique<PagedPool>(cfg, make_device_backend(stream));
  } else {
    ContiguousPoolConfig cfg;
    cfg.layout = layout;
    cfg.max_seq_len = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(d.max_len() * d.fragmentation)));
    cfg.max_seqs = batch;
    st.pool = std::make_unique<ContiguousPool>(cfg, make_device_backend(stream));
  }
  const std::size_t row = static_cast<std::size_t>(d.shape.heads_kv) * d.shape.head_dim;
  for (int b = 0; b < batch; ++b) {
    st.k.emplace_back(row * d.lengths[b]);
    st.v.emplace_back(row * d.lengths[b]);
    fill_random(st.k.back(), d.seed * 1000003 + 2 * b + 1);
    fill_random(st.v.back(), d.seed * 1000003 + 2 * b + 2);
    st.handles.push_back(st.pool->admit(std::span<const T>(st.k.back()), std::span<const T>(st.v.back()), d.lengths[b]));
  }
  st.q.resize(static_cast<std::size_t>(batch) * d.shape.heads_q * d.shape.head_dim);
  fill_random(st.q, d.seed * 7919 + 5);
  return st;  // uploads may still be in flight on the pool's stream: the runner waits before use
}

// Verification of every sequence of the batch against the float64 reference on the host copy.
template <class T>
VerificationResult verify_all(const DecodePoint& d, const DecodeState<T>& st, const std::vector<float>& o,
                              const std::vector<float>& lse) {
  VerificationResult total;
  total.passed = true;
  const std::size_t hd = static_cast<std::size_t>(d.shape.heads_q) * d.shape.head_dim;
  for (std::size_t b = 0; b < d.lengths.size(); ++b) {
    const auto host = ContiguousKV<T>::make(st.k[b].data(), st.v[b].data(), d.shape.heads_kv,
                                            std::max<std::int64_t>(d.lengths[b], 1), d.shape.head_dim);
    const auto ref = reference_decode(host, 0, d.lengths[b], std::span<const float>(st.q.data() + b * hd, hd), d.shape);
    accumulate(total, verify_decode(std::span<const float>(o.data() + b * hd, hd),
                                    std::span<const float>(lse.data() + b * d.shape.heads_q, d.shape.heads_q), ref,
                                    d.dtype));
  }
  return total;
}

class GpuDecodeRunner final : public PointRunner {
 public:
  explicit GpuDecodeRunner(std::string kernel) : kernel_(std::move(kernel)) {}
  std::string name() const override { return kernel_; }
  std::optional<std::string> cannot_run(const Point& point) const override {
    return decode_point_unsupported(point.parameters);
  }

  json run(const Point& point, RunContext& ctx) override {
    const DecodePoint d = parse_decode_point(point.parameters);
    switch (d.dtype) {
      case DType::fp32: return run_typed<float>(point, d, ctx);
      case DType::fp16: return run_typed<__half>(point, d, ctx);
      case DType::bf16: return run_typed<__nv_bfloat16>(point, d, ctx);
    }
    return {};
  }

 private:
  template <class T>
  json run_typed(const Point& point, const DecodePoint& d, RunContext& ctx) {
    if (!flusher_) flusher_ = std::make_unique<L2Flusher>(ctx.device);
    const DecodeKernel kernel = kernel_ == "baseline" ? DecodeKernel::baseline : DecodeKernel::flash_decode;
    DecodeState<T> st = [&] {
      NvtxRange range("build " + point.id);
      return build_state<T>(d, ctx.stream);
    }();
    const int batch = static_cast<int>(d.lengths.size());
    const std::size_t out_elems = static_cast<std::size_t>(batch) * d.shape.heads_q * d.shape.head_dim;
    DeviceBuffer<float> q(st.q), o(out_elems), lse(static_cast<std::size_t>(batch) * d.shape.heads_q);

    json result;
    const auto run_with = [&](const auto& view) {
      using KV = std::decay_t<decltype(view.kv)>;
      // The pool's uploads and batch()'s block-table gather run on the pool's own stream (a
      // non-blocking one: ctx.stream is the legacy default); the decode runs on ctx.stream. Without
      // this wait a long page-1 table could still be in flight when the kernel reads it (it was:
      // shuffled page-1 points at T = 2^18 failed verification on the H100).
      st.pool->backend().synchronize();
      const DecodeProblem problem{d.shape, d.dtype, batch, view.max_len, view.seq_lens_device, q.get(), o.get(), lse.get()};
      DecodePlan plan;
      DB_CUDA_CHECK(plan_decode<KV>(kernel, problem, {.splits = d.blocks}, &plan));
      DeviceBuffer<std::uint8_t> workspace(plan.workspace_bytes);
      const auto launch = [&](cudaStream_t s) { return run_decode<KV>(view.kv, problem, plan, workspace.get(), s); };

      // 1. Verify: poisoned outputs, one launch, every sequence against the reference.
      {
        NvtxRange range("verify " + point.id);
        o.poison();
        lse.poison();
        workspace.poison();
        DB_CUDA_CHECK(init_decode_workspace(plan, workspace.get(), ctx.stream));
        DB_CUDA_CHECK(launch(ctx.stream));
        DB_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      }
      const VerificationResult verification = verify_all(d, st, o.download(), lse.download());
      std::vector<std::int32_t> pages_per_seq;
      if (d.paged)
        for (auto len : d.lengths) pages_per_seq.push_back((len + d.page_size - 1) / d.page_size);
      const TrafficModel model = decode_traffic_model(kernel, d.shape, d.dtype, d.lengths, pages_per_seq, plan.num_splits);
      result["verification"] = verification.to_json();
      result["model"] = model.to_json(kernel == DecodeKernel::baseline ? "decode_min_bytes+baseline_scores"
                                                                       : "decode_min_bytes+splitk_partials");
      result["plan"] = {{"path", std::string(decode_path_name(plan.path))}, {"num_splits", plan.num_splits},
                        {"active_splits", plan.active_splits},
                        {"heads_per_block", plan.heads_per_block},
                        {"chunk", plan.chunk},
                        {"tile_tokens", plan.tile_tokens},
                        {"interleaved", plan.interleaved},
                        {"fused_merge", plan.fused_merge},
                        {"blocks_per_sm", plan.blocks_per_sm},
                        {"workspace_bytes", plan.workspace_bytes}};
      if (!verification.passed) {
        result["status"] = std::string(kStatusVerificationFailed);
        result["reason"] = verification.summary();
        return;
      }

      // 2. Time: kernel only, or (end_to_end) with K, V and q uploaded and o, lse downloaded around it.
      TimingOptions topt;
      topt.mode = parse_timing_mode(d.timing);
      TimingResult timing;
      if constexpr (std::is_same_v<KV, ContiguousKV<T>>) {
        if (d.end_to_end) timing = time_end_to_end(point.id, view.kv, batch, launch, q, o, lse, topt, ctx.stream);
      }
      if (!d.end_to_end) timing = time_launches(point.id, launch, topt, *flusher_, ctx.stream);
      if (!timing.ok()) {
        if (timing.sticky_error) throw CudaError(static_cast<cudaError_t>(timing.cuda_error), point.id + ": " + timing.error);
        result["status"] = std::string(kStatusError);
        result["reason"] = timing.filtered_out ? "excluded by --benchmark_filter" : timing.error;
        return;
      }
      result["status"] = std::string(kStatusOk);
      result["timing"] = timing.to_json();
      ctx.measured_seconds += timing.stats.median * 1e-6 * timing.samples_us.size() *
                              std::max<long long>(1, timing.iterations_per_repetition);
      const double gbps = model.minimum_bytes() / (timing.stats.median * 1e3);
      json achieved = {{"gbps", gbps}, {"tflops", model.flops / (timing.stats.median * 1e6)}};
      if (ctx.ceilings.contains("dram_read"))
        achieved["fraction_of_dram_read"] = gbps / ctx.ceilings["dram_read"].value("value", 1.0);
      result["achieved"] = achieved;

      // 3. Count: a separate profiled pass (never the timed one), L2 flushed before each replay.
      if (!d.end_to_end) result["counters"] = profile(ctx, launch, result["model"]);
    };
    if (d.paged)
      run_with(static_cast<PagedPool&>(*st.pool).batch<T>(st.handles));
    else
      run_with(static_cast<ContiguousPool&>(*st.pool).batch<T>(st.handles));
    return result;
  }

  // The seed paper's E2E: every sample uploads the batch's K and V slabs and q, runs the decode
  // and downloads o and lse. Host sides are page-locked and filled before timing (the K/V images
  // are the device slabs' own bytes, so the uploads rewrite what the pool holds).
  template <class T>
  TimingResult time_end_to_end(const std::string& name, const ContiguousKV<T>& kv, int batch,
                               const std::function<cudaError_t(cudaStream_t)>& launch, const DeviceBuffer<float>& q,
                               const DeviceBuffer<float>& o, const DeviceBuffer<float>& lse, const TimingOptions& topt,
                               cudaStream_t stream) {
    const std::size_t kv_elems = static_cast<std::size_t>(batch) * kv.slot_stride;
    T* const device_k = const_cast<T*>(kv.k);
    T* const device_v = const_cast<T*>(kv.v);
    PinnedBuffer<T> host_k(kv_elems), host_v(kv_elems);
    PinnedBuffer<float> host_q(q.size()), host_o(o.size()), host_lse(lse.size());
    DB_CUDA_CHECK(cudaMemcpy(host_k.get(), device_k, host_k.bytes(), cudaMemcpyDeviceToHost));
    DB_CUDA_CHECK(cudaMemcpy(host_v.get(), device_v, host_v.bytes(), cudaMemcpyDeviceToHost));
    DB_CUDA_CHECK(cudaMemcpy(host_q.get(), q.get(), q.bytes(), cudaMemcpyDeviceToHost));
    const auto sample = [&](cudaStream_t s) -> cudaError_t {
      DB_RETURN_IF_ERROR(cudaMemcpyAsync(device_k, host_k.get(), host_k.bytes(), cudaMemcpyHostToDevice, s));
      DB_RETURN_IF_ERROR(cudaMemcpyAsync(device_v, host_v.get(), host_v.bytes(), cudaMemcpyHostToDevice, s));
      DB_RETURN_IF_ERROR(cudaMemcpyAsync(q.get(), host_q.get(), q.bytes(), cudaMemcpyHostToDevice, s));
      DB_RETURN_IF_ERROR(launch(s));
      DB_RETURN_IF_ERROR(cudaMemcpyAsync(host_o.get(), o.get(), o.bytes(), cudaMemcpyDeviceToHost, s));
      return cudaMemcpyAsync(host_lse.get(), lse.get(), lse.bytes(), cudaMemcpyDeviceToHost, s);
    };
    return time_launches(name, sample, topt, *flusher_, stream);
  }

  json profile(RunContext& ctx, const std::function<cudaError_t(cudaStream_t)>& launch, const json& model) {
    if (!profiler_) profiler_.emplace(RangeProfiler::create(ctx.device, metric_names_with_extras("")));
    if (const auto* reason = std::get_if<std::string>(&*profiler_)) return counters_unavailable(*reason);
    try {
      const json raw = std::get<RangeProfiler>(*profiler_).profile(launch, ctx.stream,
                                                                    [this](cudaStream_t s) { flusher_->flush(s); });
      json counters = derive_counters(raw_map(raw), model);
      counters["passes"] = raw.value("passes", 0);
      return counters;
    } catch (const std::exception& e) {
      return counters_unavailable(e.what());
    }
  }

  std::string kernel_;
  std::unique_ptr<L2Flusher> flusher_;
  std::optional<std::variant<RangeProfiler, std::string>> profiler_;
};

class CpuReferenceRunner final : public PointRunner {
 public:
  std::string name() const override { return "cpu_reference"; }
  std::optional<std::string> cannot_run(const Point& point) const override {
    if (point.parameters.value("layout", std::string("contiguous")) != "contiguous")
      return std::string("the CPU reference reads host memory; paged layouts are checked in the unit tests");
    return decode_lengths_unsupported(point.parameters);
  }
  std::uint64_t device_bytes_needed(const Point&) const override { return 0; }

  json run(const Point& point, RunContext& ctx) override {
    const DecodePoint d = parse_decode_point(point.parameters);
    switch (d.dtype) {
      case DType::fp32: return run_typed<float>(d, ctx);
      case DType::fp16: return run_typed<__half>(d, ctx);
      case DType::bf16: return run_typed<__nv_bfloat16>(d, ctx);
    }
    return {};
  }

 private:
  // Host wall time of the float64 reference (median of 3). It is the standard every other
  // kernel is checked against, so its own "verification" is by definition exact.
  template <class T>
  json run_typed(const DecodePoint& d, RunContext& ctx) {
    const std::size_t row = static_cast<std::size_t>(d.shape.heads_kv) * d.shape.head_dim;
    std::vector<T> k(row * d.max_len()), v(row * d.max_len());
    fill_random(k, d.seed + 1);
    fill_random(v, d.seed + 2);
    std::vector<float> q(static_cast<std::size_t>(d.shape.heads_q) * d.shape.head_dim);
    fill_random(q, d.seed + 3);
    const auto kv = ContiguousKV<T>::make(k.data(), v.data(), d.shape.heads_kv, std::max<std::int64_t>(d.max_len(), 1),
                                          d.shape.head_dim);
    std::vector<double> samples;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t b = 0; b < d.lengths.size(); ++b) (void)reference_decode(kv, 0, d.lengths[b], q, d.shape);
      samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(samples.begin(), samples.end());
    ctx.measured_seconds += (samples[0] + samples[1] + samples[2]) * 1e-6;
    const TrafficModel model = decode_traffic_model(DecodeKernel::flash_decode, d.shape, d.dtype, d.lengths, {}, 1);
    return {{"status", std::string(kStatusOk)},
            {"verification", {{"passed", true}, {"max_abs_error", 0.0}, {"max_rel_error", 0.0}, {"tolerance", 0.0},
                              {"rule", "the float64 reference itself"}}},
            {"timing", {{"median_us", samples[1]}, {"min_us", samples[0]}, {"max_us", samples[2]}, {"repetitions", 3},
                        {"method", "host_steady_clock"}, {"mode", "host"}}},
            {"model", model.to_json("decode_min_bytes")},
            {"achieved", {{"gbps", model.minimum_bytes() / (samples[1] * 1e3)}}}};
  }
};

}  // namespace

std::unique_ptr<PointRunner> make_gpu_decode_runner(std::string kernel) {
  return std::make_unique<GpuDecodeRunner>(std::move(kernel));
}
std::unique_ptr<PointRunner> make_cpu_reference_runner() { return std::make_unique<CpuReferenceRunner>(); }

}  // namespace decode_bench::sweeps
