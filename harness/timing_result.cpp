#include "harness/timing_result.hpp"

#include <stdexcept>

namespace decode_bench {

nlohmann::json TimingResult::to_json() const {
  if (!ok())
    throw std::logic_error("timing of '" + name + "' has no result to write (" +
                           (error.empty() ? std::string("no samples") : error) + ")");
  nlohmann::json j = {{"median_us", stats.median},
                      {"repetitions", static_cast<int>(samples_us.size())},
                      {"mean_us", stats.mean},
                      {"min_us", stats.min},
                      {"max_us", stats.max},
                      {"stddev_us", stats.stddev},
                      {"cv", stats.cv},
                      {"noisy", stats.noisy},
                      {"method", std::string(to_string(plan.method))},
                      {"mode", std::string(to_string(mode))},
                      {"launches_per_sample", plan.launches_per_sample},
                      {"iterations_per_repetition", iterations_per_repetition},
                      {"warmup_launch_us", warmup_launch_us},
                      {"samples_us", samples_us},
                      {"stopped_by", std::string(to_string(stopped_by))},
                      {"options", decode_bench::to_json(options)}};
  if (options.max_repetitions > 0) j["cv_target_met"] = stats.cv <= options.noise_cv;
  return j;
}

nlohmann::json to_json(const TimingOptions& o) {
  return {{"repetitions", o.repetitions},
          {"max_repetitions", o.max_repetitions},
          {"warmup", o.warmup},
          {"min_rep_time_ms", o.min_rep_time_ms},
          {"noise_cv", o.noise_cv},
          {"point_time_limit_s", o.point_time_limit_s},
          {"graph_threshold_us", o.graph_threshold_us},
          {"graph_target_us", o.graph_target_us},
          {"max_graph_launches", o.max_graph_launches}};
}

}  // namespace decode_bench
