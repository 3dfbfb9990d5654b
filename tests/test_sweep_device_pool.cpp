// The multi-GPU scheduler on the host: fake devices (hooks) and fake runners, one registry per
// worker as the CLI builds them, so dynamic hand-out, longest-first order, per-device records,
// a failing device, interrupt + resume and merging are tested without a GPU.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "harness/cuda_check.hpp"
#include "harness/results_schema.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/device_pool.hpp"
#include "sweeps/merge.hpp"
#include "sweeps/partial_file.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

json ok_point(double us) {
  return {{"status", "ok"},
          {"verification", {{"passed", true}, {"max_abs_error", 0.0}, {"max_rel_error", 0.0}, {"tolerance", 1e-3}}},
          {"timing", {{"median_us", us}, {"repetitions", 3}}},
          {"model", {{"bytes", 1.0}, {"flops", 1.0}}}};
}

// What every fake device's runner did, in order, across threads.
struct RunLog {
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> runs;  // (ctx.device, point id)
  std::set<int> started;                          // devices that have begun a point
  void add(int device, const std::string& id) {
    std::lock_guard lock(mutex);
    runs.emplace_back(device, id);
    started.insert(device);
  }
  std::size_t count_on(int device) {
    std::lock_guard lock(mutex);
    std::size_t n = 0;
    for (const auto& r : runs) n += r.first == device;
    return n;
  }
};

struct FakeGpuRunner : PointRunner {
  RunLog* log;
  std::function<void(const Point&, RunContext&)> hook;
  explicit FakeGpuRunner(RunLog* l) : log(l) {}
  std::string name() const override { return "flash_decode"; }
  json run(const Point& p, RunContext& ctx) override {
    log->add(ctx.device, p.id);
    if (hook) hook(p, ctx);
    ctx.measured_seconds += 1e-6;
    return ok_point(p.parameters["T"].get<double>());
  }
};

json fake_info(const std::string& name) {
  json info = host_device_info();
  info["name"] = name;
  info["compute_capability"] = "9.0";
  return info;
}

class DevicePool : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() /
                 ("decode_bench_pool_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  RunLog log;
  std::vector<std::unique_ptr<RunnerRegistry>> registries;
  std::map<int, FakeGpuRunner*> runner_of;  // device -> its runner
  std::atomic<bool> interrupted{false};

  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }

  DeviceWorker worker(int device, const std::string& model = "Fake GPU") {
    registries.push_back(std::make_unique<RunnerRegistry>());
    auto r = std::make_unique<FakeGpuRunner>(&log);
    runner_of[device] = r.get();
    registries.back()->add(std::move(r));
    DriverHooks hooks;
    hooks.device_info = [model] { return fake_info(model); };
    hooks.ceilings = [device] { return json{{"hbm_read", {{"value", 1000.0 + device}, {"unit", "GB/s"}}}}; };
    return {device, hooks, registries.back().get(), nullptr};
  }

  // Each worker's first point waits (bounded) until every device has begun one, so the test sees
  // all workers take part however the threads are scheduled.
  void make_all_devices_take_part(const std::vector<int>& devices) {
    for (int d : devices)
      runner_of[d]->hook = [this, n = devices.size()](const Point&, RunContext&) {
        for (int i = 0; i < 2000; ++i) {
          {
            std::lock_guard lock(log.mutex);
            if (log.started.size() >= n) return;
          }
          std::this_thread::sleep_for(1ms);
        }
      };
  }

  static Plan plan(Shard shard = {}) { return testing::plan_of(testing::one_experiment({{"T", {{"range", {1, 12}}}}}), {}, {}, shard); }

  // `--resume file` on two fresh, healthy workers (the log and the runners of the first run cleared).
  SweepOutcome resume_on_two_healthy_devices(const std::string& file) {
    runner_of.clear();
    log.runs.clear();
    std::vector<DeviceWorker> again = {worker(0), worker(1)};
    SweepOptions o = options(file);
    o.resume = dir / file;
    return run_sweep_on_devices(plan(), again, o);
  }

  SweepOptions options(const std::string& file) {
    return testing::sweep_options(dir / file, {"decode-bench", "sweep", "--devices", "all"}, &interrupted);
  }
};

using testing::point_ids;

TEST_F(DevicePool, WorkersShareThePlanEachPointOnceOnOneRecordedDevice) {
  const Plan p = plan();
  std::vector<DeviceWorker> workers = {worker(0), worker(1)};
  make_all_devices_take_part({0, 1});
  const SweepOutcome out = run_sweep_on_devices(p, workers, options("r.json"));
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.ran, 12u);
  const json doc = read_results(dir / "r.json");  // validates against the results schema
  EXPECT_EQ(doc, out.document);
  EXPECT_EQ(point_ids(doc), testing::ids_of(p.points));  // plan order, whoever measured them
  std::multiset<std::string> ran_ids;
  for (const auto& [device, id] : log.runs) ran_ids.insert(id);
  const std::vector<std::string> ids = point_ids(doc);
  EXPECT_EQ(ran_ids, std::multiset<std::string>(ids.begin(), ids.end()));  // each once
  std::map<int, std::size_t> per_device;
  for (const auto& pt : doc["points"]) {
    ASSERT_TRUE(pt.contains("device"));
    ++per_device[pt["device"].get<int>()];
  }
  for (const auto& [device, id] : log.runs) {  // the recorded device is the one whose runner ran it
    for (const auto& pt : doc["points"]) {
      if (pt["id"] == id) {
        EXPECT_EQ(pt["device"], device) << id;
      }
    }
  }
  EXPECT_GE(per_device[0], 1u);
  EXPECT_GE(per_device[1], 1u);
  ASSERT_EQ(doc["devices"].size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(doc["devices"][k]["index"], k);
    EXPECT_EQ(doc["devices"][k]["info"]["name"], "Fake GPU");
    EXPECT_EQ(doc["devices"][k]["ceilings"]["hbm_read"]["value"], 1000.0 + k);  // each device's own
    EXPECT_EQ(doc["devices"][k]["points"], per_device[static_cast<int>(k)]);
  }
  EXPECT_EQ(doc["ceilings"], doc["devices"][0]["ceilings"]);  // the single-GPU fields: the first device
  EXPECT_EQ(doc["device"], doc["devices"][0]["info"]);
  EXPECT_EQ(doc["meta"]["sweep"]["devices"], json::array({0, 1}));
  EXPECT_FALSE(fs::exists(partial_path_for(dir / "r.json")));
}

TEST_F(DevicePool, HandsOutTheLongestEstimatedPointsFirst) {
  std::vector<DeviceWorker> workers = {worker(3)};
  run_sweep_on_devices(plan(), workers, options("r.json"));
  ASSERT_EQ(log.runs.size(), 12u);
  for (std::size_t k = 0; k < log.runs.size(); ++k) {
    EXPECT_EQ(log.runs[k].first, 3);
    EXPECT_TRUE(log.runs[k].second.ends_with("/T=" + std::to_string(12 - k)))
        << "position " << k << ": " << log.runs[k].second;  // larger T moves more bytes
  }
}

TEST_F(DevicePool, CostGrowsWithTheBytesAPointMovesAndCountsHostReferencesHeavier) {
  const Plan p = testing::plan_of(testing::one_experiment({{"kernel", {"flash_decode", "cpu_reference"}}, {"T", {1024, 65536}}}));
  std::map<std::string, double> cost;
  for (const Point& pt : p.points) cost[pt.parameters["kernel"].get<std::string>() + std::to_string(pt.parameters["T"].get<int>())] = estimated_point_cost(pt);
  EXPECT_LT(cost["flash_decode1024"], cost["flash_decode65536"]);
  EXPECT_LT(cost["flash_decode65536"], cost["cpu_reference65536"]);
  EXPECT_LT(cost["cpu_reference1024"], cost["cpu_reference65536"]);
}

TEST_F(DevicePool, AFailingGpuRecordsItsPointAndTheOthersFinishThePlan) {
  std::vector<DeviceWorker> workers = {worker(0), worker(1)};
  make_all_devices_take_part({0, 1});
  const auto wait = runner_of[1]->hook;
  runner_of[1]->hook = [wait](const Point& p, RunContext& ctx) {
    wait(p, ctx);
    throw CudaError(cudaErrorIllegalAddress, "an illegal memory access was encountered");
  };
  const SweepOutcome out = run_sweep_on_devices(plan(), workers, options("r.json"));
  EXPECT_TRUE(out.complete);  // device 0 took every other point
  EXPECT_EQ(out.failed, 1u);
  EXPECT_EQ(log.count_on(1), 1u);  // the sticky error stopped device 1 after its one point
  std::size_t errors = 0;
  for (const auto& pt : out.document["points"]) {
    if (pt["status"] == "error") {
      ++errors;
      EXPECT_EQ(pt["device"], 1);
      EXPECT_EQ(pt["sticky"], true);
    } else {
      EXPECT_EQ(pt["status"], "ok");
      EXPECT_EQ(pt["device"], 0);
    }
  }
  EXPECT_EQ(errors, 1u);
  EXPECT_NE(out.document["devices"][1].value("stop_reason", "").find("sticky CUDA error"), std::string::npos);
  EXPECT_FALSE(out.document["devices"][0].contains("stop_reason"));

  // --resume runs the failed point again (on a healthy device) and keeps the rest.
  const SweepOutcome second = resume_on_two_healthy_devices("r.json");
  EXPECT_EQ(second.resumed, 11u);
  EXPECT_EQ(second.ran, 1u);
  EXPECT_EQ(second.failed, 0u);
}

TEST_F(DevicePool, ADeviceThatCannotStartLeavesThePlanToTheOthers) {
  std::vector<DeviceWorker> workers = {worker(0), worker(1)};
  workers[1].hooks.ceilings = []() -> json { throw CudaError(cudaErrorNoDevice, "no CUDA-capable device is detected"); };
  const SweepOutcome out = run_sweep_on_devices(plan(), workers, options("r.json"));
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(log.count_on(0), 12u);
  EXPECT_EQ(log.count_on(1), 0u);
  EXPECT_NE(out.document["devices"][1].value("stop_reason", "").find("device setup failed"), std::string::npos);
  EXPECT_EQ(out.document["devices"][1]["points"], 0);
}

TEST_F(DevicePool, EveryDeviceFailingEndsIncompleteWithTheReasons) {
  std::vector<DeviceWorker> workers = {worker(0)};
  runner_of[0]->hook = [](const Point&, RunContext&) { throw CudaError(cudaErrorLaunchFailure, "unspecified launch failure"); };
  const SweepOutcome out = run_sweep_on_devices(plan(), workers, options("r.json"));
  EXPECT_FALSE(out.complete);
  EXPECT_EQ(out.document["points"].size(), 1u);
  EXPECT_NE(out.stop_reason.find("device 0: sticky CUDA error"), std::string::npos) << out.stop_reason;
}

TEST_F(DevicePool, InterruptKeepsWhatFinishedAndResumeRunsExactlyTheRest) {
  std::vector<DeviceWorker> workers = {worker(0), worker(1)};
  std::atomic<int> n{0};
  for (int d : {0, 1})
    runner_of[d]->hook = [&](const Point&, RunContext&) {
      if (++n == 5) interrupted = true;
    };
  const SweepOutcome first = run_sweep_on_devices(plan(), workers, options("r.json"));
  EXPECT_FALSE(first.complete);
  EXPECT_EQ(first.stop_reason, "interrupted");
  const std::size_t kept = first.document["points"].size();
  EXPECT_GE(kept, 5u);  // both workers may each finish the point they hold
  EXPECT_LE(kept, 6u);
  std::set<std::string> first_ids;
  for (const auto& pt : first.document["points"]) first_ids.insert(pt["id"]);

  interrupted = false;
  const SweepOutcome second = resume_on_two_healthy_devices("r.json");
  EXPECT_TRUE(second.complete);
  EXPECT_EQ(second.resumed, kept);
  EXPECT_EQ(second.ran, 12u - kept);
  for (const auto& [device, id] : log.runs) EXPECT_FALSE(first_ids.count(id)) << id << " ran twice";
  EXPECT_EQ(point_ids(second.document), testing::ids_of(plan().points));
}

TEST_F(DevicePool, ResumeFromACrashedRunsSidecarAndOnlyOnTheSameModel) {
  std::vector<DeviceWorker> workers = {worker(0), worker(1)};
  run_sweep_on_devices(plan(), workers, options("r.json"));
  // A crash leaves only the sidecar: rebuild one from the finished document's first 7 points.
  const json doc = read_results(dir / "r.json");
  {
    std::vector<json> carried(doc["points"].begin(), doc["points"].begin() + 7);
    PartialWriter w(partial_path_for(dir / "c.json"), {{"decode_bench_partial", 1}, {"device", doc["device"]}, {"devices", doc["devices"]}}, carried);
  }
  std::vector<DeviceWorker> other = {worker(0), worker(1, "Other GPU")};
  SweepOptions o = options("c.json");
  o.resume = dir / "c.json";
  try {
    run_sweep_on_devices(plan(), other, o);
    ADD_FAILURE() << "resuming on another GPU model must be refused";
  } catch (const ConfigErrors& e) {
    EXPECT_EQ(e.errors()[0].path, "--resume");
    EXPECT_NE(e.errors()[0].message.find("device 1 of this run is 'Other GPU'"), std::string::npos) << e.errors()[0].message;
  }
  o.allow_mixed_devices = true;
  const SweepOutcome out = run_sweep_on_devices(plan(), other, o);
  EXPECT_EQ(out.resumed, 7u);
  EXPECT_TRUE(out.complete);
}

TEST_F(DevicePool, ShardsRunOnSeveralDevicesOfOneModelMerge) {
  std::vector<DeviceWorker> a = {worker(0), worker(1)};
  SweepOptions oa = options("a.json");
  oa.shard = {0, 2};
  run_sweep_on_devices(plan({0, 2}), a, oa);
  std::vector<DeviceWorker> b = {worker(0), worker(1)};
  SweepOptions ob = options("b.json");
  ob.shard = {1, 2};
  run_sweep_on_devices(plan({1, 2}), b, ob);
  const json merged = merge_documents({{"a.json", read_results(dir / "a.json")}, {"b.json", read_results(dir / "b.json")}}, false, {});
  EXPECT_EQ(point_ids(merged), testing::ids_of(plan().points));
  EXPECT_TRUE(merged["meta"]["sweep"]["complete"]);

  // One file whose second device is another model is refused without --allow-mixed-devices.
  std::vector<DeviceWorker> c = {worker(0), worker(1, "Other GPU")};
  SweepOptions oc = options("c.json");
  oc.shard = {1, 2};
  run_sweep_on_devices(plan({1, 2}), c, oc);
  const std::vector<NamedDocument> mixed = {{"a.json", read_results(dir / "a.json")}, {"c.json", read_results(dir / "c.json")}};
  try {
    merge_documents(mixed, false, {});
    ADD_FAILURE() << "a file with another GPU model must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Other GPU"), std::string::npos) << e.what();
  }
  EXPECT_EQ(merge_documents(mixed, true, {})["points"].size(), 12u);
}

TEST(DeviceList, AllOrDistinctIndicesBelowTheCount) {
  EXPECT_EQ(parse_device_list("all", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_device_list("1,0", 2), (std::vector<int>{1, 0}));
  EXPECT_EQ(parse_device_list("3", 4), (std::vector<int>{3}));
  const auto error_of = [](const std::string& text, int count) -> std::string {
    try {
      parse_device_list(text, count);
    } catch (const ConfigErrors& e) {
      EXPECT_EQ(e.errors()[0].path, "--devices");
      return e.errors()[0].message;
    }
    return "no error";
  };
  EXPECT_NE(error_of("2", 2).find("device 2 does not exist (2 CUDA devices visible)"), std::string::npos);
  EXPECT_NE(error_of("0,0", 2).find("listed twice"), std::string::npos);
  EXPECT_NE(error_of("0,x", 2).find("'x' is not a device index"), std::string::npos);
  EXPECT_NE(error_of("0,", 2).find("'' is not a device index"), std::string::npos);
  EXPECT_NE(error_of("-1", 2).find("not a device index"), std::string::npos);
  EXPECT_NE(error_of("all", 0).find("found no CUDA device"), std::string::npos);
}

TEST(DeviceList, NoWorkersOrADeviceTwiceIsAConfigError) {
  SweepOptions o;
  o.output = fs::temp_directory_path() / "decode_bench_pool_never.json";
  EXPECT_THROW(run_sweep_on_devices(testing::plan_of(testing::one_experiment({{"T", {1}}})), {}, o), ConfigErrors);
  RunnerRegistry r;
  std::vector<DeviceWorker> twice = {{0, host_default_hooks(), &r, nullptr}, {0, host_default_hooks(), &r, nullptr}};
  EXPECT_THROW(run_sweep_on_devices(testing::plan_of(testing::one_experiment({{"T", {1}}})), twice, o), ConfigErrors);
  EXPECT_FALSE(fs::exists(o.output));
}

}  // namespace
}  // namespace decode_bench::sweeps
