#pragma once
// What the tests of the FlashInfer backends (tests/test_flashinfer_backend.cpp,
// tests/test_flashinfer_tc_backend.cpp and their GPU twins) describe and run points with.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "flashinfer_build.hpp"
#include "harness/backend.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "sweeps/point_problem.hpp"

namespace decode_bench::testing {

inline bool flashinfer_built() { return !std::string_view(flashinfer_build::kVersion).empty(); }

// A contiguous FP16 point of 32 q / 8 KV heads at d 128 and T 64, with `change` applied, as the
// pipeline describes it to supports() (no memory).
inline AttentionProblem described(nlohmann::json change, KernelKind kernel = KernelKind::flash_decode) {
  nlohmann::json p = {{"kernel", std::string(kernel_name(kernel))}, {"layout", "contiguous"}, {"dtype", "fp16"},
                      {"T", 64}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}};
  if (!change.is_null()) p.update(change);  // {} arrives as null
  return sweeps::describe_point(kernel, p);
}

// supports()'s reason, or "(supported)".
inline std::string reason(const Backend& b, const AttentionProblem& p) { return b.supports(p).value_or("(supported)"); }

// One point of `kernel` through `backend` and the whole pipeline (FP16, d 128, hot L2, no counter
// pass unless `params` says otherwise).
inline nlohmann::json run_backend_point(KernelKind kernel, const std::string& backend, nlohmann::json params) {
  nlohmann::json common = {{"kernel", std::string(kernel_name(kernel))},
                           {"backend", backend},
                           {"dtype", "fp16"},
                           {"head_dim", 128},
                           {"timing", "hot"},
                           {"counters", false}};
  common.update(params);
  const sweeps::Plan plan =
      sweeps::testing::plan_of(sweeps::testing::one_experiment(nlohmann::json::object(), common));
  EXPECT_EQ(plan.points.size(), 1u);
  sweeps::RunContext ctx;
  return sweeps::make_kernel_runner(kernel)->run(plan.points.at(0), ctx);
}

}  // namespace decode_bench::testing
