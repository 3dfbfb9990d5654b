// The sweep driver end to end on the host: a fake runner stands in for the GPU, so streaming,
// interruption, CUDA error handling, resume, shards and merge are all tested without a device.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <fstream>
#include <new>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "harness/cuda_check.hpp"
#include "harness/results_schema.hpp"
#include "sweep_test_support.hpp"
#include "gpu_test_support.hpp"
#include "sweeps/builtin_runners.hpp"
#include "pools/pool_error.hpp"
#include "sweeps/driver.hpp"
#include "sweeps/merge.hpp"
#include "sweeps/partial_file.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json ok_point(double us) {
  return {{"status", "ok"},
          {"verification", {{"passed", true}, {"max_abs_error", 0.0}, {"max_rel_error", 0.0}, {"tolerance", 1e-3}}},
          {"timing", {{"median_us", us}, {"repetitions", 3}}},
          {"model", {{"bytes", 1.0}, {"flops", 1.0}}}};
}

// Produces ok points (median_us = T) and records what it ran; `hook` may throw or interrupt.
struct FakeRunner : PointRunner {
  std::string kernel = "flash_decode";
  std::vector<std::string>* ran;
  std::function<void(const Point&, RunContext&)> hook;
  std::function<std::optional<std::string>(const Point&)> refuse;
  FakeRunner(std::vector<std::string>* log) : ran(log) {}
  std::string name() const override { return kernel; }
  std::optional<std::string> cannot_run(const Point& p) const override { return refuse ? refuse(p) : std::nullopt; }
  json run(const Point& p, RunContext& ctx) override {
    ran->push_back(p.id);
    if (hook) hook(p, ctx);
    ctx.measured_seconds += 1e-6;
    return ok_point(p.parameters["T"].get<double>());
  }
};

class SweepDriver : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() /
                 ("decode_bench_sweep_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::vector<std::string> ran;
  RunnerRegistry registry;
  FakeRunner* runner = nullptr;
  std::atomic<bool> interrupted{false};

  void SetUp() override {
    fs::create_directories(dir);
    auto r = std::make_unique<FakeRunner>(&ran);
    runner = r.get();
    registry.add(std::move(r));
  }
  void TearDown() override { fs::remove_all(dir); }

  static Plan plan(Shard shard = {}) {
    json preset = testing::one_experiment({{"T", {{"range", {1, 10}}}}});
    preset["experiments"].push_back({{"name", "other"}, {"axes", {{"kernel", "baseline"}, {"T", {5}}}}});
    return testing::plan_of(preset, {}, {}, shard);
  }

  SweepOptions options(const std::string& file) {
    return testing::sweep_options(dir / file, {"decode-bench", "sweep"}, &interrupted);
  }
};

using testing::point_ids;

// run.phases: the runner's phases as recorded, "other" = wall time minus them, the sweep's totals
// in meta.sweep.phase_seconds, and the end-of-sweep summary on the progress stream.
TEST_F(SweepDriver, RecordsPhasesWithTheRestAsOtherAndPrintsTheirTotals) {
  runner->hook = [](const Point&, RunContext& ctx) {
    EXPECT_TRUE(ctx.phases.empty()) << "phases are reset per point";
    PhaseTimer phase(ctx.phases, kPhaseTiming);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    phase.stop();
    ctx.phases[std::string(kPhaseDataFill)] += 0.0;
  };
  std::ostringstream progress;
  SweepOptions o = options("r.json");
  o.progress = &progress;
  const SweepOutcome out = run_sweep(plan(), registry, host_default_hooks(), o);
  double timing_total = 0;
  for (const auto& pt : out.document["points"]) {
    const json& phases = pt["run"]["phases"];
    ASSERT_TRUE(phases.contains("other")) << pt.dump();
    double sum = 0;
    for (const auto& [_, seconds] : phases.items()) sum += seconds.get<double>();
    EXPECT_NEAR(sum, pt["run"]["wall_seconds"].get<double>(), 1e-9);
    if (pt["status"] == "ok") {
      EXPECT_GE(phases["timing"].get<double>(), 0.002);
      EXPECT_EQ(phases["data_fill"], 0.0);
      timing_total += phases["timing"].get<double>();
    } else {
      EXPECT_EQ(phases.size(), 1u) << "a skipped point has only 'other'";
    }
  }
  const json& totals = out.document["meta"]["sweep"]["phase_seconds"];
  EXPECT_NEAR(totals["timing"].get<double>(), timing_total, 1e-9);
  EXPECT_NE(progress.str().find("time by phase"), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("timing"), std::string::npos);
  EXPECT_NE(progress.str().find("outside points"), std::string::npos);
}

TEST_F(SweepDriver, RunsEveryPointAndWritesAValidCompleteDocument) {
  const Plan p = plan();
  const SweepOutcome out = run_sweep(p, registry, host_default_hooks(), options("r.json"));
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.ran, 11u);
  EXPECT_EQ(ran.size(), 10u);  // the baseline point has no runner here
  const json doc = read_results(dir / "r.json");
  EXPECT_EQ(doc, out.document);
  EXPECT_EQ(point_ids(doc), testing::ids_of(p.points));
  const json& last = doc["points"][10];
  EXPECT_EQ(last["status"], "skipped");
  EXPECT_NE(last["reason"].get<std::string>().find("no runner registered for kernel 'baseline'"), std::string::npos);
  EXPECT_EQ(doc["points"][3]["timing"]["median_us"], 4.0);
  EXPECT_EQ(doc["points"][3]["parameters"], p.points[3].parameters);
  for (const auto& pt : doc["points"]) {
    EXPECT_GE(pt["run"]["wall_seconds"].get<double>(), pt["run"]["overhead_seconds"].get<double>());
    EXPECT_GE(pt["run"]["overhead_seconds"].get<double>(), 0.0);
  }
  const json& sweep = doc["meta"]["sweep"];
  EXPECT_GT(sweep["wall_seconds"].get<double>(), 0.0);
  EXPECT_GE(sweep["wall_seconds"].get<double>(), sweep["overhead_seconds"].get<double>());
  EXPECT_EQ(sweep["status_counts"]["ok"], 10);
  EXPECT_EQ(sweep["total_points"], 11);
  EXPECT_FALSE(fs::exists(partial_path_for(dir / "r.json")));  // the sidecar goes once the document is safe
}

TEST_F(SweepDriver, StreamsEachFinishedPointBeforeTheNextStarts) {
  const fs::path sidecar = partial_path_for(dir / "r.json");
  std::vector<std::size_t> seen_on_disk;
  runner->hook = [&](const Point&, RunContext&) { seen_on_disk.push_back(read_partial(sidecar).points.size()); };
  run_sweep(plan(), registry, host_default_hooks(), options("r.json"));
  ASSERT_EQ(seen_on_disk.size(), 10u);
  for (std::size_t k = 0; k < seen_on_disk.size(); ++k) EXPECT_EQ(seen_on_disk[k], k);
}

TEST_F(SweepDriver, InterruptKeepsFinishedPointsAndResumeRunsExactlyTheRest) {
  runner->hook = [&](const Point&, RunContext&) {
    if (ran.size() == 4) interrupted = true;
  };
  const SweepOutcome first = run_sweep(plan(), registry, host_default_hooks(), options("r.json"));
  EXPECT_FALSE(first.complete);
  EXPECT_EQ(first.stop_reason, "interrupted");
  EXPECT_EQ(first.document["points"].size(), 4u);
  EXPECT_EQ(first.document["meta"]["sweep"]["complete"], false);
  const std::vector<std::string> first_ids = ran;

  interrupted = false;
  runner->hook = nullptr;
  ran.clear();
  SweepOptions o = options("r.json");
  o.resume = dir / "r.json";
  const SweepOutcome second = run_sweep(plan(), registry, host_default_hooks(), o);
  EXPECT_TRUE(second.complete);
  EXPECT_EQ(second.resumed, 4u);
  std::set<std::string> union_ids(first_ids.begin(), first_ids.end());
  for (const auto& id : ran) EXPECT_TRUE(union_ids.insert(id).second) << id << " ran twice";
  EXPECT_EQ(ran.size(), 6u);
  EXPECT_EQ(point_ids(second.document), testing::ids_of(plan().points));
}

// Resuming into the same file with a narrower selection (here a shard) runs nothing new and
// writes back every point the file held: those outside the selection are kept, after the plan's.
TEST_F(SweepDriver, ResumeWithANarrowerSelectionKeepsThePointsItLeavesOut) {
  const SweepOutcome full = run_sweep(plan(), registry, host_default_hooks(), options("r.json"));
  ASSERT_TRUE(full.complete);
  ran.clear();
  std::ostringstream progress;
  SweepOptions o = options("r.json");
  o.resume = dir / "r.json";
  o.progress = &progress;
  const Plan half = plan(Shard{1, 2});
  const SweepOutcome narrow = run_sweep(half, registry, host_default_hooks(), o);
  EXPECT_TRUE(ran.empty()) << "every selected point was already recorded";
  EXPECT_TRUE(narrow.complete);
  EXPECT_EQ(narrow.resumed, half.points.size());
  const std::size_t outside = plan().points.size() - half.points.size();
  EXPECT_EQ(narrow.document["meta"]["sweep"]["kept_outside_plan"], outside);
  std::vector<std::string> want = testing::ids_of(plan().points), got = point_ids(read_results(dir / "r.json"));
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_NE(progress.str().find("kept " + std::to_string(outside) + " points of"), std::string::npos) << progress.str();
}

TEST_F(SweepDriver, ResumeFromTheSidecarOfACrashedRun) {
  const Plan p = plan();
  // A crash after three points: header, three points, and half a line.
  {
    std::vector<json> done;
    for (int i = 0; i < 3; ++i) {
      json pt = ok_point(1);
      pt["id"] = p.points[i].id;
      pt["parameters"] = p.points[i].parameters;
      done.push_back(pt);
    }
    json errored = {{"id", p.points[3].id}, {"parameters", p.points[3].parameters}, {"status", "error"}, {"reason", "x"}};
    done.push_back(errored);
    PartialWriter w(partial_path_for(dir / "r.json"), {{"decode_bench_partial", 1}, {"device", host_device_info()}}, done);
  }
  std::ofstream(partial_path_for(dir / "r.json"), std::ios::app) << "{\"id\": \"e/kern";
  SweepOptions o = options("r.json");
  o.resume = dir / "r.json";  // the document itself was never written
  const SweepOutcome out = run_sweep(p, registry, host_default_hooks(), o);
  EXPECT_EQ(out.resumed, 3u);  // the "error" point is run again
  EXPECT_EQ(ran.size(), 7u);
  EXPECT_EQ(ran.front(), p.points[3].id);
  EXPECT_TRUE(out.complete);
}

TEST_F(SweepDriver, ResumeRefusesAnotherDeviceUnlessAllowed) {
  run_sweep(plan(), registry, host_default_hooks(), options("r.json"));
  DriverHooks other = host_default_hooks();
  other.device_info = [] {
    json d = host_device_info();
    d["name"] = "Other GPU";
    return d;
  };
  SweepOptions o = options("s.json");
  o.resume = dir / "r.json";
  EXPECT_THROW(run_sweep(plan(), registry, other, o), ConfigErrors);
  o.allow_mixed_devices = true;
  EXPECT_EQ(run_sweep(plan(), registry, other, o).resumed, 11u);
  o.resume = dir / "missing.json";
  EXPECT_THROW(run_sweep(plan(), registry, other, o), ConfigErrors);
}

TEST_F(SweepDriver, CudaErrorsOutOfMemoryAndRefusalsAreRecordedAndTheSweepGoesOn) {
  runner->refuse = [](const Point& p) -> std::optional<std::string> {
    if (p.parameters["T"] == 2) return "T=2 is not supported";
    return std::nullopt;
  };
  runner->hook = [](const Point& p, RunContext&) {
    const int T = p.parameters["T"];
    if (T == 1) throw PoolError(PoolErrorKind::OutOfDeviceMemory, "cudaMalloc of 8589934592 bytes failed");
    if (T == 3) throw CudaError(cudaErrorMemoryAllocation, "cudaMalloc: out of memory");
    if (T == 4) throw std::bad_alloc();
    if (T == 5) throw CudaError(cudaErrorInvalidValue, "cudaMemcpy: invalid argument");
    if (T == 6) throw PoolError(PoolErrorKind::OutOfPages, "admit: len 6 needs 1 pages, 0 are free");
  };
  DriverHooks hooks = host_default_hooks();
  hooks.free_device_bytes = [] { return std::optional<std::uint64_t>(7 * 2 * 128 * 2 + 2 * 128 * 4); };
  const SweepOutcome out = run_sweep(plan(), registry, hooks, options("r.json"));
  const json& pts = out.document["points"];
  EXPECT_TRUE(out.complete);
  // A pool arena the GPU cannot allocate is a point too big for it, not a failure.
  EXPECT_EQ(pts[0]["status"], "skipped");
  EXPECT_NE(pts[0]["reason"].get<std::string>().find("out of device memory: OutOfDeviceMemory: cudaMalloc"),
            std::string::npos)
      << pts[0]["reason"];
  EXPECT_EQ(pts[1]["status"], "skipped");
  EXPECT_EQ(pts[1]["reason"], "T=2 is not supported");
  EXPECT_EQ(pts[2]["status"], "skipped");
  EXPECT_NE(pts[2]["reason"].get<std::string>().find("out of device memory"), std::string::npos);
  EXPECT_EQ(pts[3]["reason"], "out of host memory");
  EXPECT_EQ(pts[4]["status"], "error");
  EXPECT_EQ(pts[4]["sticky"], false);
  EXPECT_EQ(pts[5]["status"], "error");
  EXPECT_EQ(pts[5]["reason"], "OutOfPages: admit: len 6 needs 1 pages, 0 are free");
  EXPECT_EQ(pts[6]["status"], "ok");  // T=7 needs exactly the free bytes
  EXPECT_EQ(pts[7]["status"], "skipped");  // T=8 needs more than is free
  EXPECT_NE(pts[7]["reason"].get<std::string>().find("free"), std::string::npos);
  EXPECT_EQ(out.failed, 2u);
}

TEST_F(SweepDriver, StickyCudaErrorSavesEverythingAndStops) {
  runner->hook = [](const Point& p, RunContext&) {
    if (p.parameters["T"] == 3) throw CudaError(cudaErrorIllegalAddress, "kernel: illegal address");
  };
  const SweepOutcome out = run_sweep(plan(), registry, host_default_hooks(), options("r.json"));
  EXPECT_FALSE(out.complete);
  EXPECT_NE(out.stop_reason.find("sticky CUDA error"), std::string::npos);
  ASSERT_EQ(out.document["points"].size(), 3u);
  EXPECT_EQ(out.document["points"][2]["sticky"], true);
  EXPECT_EQ(read_results(dir / "r.json")["points"].size(), 3u);
  EXPECT_EQ(ran.size(), 3u);
}

TEST_F(SweepDriver, AnInvalidPointFromARunnerBecomesAnError) {
  struct Sloppy : PointRunner {
    std::string name() const override { return "baseline"; }
    json run(const Point&, RunContext&) override { return {{"status", "ok"}}; }  // no timing, no verification
  };
  registry.add(std::make_unique<Sloppy>());
  const SweepOutcome out = run_sweep(plan(), registry, host_default_hooks(), options("r.json"));
  const json& last = out.document["points"][10];
  EXPECT_EQ(last["status"], "error");
  EXPECT_NE(last["reason"].get<std::string>().find("invalid point"), std::string::npos) << last.dump();
}

// A runner may add parameters it derives (capacity: max_seq_len) but cannot change planned ones.
TEST_F(SweepDriver, RunnersAddDerivedParametersButNeverReplacePlannedOnes) {
  struct Deriving : PointRunner {
    std::string name() const override { return "baseline"; }
    json run(const Point& p, RunContext&) override {
      json r = ok_point(1);
      r["parameters"] = {{"max_seq_len", 2 * p.parameters["T"].get<int>()}, {"T", 999}};
      return r;
    }
  };
  registry.add(std::make_unique<Deriving>());
  const Plan p = plan();
  const SweepOutcome out = run_sweep(p, registry, host_default_hooks(), options("r.json"));
  const json& derived = out.document["points"][10];
  EXPECT_EQ(derived["status"], "ok");
  EXPECT_EQ(derived["parameters"]["max_seq_len"], 10);
  EXPECT_EQ(derived["parameters"]["T"], 5);
  json planned_plus = p.points[10].parameters;
  planned_plus["max_seq_len"] = 10;
  EXPECT_EQ(derived["parameters"], planned_plus);
  EXPECT_EQ(out.document["points"][0]["parameters"], p.points[0].parameters);  // nothing derived
}

json comparable(const json& doc) {
  json out = json::array();
  for (const auto& p : doc["points"])
    out.push_back({p["id"], p["parameters"], p["status"], p.value("timing", json())});
  return out;
}

TEST_F(SweepDriver, MergedShardsEqualTheUnshardedRun) {
  const SweepOutcome whole = run_sweep(plan(), registry, host_default_hooks(), options("whole.json"));
  for (std::size_t n : {2u, 3u, 5u}) {
    std::vector<NamedDocument> shards;
    for (std::size_t i = 0; i < n; ++i) {
      SweepOptions o = options(std::string("s").append(std::to_string(i)).append(".json"));
      o.shard = {i, n};
      shards.push_back({o.output.string(), run_sweep(plan({i, n}), registry, host_default_hooks(), o).document});
    }
    std::reverse(shards.begin(), shards.end());  // order of the inputs does not matter
    const json merged = merge_documents(shards, false, {"decode-bench", "merge"});
    EXPECT_NO_THROW(validate_results(merged));
    EXPECT_EQ(comparable(merged), comparable(whole.document)) << "n=" << n;
    EXPECT_EQ(merged["meta"]["merged_from"].size(), n);
    EXPECT_EQ(merged["meta"]["sweep"]["complete"], true);
    EXPECT_EQ(merged["meta"]["merge"], json({{"on_duplicate", "error"}, {"dropped_points", 0}}));
    shards.pop_back();  // leave out shard 0
    const json partial = merge_documents(shards, false, {});
    EXPECT_EQ(partial["meta"]["sweep"]["complete"], false);
    EXPECT_EQ(partial["meta"]["sweep"]["missing_shards"], json::array({"0/" + std::to_string(n)}));
  }
}

TEST_F(SweepDriver, MergeRefusesMixedDevices) {
  json a = run_sweep(plan({0, 2}), registry, host_default_hooks(), options("a.json")).document;
  json b = run_sweep(plan({1, 2}), registry, host_default_hooks(), options("b.json")).document;
  b["device"]["name"] = "Other GPU";
  EXPECT_THROW(merge_documents({{"a.json", a}, {"b.json", b}}, false, {}), std::invalid_argument);
  EXPECT_EQ(merge_documents({{"a.json", a}, {"b.json", b}}, true, {})["points"].size(), plan().points.size());
}

// An id in two inputs (a rerun, a file given twice) is refused, naming both files, the count and
// the first ids, unless --on-duplicate says which input's point to keep; the merged meta says which.
TEST_F(SweepDriver, MergeRefusesDuplicateIdsUnlessToldWhichToKeep) {
  const json a = run_sweep(plan(), registry, host_default_hooks(), options("a.json")).document;
  json c = a;  // a rerun of the first 7 points, the first of which failed this time
  c["points"].erase(c["points"].begin() + 7, c["points"].end());
  c["points"][0] = {{"id", a["points"][0]["id"]}, {"parameters", a["points"][0]["parameters"]},
                    {"experiment", a["points"][0]["experiment"]}, {"status", "error"}, {"reason", "x"}, {"index", 0}};
  const std::vector<NamedDocument> inputs = {{"c.json", c}, {"a.json", a}};
  try {
    merge_documents(inputs, false, {});
    ADD_FAILURE() << "duplicate ids must be refused";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    std::string line = "a.json repeats 7 points of c.json: ";
    for (int i = 0; i < 5; ++i) line += (i ? ", " : "") + a["points"][i]["id"].get<std::string>();
    EXPECT_NE(what.find("7 point ids are in more than one file"), std::string::npos) << what;
    EXPECT_NE(what.find(line + " and 2 more\n"), std::string::npos) << what;
    EXPECT_EQ(what.find(a["points"][5]["id"].get<std::string>()), std::string::npos) << what;  // counted, not named
    EXPECT_NE(what.find("--on-duplicate first"), std::string::npos) << what;
  }

  const json first = merge_documents(inputs, false, {}, OnDuplicate::first);
  ASSERT_EQ(first["points"].size(), a["points"].size());
  EXPECT_EQ(first["points"][0]["status"], "error");  // c's, the earlier input
  EXPECT_EQ(first["points"][8], a["points"][8]);
  EXPECT_EQ(first["meta"]["merge"], json({{"on_duplicate", "first"}, {"dropped_points", 7}}));
  EXPECT_EQ(first["meta"]["merged_from"][0]["duplicates_dropped"], 0);
  EXPECT_EQ(first["meta"]["merged_from"][1]["duplicates_dropped"], 7);
  EXPECT_NO_THROW(validate_results(first));

  const json last = merge_documents(inputs, false, {}, OnDuplicate::last);
  ASSERT_EQ(last["points"].size(), a["points"].size());
  EXPECT_EQ(last["points"], a["points"]);  // every point of a, the later input
  EXPECT_EQ(last["meta"]["merge"], json({{"on_duplicate", "last"}, {"dropped_points", 7}}));
  EXPECT_EQ(last["meta"]["merged_from"][0]["duplicates_dropped"], 7);
  EXPECT_EQ(last["meta"]["merged_from"][1]["duplicates_dropped"], 0);

  // A file given twice names itself; one id repeated is singular.
  json one = a;
  one["points"].erase(one["points"].begin() + 1, one["points"].end());
  try {
    merge_documents({{"one.json", one}, {"one.json", one}}, false, {});
    ADD_FAILURE() << "a file given twice must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1 point id is in more than one file"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("one.json repeats 1 point of one.json: " + a["points"][0]["id"].get<std::string>() + "\n"),
              std::string::npos)
        << e.what();
  }

  // Different parameters under one id stay an error whatever the policy.
  c["points"][0]["parameters"]["T"] = 99;
  for (OnDuplicate policy : {OnDuplicate::refuse, OnDuplicate::first, OnDuplicate::last})
    EXPECT_THROW(merge_documents({{"c.json", c}, {"a.json", a}}, false, {}, policy), std::invalid_argument);
}

TEST(SweepMerge, OnDuplicateNames) {
  EXPECT_EQ(parse_on_duplicate("first"), OnDuplicate::first);
  EXPECT_EQ(parse_on_duplicate("last"), OnDuplicate::last);
  for (const char* bad : {"", "error", "better", "First", "first "}) EXPECT_FALSE(parse_on_duplicate(bad)) << bad;
  EXPECT_EQ(on_duplicate_name(OnDuplicate::refuse), "error");
}

TEST(SweepGpu, DeviceHooksDescribeTheGpu) {
  DB_REQUIRE_GPU();
  const DriverHooks hooks = gpu_driver_hooks(0);
  json doc = make_results_document(make_meta({}, "gpu-test"), hooks.device_info());
  EXPECT_NO_THROW(validate_results(doc)) << doc["device"].dump();
  EXPECT_GT(doc["device"]["sm_count"].get<int>(), 0);
  const auto free = hooks.free_device_bytes();
  ASSERT_TRUE(free.has_value());
  EXPECT_GT(*free, 0u);
  EXPECT_LE(*free, doc["device"]["memory_bytes"].get<std::uint64_t>());
}

TEST_F(SweepDriver, GpuStateIsSnapshottedBeforeTheFirstPointAndAfterTheLast) {
  DriverHooks hooks = host_default_hooks();
  int calls = 0;
  std::size_t points_at_start = 0;
  hooks.gpu_state = [&] {
    ++calls;
    if (calls == 1) points_at_start = ran.size();
    return json{{"source", "test"}, {"time", "t" + std::to_string(calls)}, {"points_run", ran.size()}};
  };
  const SweepOutcome out = run_sweep(plan(), registry, hooks, options("r.json"));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(points_at_start, 0u);
  const json doc = read_results(dir / "r.json");
  EXPECT_EQ(doc["meta"]["gpu_state"]["start"]["time"], "t1");
  EXPECT_EQ(doc["meta"]["gpu_state"]["end"]["time"], "t2");
  EXPECT_EQ(doc["meta"]["gpu_state"]["end"]["points_run"], 10);
  // Without the hook (host runs) there is no gpu_state at all, rather than an empty one.
  const SweepOutcome host = run_sweep(plan(), registry, host_default_hooks(), options("h.json"));
  EXPECT_FALSE(host.document["meta"].contains("gpu_state"));
}

// A snapshot whose throttle mask holds a slowdown bit is named on the progress stream, at the start
// or the end; power cap and idle bits (a healthy GPU) are not.
TEST_F(SweepDriver, AThrottledGpuIsNamedOnTheProgressStream) {
  for (const auto& [start_mask, end_mask, want] :
       {std::tuple{0x88ull, 0x0ull,
                   "hardware slowdown, hardware power brake (NVML throttle reasons 0x88) at the start"},
        std::tuple{0x4ull, 0x40ull, "hardware thermal slowdown (NVML throttle reasons 0x40) at the end"},
        std::tuple{0x5ull, 0x1ull, ""}}) {
    DriverHooks hooks = host_default_hooks();
    int calls = 0;
    hooks.gpu_state = [&, start_mask = start_mask, end_mask = end_mask] {
      return json{{"source", "test"}, {"time", "t"}, {"throttle_reasons", ++calls == 1 ? start_mask : end_mask}};
    };
    std::ostringstream progress;
    SweepOptions o = options("t.json");
    o.progress = &progress;
    run_sweep(plan(), registry, hooks, o);
    const std::string text = progress.str();
    if (std::string(want).empty()) {
      EXPECT_EQ(text.find("warning: the GPU reported"), std::string::npos) << text;
    } else {
      EXPECT_NE(text.find(std::string("warning: the GPU reported ") + want), std::string::npos) << text;
    }
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
