// The measurement pipeline (sweeps/point_pipeline.hpp) on the host: a fake backend and fake
// device steps log every call, so the order of a point's life is checked without a GPU: supports
// before anything is built, outputs poisoned and the workspace poisoned before the backend plans,
// plan before the checked launch, a wrong or silent backend fails verification and is never
// timed, a throwing plan is that point's error while the sweep goes on.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "harness/results_schema.hpp"
#include "harness/statistics.hpp"
#include "plugin_test_support.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/driver.hpp"
#include "sweeps/pipeline_runner.hpp"
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
bool logged(const Log& log, const std::string& event) { return std::find(log.begin(), log.end(), event) != log.end(); }

// Host memory standing in for the device's: buffers handed out full of 0xFF bytes, as
// DeviceWorkspace does.
class FakeWorkspace final : public Workspace {
 public:
  explicit FakeWorkspace(Log& log) : log_(log) {}
  void* allocate(std::size_t bytes) override {
    log_.push_back("workspace.allocate");
    buffers_.emplace_back(bytes, std::uint8_t{0xFF});
    return buffers_.back().data();
  }
  cudaStream_t stream() const override { return nullptr; }

 private:
  Log& log_;
  std::vector<std::vector<std::uint8_t>> buffers_;
};

// The "attention" of the fakes: o = 2 q, lse = 0. verify() checks exactly that.
class FakeSteps final : public PointSteps {
 public:
  explicit FakeSteps(Log& log) : log_(log), workspace_(log) {}
  void build(AttentionProblem& p) override {
    log_.push_back("build");
    const std::size_t n = static_cast<std::size_t>(p.batch) * p.shape.heads_q * p.shape.head_dim;
    q_.resize(n);
    for (std::size_t i = 0; i < n; ++i) q_[i] = 0.5f + static_cast<float>(i % 7);
    o_.assign(n, 0.0f);  // zeros: only poison_outputs makes an unwritten o fail
    lse_.assign(static_cast<std::size_t>(p.batch) * p.shape.heads_q, 0.0f);
    p.q = q_.data();
    p.o = o_.data();
    p.lse = lse_.data();
  }
  void poison_outputs() override {
    log_.push_back("poison_outputs");
    std::fill(o_.begin(), o_.end(), std::numeric_limits<float>::quiet_NaN());
    std::fill(lse_.begin(), lse_.end(), std::numeric_limits<float>::quiet_NaN());
  }
  Workspace& workspace() override { return workspace_; }
  const std::vector<float>& lse_verified() const { return lse_verified_; }
  json pool = nullptr;  // what pool_record() gives
  void checked_launch(const LaunchFn& launch, LseBase lse_base) override {
    log_.push_back("checked_launch");
    if (launch(nullptr) != cudaSuccess) throw std::runtime_error("launch failed");
    lse_to_natural(lse_, lse_base);
  }
  CheckedVerification verify() override {
    log_.push_back("verify");
    lse_verified_ = lse_;
    CheckedVerification v;
    v.result.tolerance = 1e-6;
    v.result.passed = true;
    for (std::size_t i = 0; i < o_.size(); ++i) {
      const double err = std::fabs(static_cast<double>(o_[i]) - 2.0 * q_[i]);
      if (!std::isfinite(o_[i])) ++v.result.non_finite;
      v.result.max_abs_error = std::isfinite(err) ? std::max(v.result.max_abs_error, err) : err;
    }
    for (float l : lse_)
      if (!std::isfinite(l)) ++v.result.non_finite;
    v.result.max_rel_error = v.result.max_abs_error;
    v.result.passed = v.result.non_finite == 0 && v.result.max_abs_error <= v.result.tolerance;
    v.details["method"] = "fake";
    return v;
  }
  TimingResult time(const LaunchFn& launch, const TimingOptions& options, bool end_to_end) override {
    log_.push_back(end_to_end ? "time end_to_end" : "time");
    TimingResult t;
    t.name = "fake";
    t.mode = options.mode;
    t.iterations_per_repetition = 1;
    for (int r = 0; r < 3; ++r) {
      if (launch(nullptr) != cudaSuccess) throw std::runtime_error("launch failed");
      t.samples_us.push_back(10.0 + r);
    }
    t.stats = summarize(t.samples_us);
    return t;
  }
  std::optional<std::string> capture_block_timeline(const LaunchFn&) override { return std::nullopt; }
  json pool_record() const override { return pool; }
  json counters(const LaunchFn& launch, const json&, TimingMode) override {
    log_.push_back("counters");
    if (launch(nullptr) != cudaSuccess) throw std::runtime_error("launch failed");
    return {{"available", false}, {"reason", "fake steps"}};
  }

 private:
  Log& log_;
  FakeWorkspace workspace_;
  std::vector<float> q_, o_, lse_;
  std::vector<float> lse_verified_;  // lse as verify() saw it
};

enum class Behaviour { correct, wrong, silent, throws_in_plan };

class FakeBackend final : public Backend {
 public:
  FakeBackend(Log& log, Behaviour behaviour) : log_(log), behaviour_(behaviour) {}
  std::string name() const override { return "fake"; }
  std::string version() const override { return "1.2.3"; }
  DType io_dtype(const AttentionProblem&) const override { return io; }
  LseBase lse_base() const override { return lse_base_written; }
  std::optional<std::string> supports(const AttentionProblem& p) const override {
    log_.push_back("supports");
    EXPECT_EQ(p.q, nullptr) << "supports() sees the problem before any memory exists";
    if (p.shape.head_dim != 64) return "head_dim " + std::to_string(p.shape.head_dim) + ": the fake backend takes 64 only";
    return std::nullopt;
  }
  void plan(const AttentionProblem& p, Workspace& workspace) override {
    log_.push_back("plan");
    if (behaviour_ == Behaviour::throws_in_plan && p.batch == 2) throw std::runtime_error("no plan for batch 2");
    EXPECT_NE(p.q, nullptr) << "plan() sees the built problem";
    EXPECT_TRUE(std::isnan(static_cast<const float*>(p.o)[0])) << "outputs are poisoned before plan()";
    const auto* ws = static_cast<const std::uint8_t*>(workspace.allocate(64));
    if (std::all_of(ws, ws + 64, [](std::uint8_t b) { return b == 0xFF; })) log_.push_back("workspace poisoned");
    problem_ = p;
  }
  cudaError_t run(cudaStream_t) override {
    log_.push_back("run");
    const std::size_t n = static_cast<std::size_t>(problem_.batch) * problem_.shape.heads_q * problem_.shape.head_dim;
    const auto* q = static_cast<const float*>(problem_.q);
    auto* o = static_cast<float*>(problem_.o);
    if (behaviour_ == Behaviour::silent) return cudaSuccess;
    for (std::size_t i = 0; i < n; ++i) o[i] = (behaviour_ == Behaviour::wrong ? 3.0f : 2.0f) * q[i];
    for (int i = 0; i < problem_.batch * problem_.shape.heads_q; ++i) problem_.lse[i] = lse_written;
    return cudaSuccess;
  }
  cudaError_t run_serial(cudaStream_t s) override {
    log_.push_back("run_serial");
    return run(s);
  }
  json plan_json() const override { return {{"family", "fake_family"}, {"batch", problem_.batch}}; }

 private:
  Log& log_;
  Behaviour behaviour_;
  AttentionProblem problem_;

 public:
  DType io = DType::fp32;  // what io_dtype() asks for
  LseBase lse_base_written = LseBase::natural;
  float lse_written = 0.0f;
};

AttentionProblem problem_of(int head_dim, int batch = 3) {
  AttentionProblem p;
  p.kernel = KernelKind::flash_decode;
  p.shape = {4, 2, head_dim};
  p.batch = batch;
  p.kv_dtype = DType::fp16;
  p.host_seq_lens.assign(batch, 100);
  p.max_len = 100;
  return p;
}

struct Outcome {
  json point;
  Log log;
  RunContext ctx;
};

Outcome run_one(Behaviour behaviour, int head_dim = 64, MeasureRequest request = {"e/x"}) {
  Outcome out;
  FakeBackend backend(out.log, behaviour);
  FakeSteps steps(out.log);
  out.point = run_point_pipeline(backend, problem_of(head_dim), steps, request, out.ctx);
  return out;
}

TEST(PointPipeline, RunsTheStepsInOrderAndRecordsTheBackend) {
  const Outcome out = run_one(Behaviour::correct);
  const json& p = out.point;
  ASSERT_EQ(p["status"], "ok") << p.dump(2);
  const Log expected = {"supports",       "build", "poison_outputs", "plan", "workspace.allocate", "workspace poisoned",
                        "checked_launch", "run",   "verify",         "time", "run",               "run",
                        "run",            "counters", "run_serial",  "run"};
  EXPECT_EQ(out.log, expected);
  EXPECT_EQ(p["backend"]["name"], "fake");
  EXPECT_EQ(p["backend"]["version"], "1.2.3");
  EXPECT_EQ(p["backend"]["io_dtype"], "fp32");
  EXPECT_EQ(p["backend"]["workspace_bytes"], 64);
  EXPECT_GE(p["backend"]["plan_us"].get<double>(), 0.0);
  EXPECT_EQ(p["plan"]["family"], "fake_family");
  EXPECT_EQ(p["verification"]["method"], "fake");
  EXPECT_EQ(p["timing"]["median_us"], 11.0);
  EXPECT_EQ(p["counters"]["reason"], "fake steps");
  // No model of its own: the minimum, K and V of 3 x 100 tokens x 2 KV heads x 64 dims in FP16.
  EXPECT_EQ(p["model"]["name"], "decode_min_bytes");
  EXPECT_EQ(p["model"]["k_bytes"], 3.0 * 100 * 2 * 64 * 2);
  EXPECT_EQ(p["model"]["extra_bytes"], 0.0);
  EXPECT_FALSE(p.contains("bound")) << "no shared prefix, no bound";
  EXPECT_NEAR(out.ctx.measured_seconds, 11e-6 * 3, 1e-12);
  for (const char* phase : {"verification", "timing", "counters"}) EXPECT_TRUE(out.ctx.phases.count(phase)) << phase;
  // What the driver writes must satisfy the results schema (backend block included).
  json doc = make_results_document(make_meta({}, "t"), host_device_info());
  json point = p;
  point["id"] = "e/x";
  point["parameters"] = json::object();
  doc["points"].push_back(point);
  EXPECT_NO_THROW(validate_results(doc));
}

TEST(PointPipeline, AWrongResultFailsVerificationAndIsNeverTimed) {
  const Outcome out = run_one(Behaviour::wrong);
  EXPECT_EQ(out.point["status"], "verification_failed") << out.point.dump(2);
  EXPECT_FALSE(out.point["verification"]["passed"].get<bool>());
  EXPECT_TRUE(out.point.contains("reason"));
  EXPECT_TRUE(out.point.contains("plan")) << "a failed point keeps its plan, for the reader";
  EXPECT_FALSE(out.point.contains("timing"));
  EXPECT_FALSE(logged(out.log, "time"));
  EXPECT_FALSE(logged(out.log, "counters"));
}

// The steps' pool record (a windowed paged point's released pages) is the point's "pool", written
// once the pool is built, so a point that then fails verification keeps it; none without one.
TEST(PointPipeline, ThePoolRecordIsWrittenAfterTheBuild) {
  EXPECT_FALSE(run_one(Behaviour::correct).point.contains("pool"));
  for (const Behaviour b : {Behaviour::correct, Behaviour::wrong}) {
    Log log;
    FakeBackend backend(log, b);
    FakeSteps steps(log);
    steps.pool = {{"pages", 10}, {"pages_released", 7}, {"pages_held", 3}, {"window_release", true}};
    RunContext ctx;
    const json p = run_point_pipeline(backend, problem_of(64), steps, {"e/x"}, ctx);
    EXPECT_EQ(p["pool"], steps.pool) << p.dump(2);
  }
}

// The outputs are poisoned before the checked launch: a backend that writes nothing fails (the
// fake steps' outputs start as zeros, which would never be NaN without the poison).
TEST(PointPipeline, OutputsArePoisonedSoABackendThatWritesNothingFails) {
  const Outcome out = run_one(Behaviour::silent);
  EXPECT_EQ(out.point["status"], "verification_failed") << out.point.dump(2);
  EXPECT_GT(out.point["verification"]["non_finite"].get<long long>(), 0);
  EXPECT_LT(position(out.log, "poison_outputs"), position(out.log, "plan"));
  EXPECT_LT(position(out.log, "plan"), position(out.log, "checked_launch"));
  EXPECT_LT(position(out.log, "checked_launch"), position(out.log, "verify"));
  EXPECT_FALSE(logged(out.log, "time"));
}

TEST(PointPipeline, ASupportsReasonSkipsBeforeAnythingIsBuilt) {
  const Outcome out = run_one(Behaviour::correct, 72);
  EXPECT_EQ(out.point["status"], "skipped");
  EXPECT_EQ(out.point["reason"], "head_dim 72: the fake backend takes 64 only");
  EXPECT_EQ(out.point["backend"]["name"], "fake");
  EXPECT_EQ(out.log, (Log{"supports"}));
}

TEST(PointPipeline, APlanThatThrowsIsThePointsError) {
  Outcome out;
  FakeBackend backend(out.log, Behaviour::throws_in_plan);
  FakeSteps steps(out.log);
  const json p = run_point_pipeline(backend, problem_of(64, 2), steps, {"e/x"}, out.ctx);
  EXPECT_EQ(p["status"], "error");
  EXPECT_EQ(p["reason"], "backend fake plan: no plan for batch 2");
  EXPECT_FALSE(logged(out.log, "checked_launch"));
  EXPECT_FALSE(logged(out.log, "run"));
}

// A plugin's backend (tests/plugins/test_plugin.c) through the same pipeline: its supports()
// reason is the skipped point's, its plan() message the point's error, and nothing is launched.
TEST(PointPipeline, APluginsRefusalAndPlanErrorAreThePointsRecord) {
  const auto backend = decode_bench::testing::host_test_plugin().make();
  Outcome out;
  FakeSteps steps(out.log);
  const json skipped = run_point_pipeline(*backend, problem_of(128, 2), steps, {"e/x"}, out.ctx);
  EXPECT_EQ(skipped["status"], "skipped");
  EXPECT_EQ(skipped["reason"].get<std::string>().rfind("head_dim 128: host_test_plugin takes 64 (kernel 2,", 0), 0u)
      << skipped["reason"];
  EXPECT_TRUE(out.log.empty()) << "nothing built for a refused point";

  const json failed = run_point_pipeline(*backend, problem_of(64, 2), steps, {"e/x"}, out.ctx);
  EXPECT_EQ(failed["status"], "error");
  EXPECT_EQ(failed["reason"], "backend host_test_plugin plan: host_test_plugin computes nothing (batch 2, io_dtype 1, "
                              "workspace given)");
  EXPECT_EQ(failed["backend"]["name"], "host_test_plugin");
  EXPECT_EQ(failed["backend"]["version"], "0.0.1");
  EXPECT_EQ(failed["backend"]["io_dtype"], "fp16") << "the plugin's io_dtype is recorded";
  EXPECT_EQ(out.log, (Log{"build", "poison_outputs", "workspace.allocate"})) << "no launch after a failed plan";
}

TEST(PointPipeline, EndToEndAndCountersFollowTheRequest) {
  const Outcome no_counters = run_one(Behaviour::correct, 64, {"e/x", TimingMode::hot, false, false});
  EXPECT_EQ(no_counters.point["status"], "ok");
  EXPECT_FALSE(no_counters.point.contains("counters"));
  EXPECT_EQ(no_counters.point["timing"]["mode"], "hot");
  const Outcome e2e = run_one(Behaviour::correct, 64, {"e/x", TimingMode::cold, true, true});
  EXPECT_TRUE(logged(e2e.log, "time end_to_end"));
  EXPECT_FALSE(e2e.point.contains("counters")) << "the E2E copies are not a kernel to count";
}

// The q / o dtype a backend asks for: recorded; one the pipeline cannot convert to, or a 16-bit
// one under end_to_end (whose copies are of fp32 q and o), skips the point before anything is built.
TEST(PointPipeline, TheIoDtypeIsRecordedOrRefused) {
  const auto with_io = [](DType io, MeasureRequest request) {
    Outcome out;
    FakeBackend backend(out.log, Behaviour::correct);
    backend.io = io;
    FakeSteps steps(out.log);
    out.point = run_point_pipeline(backend, problem_of(64), steps, request, out.ctx);
    return out;
  };
  const Outcome fp16 = with_io(DType::fp16, {"e/x"});
  EXPECT_EQ(fp16.point["backend"]["io_dtype"], "fp16");
  EXPECT_EQ(fp16.point["backend"]["io_conversion"], "host, outside timing");
  const Outcome fp8 = with_io(DType::fp8_e4m3, {"e/x"});
  EXPECT_EQ(fp8.point["status"], "skipped");
  EXPECT_EQ(fp8.point["reason"], "backend fake asks for q and o in fp8_e4m3; the pipeline gives them in fp32, fp16 or bf16");
  EXPECT_EQ(fp8.log, (Log{"supports"}));
  const Outcome e2e = with_io(DType::bf16, {"e/x", TimingMode::cold, true, true});
  EXPECT_EQ(e2e.point["status"], "skipped");
  EXPECT_EQ(e2e.point["reason"], "end_to_end copies q and o in fp32; backend fake reads and writes bf16");
}

// A base-2 lse is turned into the natural log once, after the checked launch (so verification
// sees ln), and the point says so; a natural-log backend's lse is left as written.
TEST(PointPipeline, ABase2LseIsConvertedOutsideTimingAndRecorded) {
  const auto with_lse = [](LseBase base, float written, std::vector<float>* lse_seen) {
    Outcome out;
    FakeBackend backend(out.log, Behaviour::correct);
    backend.lse_base_written = base;
    backend.lse_written = written;
    FakeSteps steps(out.log);
    out.point = run_point_pipeline(backend, problem_of(64), steps, {"e/x", TimingMode::hot, false, false}, out.ctx);
    *lse_seen = steps.lse_verified();
    return out;
  };
  std::vector<float> lse;
  const Outcome two = with_lse(LseBase::two, 3.0f, &lse);
  ASSERT_EQ(two.point["status"], "ok") << two.point.dump(2);
  EXPECT_EQ(two.point["backend"]["lse_conversion"], "base 2 to natural, host, outside timing");
  ASSERT_FALSE(lse.empty());
  for (float x : lse) EXPECT_FLOAT_EQ(x, static_cast<float>(3.0 * std::numbers::ln2));
  const Outcome natural = with_lse(LseBase::natural, 3.0f, &lse);
  EXPECT_FALSE(natural.point["backend"].contains("lse_conversion"));
  for (float x : lse) EXPECT_EQ(x, 3.0f);
}

// A shared-prefix problem records the bound beside its model.
TEST(PointPipeline, ASharedPrefixProblemRecordsItsBound) {
  Outcome out;
  FakeBackend backend(out.log, Behaviour::correct);
  FakeSteps steps(out.log);
  AttentionProblem problem = problem_of(64, 4);
  problem.layout = KvLayoutKind::paged;
  problem.prefix = SharedPrefixLayout{16, {{0, 0, 64, 0, 4}}, {64, 64, 64, 64}, {100, 100, 100, 100}};
  out.ctx.ceilings = {{"dram_read", {{"value", 3000.0}}}, {"fp16_tensor", {{"value", 600.0}}}};
  const json p = run_point_pipeline(backend, problem, steps, {"e/x"}, out.ctx);
  ASSERT_EQ(p["status"], "ok") << p.dump(2);
  EXPECT_EQ(p["model"]["name"], "shared_prefix_unique_bytes");
  ASSERT_TRUE(p.contains("bound"));
  EXPECT_GT(p["bound"]["bound_us"].get<double>(), 0.0);
  EXPECT_EQ(p["bound"]["median_over_bound"], 11.0 / p["bound"]["bound_us"].get<double>());
}

// Through the driver: the point whose plan throws records the error, the sweep goes on to the
// next, and every pipeline point names its backend; the unsupported one is skipped with the
// backend's reason before anything runs.
TEST(PointPipeline, ThroughTheDriverAPlanFailureDoesNotStopTheSweep) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("decode_bench_pipeline_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Log log;
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<FakeBackend>(log, Behaviour::throws_in_plan));
  RunnerRegistry registry;
  registry.add(make_pipeline_runner(KernelKind::flash_decode, std::move(backends),
                                    [&log](const AttentionProblem&, const Point&, RunContext&) {
                                      return std::make_unique<FakeSteps>(log);
                                    }));
  // batch 2 throws in plan, batch 3 runs, head_dim 72 is refused by supports().
  const json preset = testing::one_experiment({{"batch", {2, 3}}, {"head_dim", {64, 72}}}, {{"T", 100}});
  ValidationContext ctx;
  ctx.registered_backends = {"fake"};
  const Plan plan = testing::plan_of(preset, {"backend=fake"}, ctx);
  std::atomic<bool> interrupted{false};
  const SweepOutcome out =
      run_sweep(plan, registry, host_default_hooks(), testing::sweep_options(dir / "r.json", {"t"}, &interrupted));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(out.document["points"].size(), 4u);
  EXPECT_EQ(out.document["points"][0]["id"], "e/kernel=flash_decode/backend=fake/layout=contiguous/dtype=fp16/head_dim=64/batch=2/T=100")
      << "a backend other than the default enters the id, after the kernel";
  EXPECT_TRUE(out.complete);
  for (const json& p : out.document["points"]) {
    EXPECT_EQ(p["parameters"]["backend"], "fake") << p.dump();
    const int batch = p["parameters"]["batch"], head_dim = p["parameters"]["head_dim"];
    if (head_dim == 72) {
      EXPECT_EQ(p["status"], "skipped");
      EXPECT_EQ(p["reason"], "head_dim 72: the fake backend takes 64 only");
    } else if (batch == 2) {
      EXPECT_EQ(p["status"], "error");
      EXPECT_EQ(p["reason"], "backend fake plan: no plan for batch 2");
      EXPECT_EQ(p["backend"]["name"], "fake");
    } else {
      EXPECT_EQ(p["status"], "ok") << p.dump();
      EXPECT_EQ(p["backend"]["version"], "1.2.3");
    }
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
