// The timer's own decisions (events or graph, how many launches) and the timing JSON, host-side.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/results_schema.hpp"
#include "harness/timing_options.hpp"
#include "harness/timing_result.hpp"

namespace decode_bench {
namespace {

TimingOptions hot() {
  TimingOptions o;
  o.mode = TimingMode::hot;
  return o;  // threshold 20 us, target 200 us, at most 1000 launches
}

TEST(TimingPlan, ColdModesAlwaysTimeSingleLaunchesWithEvents) {
  for (const TimingMode mode : {TimingMode::cold, TimingMode::cold_write}) {
    TimingOptions cold;
    cold.mode = mode;
    EXPECT_TRUE(flushes_l2(mode));
    for (double us : {0.5, 5.0, 19.9, 20.0, 5000.0, 0.0, std::numeric_limits<double>::quiet_NaN()}) {
      const TimingPlan p = choose_timing_plan(us, cold);
      EXPECT_EQ(p.method, TimingMethod::events) << us;
      EXPECT_EQ(p.launches_per_sample, 1) << us;
    }
  }
  EXPECT_FALSE(flushes_l2(TimingMode::hot));
}

TEST(TimingPlan, HotLongKernelsUseEventsShortOnesAGraph) {
  EXPECT_EQ(choose_timing_plan(20.0, hot()).method, TimingMethod::events);  // at the threshold: events
  EXPECT_EQ(choose_timing_plan(300.0, hot()).launches_per_sample, 1);
  const TimingPlan p = choose_timing_plan(5.0, hot());
  EXPECT_EQ(p.method, TimingMethod::graph);
  EXPECT_EQ(p.launches_per_sample, 40);  // ceil(200 / 5)
  EXPECT_EQ(choose_timing_plan(3.0, hot()).launches_per_sample, 67);  // ceil(66.7)
  EXPECT_EQ(choose_timing_plan(19.9, hot()).launches_per_sample, 11);
}

TEST(TimingPlan, GraphSizeIsClamped) {
  EXPECT_EQ(choose_timing_plan(0.01, hot()).launches_per_sample, 1000);  // 20000 wanted
  TimingOptions o = hot();
  o.graph_threshold_us = 500;
  EXPECT_EQ(choose_timing_plan(150.0, o).launches_per_sample, 2);  // ceil(200/150) = 2
  EXPECT_EQ(choose_timing_plan(450.0, o).launches_per_sample, 2);  // 1 wanted, at least 2
  // A probe that measured nothing usable: the biggest graph, never a division by zero.
  EXPECT_EQ(choose_timing_plan(0.0, hot()).launches_per_sample, 1000);
  EXPECT_EQ(choose_timing_plan(std::numeric_limits<double>::infinity(), hot()).launches_per_sample, 1000);
}

TEST(TimingPlan, ThresholdZeroDisablesTheGraph) {
  TimingOptions o = hot();
  o.graph_threshold_us = 0;
  EXPECT_EQ(choose_timing_plan(0.5, o).method, TimingMethod::events);
  EXPECT_EQ(choose_timing_plan(0.0, o).method, TimingMethod::events);
}

TEST(TimingOptions, ModeNamesRoundTripAndBadOnesAreNamed) {
  EXPECT_EQ(parse_timing_mode("cold"), TimingMode::cold);
  EXPECT_EQ(parse_timing_mode(to_string(TimingMode::hot)), TimingMode::hot);
  EXPECT_EQ(parse_timing_mode(to_string(TimingMode::cold_write)), TimingMode::cold_write);
  try {
    parse_timing_mode("warm");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'warm'"), std::string::npos) << e.what();
  }
}

TEST(TimingOptions, InvalidFieldsAreNamed) {
  EXPECT_NO_THROW(validate(TimingOptions{}));
  const std::pair<void (*)(TimingOptions&), const char*> cases[] = {
      {[](TimingOptions& o) { o.repetitions = 0; }, "repetitions"},
      {[](TimingOptions& o) { o.warmup = 0; }, "warmup"},
      {[](TimingOptions& o) { o.min_rep_time_ms = -1; }, "min_rep_time_ms"},
      {[](TimingOptions& o) { o.noise_cv = std::nan(""); }, "noise_cv"},
      {[](TimingOptions& o) { o.graph_threshold_us = -5; }, "graph_threshold_us"},
      {[](TimingOptions& o) { o.graph_target_us = 0; }, "graph_target_us"},
      {[](TimingOptions& o) { o.max_graph_launches = 1; }, "max_graph_launches"},
      {[](TimingOptions& o) { o.max_repetitions = 4; }, "max_repetitions"},  // below repetitions (5)
      {[](TimingOptions& o) { o.point_time_limit_s = -1; }, "point_time_limit_s"},
      {[](TimingOptions& o) { o.point_time_limit_s = std::numeric_limits<double>::infinity(); }, "point_time_limit_s"},
  };
  for (const auto& [mutate, field] : cases) {
    TimingOptions o;
    mutate(o);
    try {
      validate(o);
      ADD_FAILURE() << field << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

// The timer's loop around next_timing_step: samples are taken from `sequence` in order while the
// rule says more, with the wall time after sample k (1-based) being k * seconds_per_sample.
struct Taken {
  std::size_t samples;
  TimingStop stop;
};
Taken run_rule(const std::vector<double>& sequence, const TimingOptions& o, double seconds_per_sample = 0) {
  std::vector<double> taken;
  TimingStop stop;
  while ((stop = next_timing_step(taken, seconds_per_sample * static_cast<double>(taken.size()), o)) ==
         TimingStop::more) {
    if (taken.size() == sequence.size()) throw std::logic_error("the rule asked for more samples than the sequence has");
    taken.push_back(sequence[taken.size()]);
  }
  return {taken.size(), stop};
}

TEST(TimingStopRule, WithoutATargetExactlyTheRepetitions) {
  TimingOptions o;  // 5 repetitions, no target
  const std::vector<double> noisy = {100, 200, 50, 400, 10, 300, 20};
  const Taken t = run_rule(noisy, o);
  EXPECT_EQ(t.samples, 5u);
  EXPECT_EQ(t.stop, TimingStop::repetitions);
  EXPECT_EQ(next_timing_step(std::vector<double>{}, 1e9, o), TimingStop::more);  // always one sample
}

TEST(TimingStopRule, AddsSamplesUntilTheCvMeetsTheTarget) {
  // 100, 110, 90, then 100s: the mean stays 100 and the squared deviations sum to 200, so after n
  // samples cv = sqrt(200 / (n - 1)) / 100. cv <= 0.03 needs n - 1 >= 200 / 9 = 22.2: n = 24
  // (n = 23: 0.03015; n = 24: 0.02949).
  std::vector<double> sequence = {100, 110, 90};
  sequence.resize(40, 100.0);
  TimingOptions o;
  o.repetitions = 3;
  o.noise_cv = 0.03;
  o.max_repetitions = 40;
  const Taken t = run_rule(sequence, o);
  EXPECT_EQ(t.samples, 24u);
  EXPECT_EQ(t.stop, TimingStop::cv_target);
  // A target met by the first repetitions ends there: 100, 101, 99 has cv 0.01.
  EXPECT_EQ(run_rule({100, 101, 99, 100}, o).samples, 3u);
  EXPECT_EQ(run_rule({100, 101, 99, 100}, o).stop, TimingStop::cv_target);
}

TEST(TimingStopRule, TheCapEndsAnUnmetTarget) {
  std::vector<double> sequence = {100, 110, 90};
  sequence.resize(40, 100.0);
  TimingOptions o;
  o.repetitions = 3;
  o.noise_cv = 0.03;
  o.max_repetitions = 23;  // one short of the 24 the target needs
  const Taken t = run_rule(sequence, o);
  EXPECT_EQ(t.samples, 23u);
  EXPECT_EQ(t.stop, TimingStop::max_repetitions);
  o.max_repetitions = 24;  // met on the last allowed sample: the target wins
  EXPECT_EQ(run_rule(sequence, o).stop, TimingStop::cv_target);
}

TEST(TimingStopRule, TheTimeLimitStopsAddingSamplesEvenBeforeTheRepetitions) {
  const std::vector<double> sequence(100, 1.0);
  TimingOptions o;  // 5 repetitions
  o.point_time_limit_s = 2.5;
  // 1 s per sample: after 3 samples 3 s >= 2.5 s.
  Taken t = run_rule(sequence, o, 1.0);
  EXPECT_EQ(t.samples, 3u);
  EXPECT_EQ(t.stop, TimingStop::time_limit);
  // Under a target that is never met (samples alternate 1, 3: cv about 0.5) it is the limit that ends it.
  std::vector<double> alternating;
  for (int i = 0; i < 100; ++i) alternating.push_back(i % 2 ? 3.0 : 1.0);
  o.max_repetitions = 100;
  o.point_time_limit_s = 8;
  t = run_rule(alternating, o, 1.0);
  EXPECT_EQ(t.samples, 8u);
  EXPECT_EQ(t.stop, TimingStop::time_limit);
  // A fast point is not affected: 5 samples in 0.5 s.
  o.max_repetitions = 0;
  EXPECT_EQ(run_rule(sequence, o, 0.1).stop, TimingStop::repetitions);
}

TEST(TimingStopRule, StopReasonsHaveNames) {
  EXPECT_EQ(to_string(TimingStop::repetitions), "repetitions");
  EXPECT_EQ(to_string(TimingStop::cv_target), "cv_target");
  EXPECT_EQ(to_string(TimingStop::max_repetitions), "max_repetitions");
  EXPECT_EQ(to_string(TimingStop::time_limit), "time_limit");
}

TimingResult example_result() {
  TimingResult r;
  r.name = "flash_decode/T=4096";
  r.mode = TimingMode::hot;
  r.plan = {TimingMethod::graph, 40};
  r.warmup_launch_us = 5.2;
  r.iterations_per_repetition = 17;
  r.samples_us = {5.0, 5.1, 4.9, 5.0, 5.3};
  r.stats = summarize(r.samples_us);
  r.stopped_by = TimingStop::repetitions;
  return r;
}

TEST(TimingResult, JsonHasTheSchemaFieldsAndTheMethod) {
  const nlohmann::json j = example_result().to_json();
  for (const char* key : {"median_us", "repetitions", "mean_us", "min_us", "max_us", "stddev_us", "cv", "noisy",
                          "method", "mode", "launches_per_sample", "iterations_per_repetition", "samples_us"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_DOUBLE_EQ(j["median_us"].get<double>(), 5.0);
  EXPECT_EQ(j["repetitions"], 5);
  EXPECT_EQ(j["method"], "graph");
  EXPECT_EQ(j["mode"], "hot");
  EXPECT_EQ(j["launches_per_sample"], 40);
  EXPECT_DOUBLE_EQ(j["min_us"].get<double>(), 4.9);
  EXPECT_EQ(j["stopped_by"], "repetitions");
  EXPECT_EQ(j["options"]["repetitions"], 5);
  EXPECT_EQ(j["options"]["warmup"], 2);
  EXPECT_EQ(j["options"]["max_repetitions"], 0);
  EXPECT_FALSE(j.contains("cv_target_met"));  // no target was set

  // It is what an ok point's `timing` must be.
  nlohmann::json device = {{"name", "GPU"}, {"compute_capability", "9.0"}, {"sm_count", 1}, {"l2_bytes", 1},
                           {"memory_bytes", 1}, {"sm_clock_khz", 1}, {"memory_clock_khz", 1},
                           {"driver_version", 1}, {"runtime_version", 1}};
  nlohmann::json doc = make_results_document(make_meta({"test"}, "quick"), device);
  doc["points"].push_back({{"id", "p"}, {"parameters", nlohmann::json::object()}, {"status", "ok"},
                           {"verification", {{"passed", true}, {"max_abs_error", 0}, {"max_rel_error", 0},
                                             {"tolerance", 1e-3}}},
                           {"timing", j},
                           {"model", {{"bytes", 1}, {"flops", 1}}}});
  EXPECT_NO_THROW(validate_results(doc));
}

TEST(TimingResult, AFailedTimingHasNoNumbers) {
  TimingResult r = example_result();
  r.error = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  r.sticky_error = true;
  EXPECT_FALSE(r.ok());
  try {
    r.to_json();
    FAIL();
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("cudaErrorIllegalAddress"), std::string::npos) << e.what();
  }
  TimingResult empty;
  EXPECT_FALSE(empty.ok());
  EXPECT_THROW(empty.to_json(), std::logic_error);
}

TEST(TimingResult, UnderACvTargetTheJsonSaysWhetherItWasMet) {
  TimingResult r = example_result();  // cv of 5.0, 5.1, 4.9, 5.0, 5.3: 0.02997
  r.options.max_repetitions = 50;
  r.options.noise_cv = 0.03;
  r.stopped_by = TimingStop::cv_target;
  nlohmann::json j = r.to_json();
  EXPECT_EQ(j["cv_target_met"], true);
  EXPECT_EQ(j["stopped_by"], "cv_target");
  EXPECT_EQ(j["options"]["max_repetitions"], 50);
  r.options.noise_cv = 0.02;
  r.options.point_time_limit_s = 3;
  r.stopped_by = TimingStop::time_limit;
  j = r.to_json();
  EXPECT_EQ(j["cv_target_met"], false);
  EXPECT_EQ(j["stopped_by"], "time_limit");
  EXPECT_EQ(j["options"]["point_time_limit_s"], 3.0);
  EXPECT_EQ(j["options"]["noise_cv"], 0.02);
}

}  // namespace
}  // namespace decode_bench
