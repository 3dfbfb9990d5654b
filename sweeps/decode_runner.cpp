#include "sweeps/decode_runner.hpp"

#include <type_traits>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/l2_flush.hpp"
#include "harness/nvtx.hpp"
#include "harness/read_floor.hpp"
#include "harness/results_schema.hpp"
#include "harness/timing.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/plan_json.hpp"
#include "kernels/traffic_model.hpp"
#include "pools/contiguous_pool.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/block_timeline_capture.hpp"
#include "sweeps/counter_pass.hpp"
#include "sweeps/decode_end_to_end.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/decode_state.hpp"
#include "sweeps/decode_verify.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// A point: build the KV state (pool_build, data_fill), one checked launch on poisoned outputs
// (verification, reference), then timing and, unless counters=false, the profiled pass.
class GpuDecodeRunner final : public PointRunner {
 public:
  explicit GpuDecodeRunner(KernelKind kernel) : kernel_(kernel) {}
  std::string name() const override { return std::string(kernel_name(kernel_)); }
  std::optional<std::string> cannot_run(const Point& point) const override {
    return decode_point_unsupported(point.parameters);
  }

  json run(const Point& point, RunContext& ctx) override {
    const DecodePoint d = parse_decode_point(point.parameters);
    switch (d.dtype) {
      case DType::fp32: return run_typed<float>(point, d, ctx);
      case DType::fp16: return run_typed<__half>(point, d, ctx);
      case DType::bf16: return run_typed<__nv_bfloat16>(point, d, ctx);
      case DType::fp8_e4m3: return run_typed<__nv_fp8_e4m3>(point, d, ctx);
      case DType::fp8_e5m2: return run_typed<__nv_fp8_e5m2>(point, d, ctx);
    }
    return {};
  }

 private:
  template <class T>
  json run_typed(const Point& point, const DecodePoint& d, RunContext& ctx) {
    if (!flusher_) flusher_ = std::make_unique<L2Flusher>(ctx.device);
    const DecodeKernel kernel = kernel_ == KernelKind::baseline ? DecodeKernel::baseline : DecodeKernel::flash_decode;
    const bool verify_on_host_ = ctx.verify_on_host || !device_reference_supports(d);
    DecodeState<T> st = [&] {
      NvtxRange range("build " + point.id);
      return build_decode_state<T>(d, {.fill_on_host = ctx.fill_on_host, .host_copy = verify_on_host_}, ctx.stream,
                                   ctx.phases);
    }();
    const int batch = static_cast<int>(d.lengths.size());
    const std::size_t out_elems = static_cast<std::size_t>(batch) * d.shape.heads_q * d.shape.head_dim;
    DeviceBuffer<float> o(out_elems), lse(static_cast<std::size_t>(batch) * d.shape.heads_q);

    json result;
    const auto run_with = [&](const auto& view) {
      using KV = std::decay_t<decltype(view.kv)>;
      const KV kv = st.scales.attach(view.kv, true);
      // The pool's uploads and batch()'s block-table gather run on the pool's own stream (a
      // non-blocking one: ctx.stream is the legacy default); the decode runs on ctx.stream. Without
      // this wait a long page-1 table could still be in flight when the kernel reads it (it was:
      // shuffled page-1 points at T = 2^18 failed verification on the H100).
      st.pool->backend().synchronize();
      const DecodeProblem problem{d.shape,    d.dtype, batch,   view.max_len,     view.seq_lens_device,
                                  st.q.get(), o.get(), lse.get(), d.lengths.data()};
      DecodePlan plan;
      DB_CUDA_CHECK(plan_decode<KV>(kernel, problem, {.splits = d.blocks}, &plan));
      DeviceBuffer<std::uint8_t> workspace(plan.workspace_bytes);
      const auto launch = [&](cudaStream_t s) { return run_decode<KV>(kv, problem, plan, workspace.get(), s); };

      // 1. Verify: poisoned outputs, one launch, every sequence against the float64 reference.
      VerificationResult verification;
      {
        NvtxRange range("verify " + point.id);
        {
          PhaseTimer phase(ctx.phases, kPhaseVerification);
          o.poison();
          lse.poison();
          workspace.poison();
          DB_CUDA_CHECK(init_decode_workspace(plan, workspace.get(), ctx.stream));
          DB_CUDA_CHECK(launch(ctx.stream));
          DB_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        }
        verification = verify_on_host_ ? verify_on_host(d, st, o, lse, ctx.phases)
                                        : verify_on_device(d, kv, view.seq_lens_device, view.max_len, st.q.get(),
                                                           o.get(), lse.get(), ctx.stream, ctx.phases);
      }
      std::vector<std::int32_t> pages_per_seq;
      if (d.paged)
        for (auto len : d.lengths) pages_per_seq.push_back((len + d.page_size - 1) / d.page_size);
      const TrafficModel model = decode_traffic_model(kernel, d.shape, d.dtype, d.lengths, pages_per_seq, plan.num_splits);
      result["verification"] = verification.to_json();
      result["verification"]["method"] = verify_on_host_ ? kVerifyOnHost : kVerifyOnDevice;
      result["model"] = model.to_json(kernel == DecodeKernel::baseline ? "decode_min_bytes+baseline_scores"
                                                                       : "decode_min_bytes+splitk_partials");
      result["plan"] = to_json(plan);
      if (!verification.passed) {
        result["status"] = std::string(kStatusVerificationFailed);
        result["reason"] = verification.summary();
        return;
      }

      // 2. Time: kernel only, or (end_to_end) with K, V and q uploaded and o, lse downloaded around it.
      TimingOptions topt;
      topt.mode = parse_timing_mode(d.timing);
      TimingResult timing;
      {
        PhaseTimer phase(ctx.phases, kPhaseTiming);
        if constexpr (std::is_same_v<KV, ContiguousKV<T>>) {
          if (d.end_to_end)
            timing = time_end_to_end(point.id, kv, batch, launch, st.q, o, lse, topt, *flusher_, ctx.stream);
        }
        if (!d.end_to_end) timing = time_launches(point.id, launch, topt, *flusher_, ctx.stream);
      }
      if (!timing.ok()) {
        if (timing.sticky_error) throw CudaError(static_cast<cudaError_t>(timing.cuda_error), point.id + ": " + timing.error);
        result["status"] = std::string(kStatusError);
        result["reason"] = timing.filtered_out ? "excluded by --benchmark_filter" : timing.error;
        return;
      }
      if (!block_timeline_file().empty()) {  // a diagnostic launch after timing (sweeps/block_timeline_capture.hpp)
        std::string why;
        if (capture_block_timeline(point.id, launch, *flusher_, ctx.stream, &why) != cudaSuccess)
          result["block_timeline_error"] = why;
      }
      result["status"] = std::string(kStatusOk);
      result["timing"] = timing.to_json();
      ctx.measured_seconds += timing.stats.median * 1e-6 * timing.samples_us.size() *
                              std::max<long long>(1, timing.iterations_per_repetition);
      result["achieved"] = achieved_rates(model.minimum_bytes(), model.flops, timing.stats.median, ctx.ceilings, topt.mode);

      // 3. Count: a separate profiled pass (never the timed one), L2 flushed before each replay.
      if (!d.end_to_end && d.counters) {
        PhaseTimer phase(ctx.phases, kPhaseCounters);
        result["counters"] = counters_.profile(ctx, launch, result["model"], *flusher_);
      }
    };
    if (d.paged)
      run_with(static_cast<PagedPool&>(*st.pool).batch<T>(st.handles));
    else
      run_with(static_cast<ContiguousPool&>(*st.pool).batch<T>(st.handles));
    return result;
  }

  KernelKind kernel_;
  std::unique_ptr<L2Flusher> flusher_;
  CounterPass counters_;
};

}  // namespace

std::unique_ptr<PointRunner> make_gpu_decode_runner(KernelKind kernel) {
  return std::make_unique<GpuDecodeRunner>(kernel);
}

}  // namespace decode_bench::sweeps
