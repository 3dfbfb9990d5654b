// The `layers` stage of the measurement pipeline (sweeps/layer_step.hpp) on the host: fake steps
// and a fake backend log every call, so the order is checked without a GPU: one plan, the single
// launch verified and timed first, then L - 1 more layers built, L launches bound and captured,
// one replay verified layer by layer against each layer's own data, then the replay timed. The
// recorded fields are consistent (per_layer_us * L == step_us). Refusals come before anything is
// built; the axis, the memory estimate and the validation account for L.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/results_schema.hpp"
#include "harness/statistics.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/layer_step.hpp"
#include "sweeps/memory_estimate.hpp"
#include "sweeps/point_pipeline.hpp"
#include "sweeps/point_problem.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using Log = std::vector<std::string>;

std::size_t position(const Log& log, const std::string& event) {
  const auto it = std::find(log.begin(), log.end(), event);
  EXPECT_NE(it, log.end()) << "no '" << event << "' in the log";
  return static_cast<std::size_t>(it - log.begin());
}
std::size_t occurrences(const Log& log, const std::string& event) {
  return static_cast<std::size_t>(std::count(log.begin(), log.end(), event));
}

class FakeWorkspace final : public Workspace {
 public:
  void* allocate(std::size_t bytes) override {
    buffers_.emplace_back(bytes, std::uint8_t{0xFF});
    return buffers_.back().data();
  }
  cudaStream_t stream() const override { return nullptr; }

 private:
  std::vector<std::vector<std::uint8_t>> buffers_;
};

// One layer's host "device" data: q differs per layer; the fake attention is o = 2 q, lse = layer.
struct FakeLayer {
  std::vector<float> q, o, lse;
};

void fill_layer(FakeLayer& l, const AttentionProblem& p, int layer) {
  const std::size_t n = static_cast<std::size_t>(p.batch) * p.shape.heads_q * p.shape.head_dim;
  l.q.resize(n);
  for (std::size_t i = 0; i < n; ++i) l.q[i] = 0.5f + static_cast<float>((i + 3 * layer) % 11);
  l.o.assign(n, 0.0f);
  l.lse.assign(static_cast<std::size_t>(p.batch) * p.shape.heads_q, 0.0f);
}

void point_at(AttentionProblem& p, FakeLayer& l) {
  p.q = l.q.data();
  p.o = l.o.data();
  p.lse = l.lse.data();
}

class FakeLayerSteps final : public PointSteps {
 public:
  explicit FakeLayerSteps(Log& log) : log_(log) {}
  void build(AttentionProblem& p) override {
    log_.push_back("build");
    layers_.resize(1);
    fill_layer(layers_[0], p, 0);
    point_at(p, layers_[0]);
  }
  void poison_outputs() override {
    log_.push_back("poison_outputs");
    poison(layers_[0]);
  }
  Workspace& workspace() override { return workspace_; }
  void checked_launch(const LaunchFn& launch, LseBase) override {
    log_.push_back("checked_launch");
    ASSERT_EQ(launch(nullptr), cudaSuccess);
  }
  CheckedVerification verify() override {
    log_.push_back("verify");
    return check(0);
  }
  TimingResult time(const LaunchFn& launch, const TimingOptions& options, bool) override {
    const bool step = captured_;
    log_.push_back(step ? "time step" : "time");
    if (step) {
      EXPECT_EQ(options.graph_threshold_us, 0) << "the step's graph is not nested in another";
    }
    TimingResult t;
    t.name = "fake";
    t.mode = options.mode;
    t.iterations_per_repetition = 1;
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(launch(nullptr), cudaSuccess);
      t.samples_us.push_back((step ? 100.0 : 10.0) + r);
    }
    t.stats = summarize(t.samples_us);
    return t;
  }
  std::optional<std::string> capture_block_timeline(const LaunchFn&) override { return std::nullopt; }
  json counters(const LaunchFn&, const json&, TimingMode) override {
    log_.push_back("counters");
    return {{"available", false}};
  }

  std::optional<std::string> layers_unsupported() const override { return refuse_layers; }
  std::vector<AttentionProblem> build_layers(const AttentionProblem& problem, int layers) override {
    log_.push_back("build_layers " + std::to_string(layers));
    std::vector<AttentionProblem> out;
    layers_.resize(static_cast<std::size_t>(layers));
    for (int l = 1; l < layers; ++l) {
      fill_layer(layers_[static_cast<std::size_t>(l)], problem, l);
      AttentionProblem p = problem;
      point_at(p, layers_[static_cast<std::size_t>(l)]);
      out.push_back(p);
    }
    return out;
  }
  LaunchFn capture_step(const std::vector<LaunchFn>& launches) override {
    log_.push_back("capture " + std::to_string(launches.size()));
    captured_ = true;
    return [launches](cudaStream_t s) {
      for (const auto& l : launches)
        if (cudaError_t e = l(s); e != cudaSuccess) return e;
      return cudaSuccess;
    };
  }
  void checked_step(const LaunchFn& step, LseBase) override {
    log_.push_back("checked_step");
    for (auto& l : layers_) poison(l);
    ASSERT_EQ(step(nullptr), cudaSuccess);
  }
  CheckedVerification verify_layer(int layer) override {
    log_.push_back("verify_layer " + std::to_string(layer));
    return check(layer);
  }

  std::optional<std::string> refuse_layers;

 private:
  static void poison(FakeLayer& l) {
    std::fill(l.o.begin(), l.o.end(), std::numeric_limits<float>::quiet_NaN());
    std::fill(l.lse.begin(), l.lse.end(), std::numeric_limits<float>::quiet_NaN());
  }
  // o = 2 q of this layer's own q, lse = the layer index.
  CheckedVerification check(int layer) const {
    const FakeLayer& l = layers_.at(static_cast<std::size_t>(layer));
    CheckedVerification v;
    v.result.tolerance = 1e-6;
    for (std::size_t i = 0; i < l.o.size(); ++i) {
      const double err = std::fabs(static_cast<double>(l.o[i]) - 2.0 * l.q[i]);
      if (!std::isfinite(l.o[i])) ++v.result.non_finite;
      v.result.max_abs_error = std::isfinite(err) ? std::max(v.result.max_abs_error, err) : err;
    }
    for (float x : l.lse)
      if (x != static_cast<float>(layer)) ++v.result.non_finite;
    v.result.max_rel_error = v.result.max_abs_error;
    v.result.passed = v.result.non_finite == 0 && v.result.max_abs_error <= v.result.tolerance;
    v.details["method"] = "fake";
    return v;
  }

  Log& log_;
  FakeWorkspace workspace_;
  std::vector<FakeLayer> layers_;
  bool captured_ = false;
};

// Computes o = 2 q and lse = (which layer it was bound to) over whatever pointers it is given.
class FakeLayerBackend final : public Backend {
 public:
  explicit FakeLayerBackend(Log& log) : log_(log) {}
  std::string name() const override { return "fake"; }
  std::string version() const override { return "1"; }
  std::optional<std::string> supports(const AttentionProblem&) const override { return std::nullopt; }
  void plan(const AttentionProblem& p, Workspace& workspace) override {
    log_.push_back("plan");
    workspace.allocate(16);
    problem_ = p;
  }
  cudaError_t run(cudaStream_t) override { return compute(problem_, 0); }
  json plan_json() const override { return {{"family", "fake"}}; }
  std::optional<std::string> layers_unsupported(const AttentionProblem& p) const override {
    if (refuse_layers) return Backend::layers_unsupported(p);
    return std::nullopt;
  }
  std::function<cudaError_t(cudaStream_t)> layer_launch(const AttentionProblem& layer) override {
    const int index = ++bound_;
    log_.push_back("layer_launch " + std::to_string(index));
    return [this, layer, index](cudaStream_t) { return compute(layer, index); };
  }

  bool refuse_layers = false;
  int wrong_layer = -1;  // this layer's o comes out wrong

 private:
  cudaError_t compute(const AttentionProblem& p, int layer) const {
    const std::size_t n = static_cast<std::size_t>(p.batch) * p.shape.heads_q * p.shape.head_dim;
    const auto* q = static_cast<const float*>(p.q);
    auto* o = static_cast<float*>(p.o);
    for (std::size_t i = 0; i < n; ++i) o[i] = (layer == wrong_layer ? 3.0f : 2.0f) * q[i];
    for (int i = 0; i < p.batch * p.shape.heads_q; ++i) p.lse[i] = static_cast<float>(layer);
    return cudaSuccess;
  }
  Log& log_;
  AttentionProblem problem_;
  int bound_ = 0;
};

AttentionProblem fake_problem() {
  AttentionProblem p;
  p.kernel = KernelKind::flash_decode;
  p.shape = {4, 2, 64};
  p.batch = 3;
  p.kv_dtype = DType::fp16;
  p.host_seq_lens.assign(3, 100);
  p.max_len = 100;
  return p;
}

struct LayerRun {
  json point;
  Log log;
};

LayerRun run_layers(int layers, bool end_to_end = false, std::optional<std::string> steps_refuse = std::nullopt,
               int wrong_layer = -1, bool backend_refuses = false) {
  LayerRun out;
  FakeLayerBackend backend(out.log);
  backend.wrong_layer = wrong_layer;
  backend.refuse_layers = backend_refuses;
  FakeLayerSteps steps(out.log);
  steps.refuse_layers = steps_refuse;
  RunContext ctx;
  MeasureRequest request{"e/x"};
  request.layers = layers;
  request.end_to_end = end_to_end;
  out.point = run_point_pipeline(backend, fake_problem(), steps, request, ctx);
  return out;
}

TEST(LayerStep, PlansOnceThenBuildsBindsCapturesVerifiesAndTimesTheStep) {
  const LayerRun r = run_layers(4);
  ASSERT_EQ(r.point["status"], kStatusOk) << r.point.dump();
  EXPECT_EQ(occurrences(r.log, "plan"), 1u) << "one plan for every layer";
  EXPECT_LT(position(r.log, "plan"), position(r.log, "checked_launch"));
  EXPECT_LT(position(r.log, "time"), position(r.log, "build_layers 4")) << "the single launch is timed first";
  EXPECT_LT(position(r.log, "build_layers 4"), position(r.log, "layer_launch 1"));
  EXPECT_LT(position(r.log, "layer_launch 3"), position(r.log, "capture 4"));
  EXPECT_EQ(occurrences(r.log, "layer_launch 4"), 0u) << "layer 0 runs the plan itself";
  EXPECT_LT(position(r.log, "capture 4"), position(r.log, "checked_step"));
  for (int l = 0; l < 4; ++l)
    EXPECT_LT(position(r.log, "checked_step"), position(r.log, "verify_layer " + std::to_string(l)));
  EXPECT_LT(position(r.log, "verify_layer 3"), position(r.log, "time step"));
  EXPECT_LT(position(r.log, "time step"), position(r.log, "counters")) << "counters stay on the single launch";

  const json& layers = r.point["layers"];
  EXPECT_EQ(layers["count"], 4);
  EXPECT_DOUBLE_EQ(layers["step_us"].get<double>(), 101.0);  // the step's median sample
  EXPECT_DOUBLE_EQ(layers["per_layer_us"].get<double>() * 4, layers["step_us"].get<double>());
  EXPECT_DOUBLE_EQ(layers["single_launch_us"].get<double>(), r.point["timing"]["median_us"].get<double>());
  EXPECT_DOUBLE_EQ(layers["single_launch_us"].get<double>(), 11.0);
  EXPECT_DOUBLE_EQ(layers["per_layer_over_single"].get<double>(), 101.0 / 4 / 11.0);
  EXPECT_DOUBLE_EQ(layers["plan_us"].get<double>(), r.point["backend"]["plan_us"].get<double>());
  EXPECT_GE(layers["bind_us"].get<double>(), 0.0);
  EXPECT_NE(layers["method"].get<std::string>().find("not between layers"), std::string::npos);
  EXPECT_TRUE(layers["verification"]["passed"].get<bool>());
  EXPECT_EQ(layers["verification"]["per_layer"].size(), 4u);
  // What every layer shares is written once, beside the layers.
  EXPECT_TRUE(layers["verification"].contains("tolerance")) << layers["verification"].dump();
  for (const json& entry : layers["verification"]["per_layer"]) EXPECT_FALSE(entry.contains("tolerance")) << entry.dump();
  EXPECT_EQ(layers["timing"]["samples_us"].size(), 3u);
}

TEST(LayerStep, OneLayerRecordsNoStep) {
  const LayerRun r = run_layers(1);
  ASSERT_EQ(r.point["status"], kStatusOk);
  EXPECT_FALSE(r.point.contains("layers"));
  EXPECT_EQ(occurrences(r.log, "capture 1"), 0u);
  EXPECT_EQ(occurrences(r.log, "time step"), 0u);
}

TEST(LayerStep, AWrongLayerFailsVerificationNamingItAndIsNeverTimed) {
  const LayerRun r = run_layers(5, false, std::nullopt, /*wrong_layer=*/3);
  EXPECT_EQ(r.point["status"], kStatusVerificationFailed);
  EXPECT_NE(r.point["reason"].get<std::string>().find("layer 3"), std::string::npos) << r.point["reason"];
  EXPECT_FALSE(r.point["layers"]["verification"]["passed"].get<bool>());
  EXPECT_TRUE(r.point["layers"]["verification"]["per_layer"][2]["passed"].get<bool>());
  EXPECT_FALSE(r.point["layers"]["verification"]["per_layer"][3]["passed"].get<bool>());
  EXPECT_EQ(occurrences(r.log, "time step"), 0u);
  EXPECT_EQ(occurrences(r.log, "counters"), 0u);
}

TEST(LayerStep, RefusalsComeBeforeAnythingIsBuilt) {
  const LayerRun e2e = run_layers(2, /*end_to_end=*/true);
  EXPECT_EQ(e2e.point["status"], kStatusSkipped);
  EXPECT_NE(e2e.point["reason"].get<std::string>().find("end_to_end"), std::string::npos);
  EXPECT_EQ(occurrences(e2e.log, "build"), 0u);

  const LayerRun steps = run_layers(2, false, std::string("one layer only here"));
  EXPECT_EQ(steps.point["status"], kStatusSkipped);
  EXPECT_EQ(steps.point["reason"], "layers 2: one layer only here");
  EXPECT_EQ(occurrences(steps.log, "build"), 0u);

  const LayerRun backend = run_layers(2, false, std::nullopt, -1, /*backend_refuses=*/true);
  EXPECT_EQ(backend.point["status"], kStatusSkipped);
  EXPECT_NE(backend.point["reason"].get<std::string>().find("backend fake cannot run its plan over another layer"),
            std::string::npos);
  EXPECT_EQ(occurrences(backend.log, "build"), 0u);
}

TEST(LayerStep, RequestRefusalNamesBothParameters) {
  EXPECT_FALSE(layers_request_unsupported(1, true));
  EXPECT_FALSE(layers_request_unsupported(8, false));
  const auto why = layers_request_unsupported(8, true);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("layers 8"), std::string::npos);
  EXPECT_NE(why->find("end_to_end"), std::string::npos);
  EXPECT_EQ(request_unsupported(KernelKind::flash_decode, {{"layers", 8}, {"end_to_end", true}}), why);
  EXPECT_EQ(measure_request(Point{"e", {{"layers", 32}}, "e/x", 0}).layers, 32);
  EXPECT_EQ(measure_request(Point{"e", json::object(), "e/x", 0}).layers, 1);
}

TEST(LayerStep, TheAxisIsValidatedAndInIdsOnlyOffItsDefault) {
  const AxisDef* axis = find_axis("layers");
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->default_value, 1);
  EXPECT_TRUE(axis_value_error(*axis, 32).empty());
  EXPECT_FALSE(axis_value_error(*axis, 0).empty());
  EXPECT_FALSE(axis_value_error(*axis, 2.5).empty());
  const auto ids = testing::ids_of(
      testing::plan_of(testing::one_experiment({{"kernel", {"flash_decode"}}, {"layers", {1, 32}}})).points);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].find("layers"), std::string::npos);
  EXPECT_NE(ids[1].find("/layers=32"), std::string::npos);
  // No meaning for the capacity model or the CPU reference: dropped there.
  const auto capacity = testing::plan_of(testing::one_experiment({{"kernel", {"capacity"}}, {"layers", {1, 32}}})).points;
  ASSERT_EQ(capacity.size(), 1u);
  EXPECT_FALSE(capacity[0].parameters.contains("layers"));
}

TEST(LayerStep, MemoryEstimateAndValidationCountEveryLayer) {
  for (const char* layout : {"contiguous", "paged"}) {
    json p = {{"kernel", "flash_decode"}, {"layout", layout}, {"batch", 64}, {"heads_q", 32}, {"heads_kv", 32},
              {"head_dim", 128}, {"T", 4096}, {"page_size", 16}};
    const std::uint64_t one = estimate_device_bytes(p);
    p["layers"] = 32;
    EXPECT_EQ(estimate_device_bytes(p), 32 * one) << layout;
  }
  // One layer fits an 80 GB device, 80 of them do not: the error names layers.
  ValidationContext ctx;
  ctx.device_memory_bytes = 80ull << 30;
  const auto errors = testing::plan_errors(
      testing::one_experiment({{"kernel", {"flash_decode"}}, {"batch", {64}}, {"heads_q", {32}}, {"heads_kv", {8}},
                               {"T", {32768}}, {"layers", {80}}}),
      {}, ctx);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].path.find("layers"), std::string::npos) << errors[0].path;
}

}  // namespace
}  // namespace decode_bench::sweeps
