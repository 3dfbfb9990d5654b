#include "harness/timing_result.hpp"

#include <stdexcept>

namespace decode_bench {

nlohmann::json TimingResult::to_json() const {
  if (!ok())
    throw std::logic_error("timing of '" + name + "' has no result to write (" +
                           (filtered_out ? std::string("filtered out") : error.empty() ? "no samples" : error) + ")");
  return {{"median_us", stats.median},
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
          {"samples_us", samples_us}};
}

}  // namespace decode_bench
