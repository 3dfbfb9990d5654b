// The MLA presets (host): configs/mla.json sweeps h_q over the ridge at four batch x context shapes,
// one experiment each, every point runnable by decode-bench's backend and by FlashInfer's two MLA
// kernels (flashinfer_mla, and flashinfer_mla_fa3 on compute capability 9.0); the models preset
// carries DeepSeek-V3 and Kimi K2 for all three, quick a small MLA experiment.
#include <gtest/gtest.h>

#include <set>

#include "backends/registry.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/point_problem.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using testing::plan_of;

std::vector<Point> points_of_preset(const char* name) {
  const auto preset = find_embedded_preset(name);
  EXPECT_TRUE(preset) << name;
  return preset ? plan_of(json::parse(preset->json)).points : std::vector<Point>{};
}

// supports()'s answer of the point's backend: none for decode-bench; for FlashInfer's none where
// it is built, else the configure's reason; for its Hopper kernel also the device's (compute
// capability 9.0, or none here).
void expect_runnable(const Point& p) {
  const std::string backend = p.parameters.value("backend", "decode-bench");
  ASSERT_TRUE(backend == "decode-bench" || backend == "flashinfer_mla" || backend == "flashinfer_mla_fa3") << backend;
  const auto b = find_backend(backend)->make();
  const auto why = b->supports(describe_point(KernelKind::flash_decode, p.parameters));
  if (backend != "decode-bench" && b->version() == "not built") {
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("backend " + backend + " not built"), std::string::npos) << *why;
  } else if (backend == "flashinfer_mla_fa3" && why.has_value()) {
    EXPECT_NE(why->find("compute capability"), std::string::npos) << *why;
  } else {
    EXPECT_FALSE(why.has_value()) << *why;
  }
}

// configs/mla.json: DeepSeek-V3's latent shape, h_q 16..128 x q_len 1, 2 at four batch x context
// shapes, one experiment each (so the points of one share a latent cache), each point by
// decode-bench's MLA kernel and by FlashInfer's two (flashinfer_mla, flashinfer_mla_fa3), every
// point runnable.
TEST(MlaPresets, MlaPresetSweepsHeadsAndQLenAtFourShapes) {
  const std::vector<Point> points = points_of_preset("mla");
  ASSERT_EQ(points.size(), 96u);
  std::set<std::string> ids, shapes, backends;
  std::set<int> heads, q_lens;
  for (const Point& p : points) {
    SCOPED_TRACE(p.id);
    ids.insert(p.id);
    EXPECT_EQ(p.parameters["attention"], "mla");
    EXPECT_EQ(p.parameters["kv_lora_rank"], 512);
    EXPECT_EQ(p.parameters["rope_dim"], 64);
    EXPECT_EQ(p.parameters["dtype"], "bf16");
    EXPECT_EQ(p.parameters["page_size"], 64);
    heads.insert(p.parameters["heads_q"].get<int>());
    q_lens.insert(p.parameters["q_len"].get<int>());
    shapes.insert(std::to_string(p.parameters["batch"].get<int>()) + "x" + std::to_string(p.parameters["T"].get<int>()));
    backends.insert(p.parameters.value("backend", "decode-bench"));
    EXPECT_FALSE(request_unsupported(KernelKind::flash_decode, p.parameters).has_value());
    expect_runnable(p);
  }
  EXPECT_EQ(ids.size(), points.size());
  EXPECT_EQ(backends, (std::set<std::string>{"decode-bench", "flashinfer_mla", "flashinfer_mla_fa3"}));
  EXPECT_EQ(heads, (std::set<int>{16, 32, 64, 128}));
  EXPECT_EQ(q_lens, (std::set<int>{1, 2}));
  EXPECT_EQ(shapes, (std::set<std::string>{"128x4096", "128x16384", "32x4096", "1x32768"}));
  // Within an experiment only heads_q and q_len change: one latent cache serves all its points.
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i].experiment == points[i - 1].experiment) {
      EXPECT_EQ(points[i].parameters["batch"], points[i - 1].parameters["batch"]);
      EXPECT_EQ(points[i].parameters["T"], points[i - 1].parameters["T"]);
    }
}

// The models preset's MLA experiments run each point by decode-bench and by both FlashInfer kernels.
TEST(MlaPresets, ModelsAndQuickPresetsCarryMlaPoints) {
  int deepseek = 0, kimi = 0, flashinfer = 0, flashinfer_fa3 = 0;
  for (const Point& p : points_of_preset("models")) {
    if (p.experiment == "deepseek_v3") ++deepseek;
    if (p.experiment == "kimi_k2") ++kimi;
    if (p.experiment == "deepseek_v3" || p.experiment == "kimi_k2") {
      SCOPED_TRACE(p.id);
      EXPECT_EQ(p.parameters["attention"], "mla");
      if (p.parameters.value("backend", "decode-bench") == "flashinfer_mla") ++flashinfer;
      if (p.parameters.value("backend", "decode-bench") == "flashinfer_mla_fa3") ++flashinfer_fa3;
      expect_runnable(p);
    }
  }
  EXPECT_EQ(deepseek, 24);
  EXPECT_EQ(kimi, 6);
  EXPECT_EQ(flashinfer, 10);
  EXPECT_EQ(flashinfer_fa3, 10);
  int quick = 0;
  for (const Point& p : points_of_preset("quick"))
    if (p.parameters["attention"] == "mla") {
      ++quick;
      EXPECT_LE(p.parameters["batch"].get<int>() * p.parameters["T"].get<int>(), 8 * 1024) << p.id;
    }
  EXPECT_EQ(quick, 2);
}

}  // namespace
}  // namespace decode_bench::sweeps
