#include "sweeps/counter_pass.hpp"

#include <exception>

#include "harness/counters/derived_metrics.hpp"
#include "harness/counters/metric_table.hpp"

namespace decode_bench::sweeps {

nlohmann::json CounterPass::profile(RunContext& ctx, const std::function<cudaError_t(cudaStream_t)>& launch,
                                    const nlohmann::json& model, L2Flusher& flusher, bool write_flush) {
  using namespace counters;
  if (!profiler_) profiler_.emplace(RangeProfiler::create(ctx.device, metric_names_with_extras("")));
  if (const auto* reason = std::get_if<std::string>(&*profiler_)) return counters_unavailable(*reason);
  try {
    const nlohmann::json raw = std::get<RangeProfiler>(*profiler_).profile(
        launch, ctx.stream, [&flusher, write_flush](cudaStream_t s) { flusher.flush(s, write_flush); });
    nlohmann::json derived = derive_counters(raw_map(raw), model);
    derived["passes"] = raw.value("passes", 0);
    return derived;
  } catch (const std::exception& e) {
    return counters_unavailable(e.what());
  }
}

}  // namespace decode_bench::sweeps
