// The `cpu_reference` kernel: the float64 reference itself, timed on the host.
#include "sweeps/cpu_reference_runner.hpp"

#include <algorithm>
#include <chrono>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/kernel_kind.hpp"
#include "harness/results_schema.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/fp8_quantize.hpp"
#include "kernels/traffic_model.hpp"
#include "kernels/variant_traffic_model.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/decode_point.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

class CpuReferenceRunner final : public PointRunner {
 public:
  std::string name() const override { return std::string(kernel_name(KernelKind::cpu_reference)); }
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
      case DType::fp8_e4m3: return run_typed<__nv_fp8_e4m3>(d, ctx);
      case DType::fp8_e5m2: return run_typed<__nv_fp8_e5m2>(d, ctx);
    }
    return {};
  }

 private:
  // Host wall time of the float64 reference (median of 3). It is the standard every other
  // kernel is checked against, so its own "verification" is by definition exact. Every sequence
  // of the batch reads sequence 0's data (the reference's cost depends on lengths only).
  template <class T>
  json run_typed(const DecodePoint& d, RunContext& ctx) {
    const std::size_t row = static_cast<std::size_t>(d.shape.heads_kv) * d.shape.head_dim;
    PhaseTimer fill_phase(ctx.phases, kPhaseDataFill);  // allocation (zeroed) and generation
    std::vector<T> k(row * d.max_len()), v(row * d.max_len());
    // q_len query tokens per sequence (generated as the rows of q_len sequences), and the sinks.
    const AttentionVariant& variant = d.variant;
    std::vector<float> q(static_cast<std::size_t>(variant.q_len) * d.shape.heads_q * d.shape.head_dim);
    const std::vector<float> sinks = sink_logits(d.shape.heads_q, d.seed);
    fill_kv_host<T>(k, false, d.seed, 0, d.shape.heads_kv, d.max_len(), d.shape.head_dim);
    fill_kv_host<T>(v, true, d.seed, 0, d.shape.heads_kv, d.max_len(), d.shape.head_dim);
    fill_q_host(q, d.seed, variant.q_len, d.shape.heads_q, d.shape.head_dim);
    fill_phase.stop();
    auto kv = ContiguousKV<T>::make(k.data(), v.data(), d.shape.heads_kv, std::max<std::int64_t>(d.max_len(), 1),
                                    d.shape.head_dim);
    Fp8Scales scales;  // FP8: the decode points' per-head scales, so the reference does the same work
    if constexpr (dtype_is_fp8(dtype_of<T>::value)) {
      scales = fp8_random_head_scales(d.dtype, d.shape.heads_kv, d.seed);
      kv.k_scale = scales.k.data();
      kv.v_scale = scales.v.data();
    }
    std::vector<double> samples;
    {
      PhaseTimer phase(ctx.phases, kPhaseTiming);
      for (int r = 0; r < 3; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t b = 0; b < d.lengths.size(); ++b) {
          if (variant.plain())
            (void)reference_decode(kv, 0, d.lengths[b], q, d.shape);
          else
            (void)reference_decode_variant(kv, 0, d.lengths[b], q, d.shape, variant, sinks);
        }
        samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
    }
    std::sort(samples.begin(), samples.end());
    ctx.measured_seconds += (samples[0] + samples[1] + samples[2]) * 1e-6;
    const TrafficModel model = variant.plain()
                                   ? decode_traffic_model(DecodeKernel::flash_decode, d.shape, d.dtype, d.lengths, {}, 1)
                                   : variant_traffic_model(d.shape, d.dtype, d.lengths, 0, variant);
    return {{"status", std::string(kStatusOk)},
            {"verification", {{"passed", true}, {"max_abs_error", 0.0}, {"max_rel_error", 0.0}, {"tolerance", 0.0},
                              {"rule", "the float64 reference itself"}, {"method", "cpu"}}},
            {"timing", {{"median_us", samples[1]}, {"min_us", samples[0]}, {"max_us", samples[2]}, {"repetitions", 3},
                        {"method", "host_steady_clock"}, {"mode", "host"}}},
            {"model", model.to_json(variant.plain() ? "decode_min_bytes" : "decode_variant_min_bytes")},
            {"achieved", {{"gbps", model.minimum_bytes() / (samples[1] * 1e3)}}}};
  }
};

}  // namespace

std::unique_ptr<PointRunner> make_cpu_reference_runner() { return std::make_unique<CpuReferenceRunner>(); }

}  // namespace decode_bench::sweeps
