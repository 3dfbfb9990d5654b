#pragma once
// Helpers for the sweep tests: build a plan from inline JSON, list ids, catch config errors.
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sweeps/driver.hpp"
#include "sweeps/plan.hpp"

namespace decode_bench::sweeps::testing {

inline Plan plan_of(const nlohmann::json& preset, std::vector<std::string> overrides = {},
                    ValidationContext ctx = {}, Shard shard = {}) {
  PlanRequest r;
  r.preset_document = preset;
  r.overrides = std::move(overrides);
  r.context = std::move(ctx);
  r.shard = shard;
  return make_plan(r);
}

inline std::vector<std::string> ids_of(const std::vector<Point>& points) {
  std::vector<std::string> ids;
  for (const auto& p : points) ids.push_back(p.id);
  return ids;
}

// Every error make_plan reports, as "path: message" lines; empty when the plan is valid.
inline std::vector<ConfigError> plan_errors(const nlohmann::json& preset, std::vector<std::string> overrides = {},
                                            ValidationContext ctx = {}) {
  try {
    plan_of(preset, std::move(overrides), std::move(ctx));
  } catch (const ConfigErrors& e) {
    return e.errors();
  }
  return {};
}

inline nlohmann::json one_experiment(nlohmann::json axes, nlohmann::json common = nlohmann::json::object()) {
  return {{"schema_version", 1},
          {"name", "t"},
          {"common", common},
          {"experiments", {{{"name", "e"}, {"axes", axes}}}}};
}

// The ids of a results document's points, in order.
inline std::vector<std::string> point_ids(const nlohmann::json& doc) {
  std::vector<std::string> ids;
  for (const auto& p : doc["points"]) ids.push_back(p["id"]);
  return ids;
}

// Options of a test sweep writing `output`, its command line `argv`, stopped by `interrupted`.
inline SweepOptions sweep_options(const std::filesystem::path& output, std::vector<std::string> argv,
                                  const std::atomic<bool>* interrupted) {
  SweepOptions o;
  o.output = output;
  o.argv = std::move(argv);
  o.preset_label = "t";
  o.interrupted = interrupted;
  return o;
}

}  // namespace decode_bench::sweeps::testing
