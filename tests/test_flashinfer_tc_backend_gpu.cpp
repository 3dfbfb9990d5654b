// The `flashinfer_tc` backend through the sweep's pipeline runner, as `--set backend=flashinfer_tc`
// runs it: decode through FlashInfer's batch prefill kernel at GQA groups its CUDA-core table has
// (4, 1) and lacks (7, 32: MQA), paged over shuffled pages and contiguous (one slot and a batch of
// slots as pages), FP16 and BF16, head dims 64 and 256 besides 128, verified against the float64
// reference; the query tile its plan picks (16 rows up to a group of 16, 64 up to 64, then 128).
// Then FlashInfer's cascade over shared-prefix batches (one level; two levels with unequal groups,
// whose sequences outside a group have longer suffixes; N 4 to 16) verified for both backends that
// take it (flashinfer_tc: suffix through the prefill kernel; flashinfer: its CUDA-core decode).
// Skipped (with the reason) where no GPU exists or FlashInfer is not built.
#include <string>
#include <string_view>
#include <tuple>

#include <gtest/gtest.h>

#include "flashinfer_build.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/flashinfer_backend_test_support.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

json run_point(KernelKind kernel, const std::string& backend, json params) {
  return ::decode_bench::testing::run_backend_point(kernel, backend, std::move(params));
}

void expect_verified(const json& r, std::string_view backend, std::string_view dtype, std::string_view family,
                     std::string_view kv_access) {
  ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
  EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r.dump();
  EXPECT_EQ(r["backend"]["name"], backend);
  EXPECT_EQ(r["backend"]["version"], flashinfer_build::kVersion);
  EXPECT_EQ(r["backend"]["io_dtype"], dtype);
  EXPECT_EQ(r["backend"]["lse_conversion"], "base 2 to natural, host, outside timing");
  EXPECT_EQ(r["plan"]["family"], family) << r["plan"].dump();
  EXPECT_EQ(r["plan"]["kv_access"], kv_access) << r["plan"].dump();
}

using ::decode_bench::testing::flashinfer_built;

TEST(FlashInferTcBackendGpu, DecodeVerifiesAtEveryGroupLayoutAndDtype) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  for (const auto& [heads_q, heads_kv] : {std::pair{32, 8}, std::pair{28, 4}, std::pair{32, 1}, std::pair{8, 8}}) {
    const int group = heads_q / heads_kv;
    // FlashInfer's FA2DetermineCtaTileQ on one query token per request: the packed length is the group.
    const int tile = group <= 16 ? 16 : 64;
    for (const char* dtype : {"fp16", "bf16"}) {
      SCOPED_TRACE("heads " + std::to_string(heads_q) + "/" + std::to_string(heads_kv) + " " + dtype);
      const json base = {{"heads_q", heads_q}, {"heads_kv", heads_kv}, {"dtype", dtype}};
      json one = base;
      one.update({{"layout", "contiguous"}, {"batch", 1}, {"T", 5000}});
      json slots = base;
      slots.update({{"layout", "contiguous"}, {"batch", 3}, {"T", 1000}});
      json paged = base;
      paged.update({{"layout", "paged"}, {"page_size", 16}, {"page_order", "shuffled"}, {"batch", 3}, {"T", 1000}});
      for (const auto& [point, access] : {std::pair{one, "contiguous_as_pages"}, std::pair{slots, "contiguous_as_pages"},
                                          std::pair{paged, "paged"}}) {
        const json r = run_point(KernelKind::flash_decode, "flashinfer_tc", point);
        expect_verified(r, "flashinfer_tc", dtype, "flashinfer_prefill_as_decode", access);
        EXPECT_EQ(r["plan"]["cta_tile_q"], tile) << r["plan"].dump();
        EXPECT_EQ(r["plan"]["requests"], point["batch"]);
      }
    }
  }
  // The other head dims: Falcon-7B's MQA at 64 (71 rows, the 128-row tile) and MHA at 256.
  for (const auto& [head_dim, heads_q, heads_kv, tile] : {std::tuple{64, 71, 1, 128}, std::tuple{256, 16, 16, 16}}) {
    for (const char* dtype : {"fp16", "bf16"}) {
      SCOPED_TRACE("head_dim " + std::to_string(head_dim) + " " + dtype);
      const json paged = {{"head_dim", head_dim}, {"heads_q", heads_q}, {"heads_kv", heads_kv}, {"dtype", dtype},
                          {"layout", "paged"},     {"page_size", 16},    {"batch", 3},           {"T", 1000}};
      const json r = run_point(KernelKind::flash_decode, "flashinfer_tc", paged);
      expect_verified(r, "flashinfer_tc", dtype, "flashinfer_prefill_as_decode", "paged");
      EXPECT_EQ(r["plan"]["cta_tile_q"], tile) << r["plan"].dump();
    }
  }
  // The plain decode of a shared-prefix batch's forked pages.
  const json forked = {{"layout", "paged"}, {"page_size", 16}, {"batch", 4},        {"heads_q", 32},
                       {"heads_kv", 8},     {"prefix_len", 512}, {"suffix_len", 64}};
  expect_verified(run_point(KernelKind::batch_decode, "flashinfer_tc", forked), "flashinfer_tc", "fp16",
                  "flashinfer_prefill_as_decode", "paged");
}

// Shared-prefix batches: N sequences, a prefix of a few pages and a partial one (so the suffix
// starts at its page boundary), and with group_prefix_len a second level over unequal groups.
TEST(FlashInferTcBackendGpu, CascadeVerifiesForBothBackends) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  struct Case {
    int batch;
    int prefix, group_prefix, groups, suffix;
    int depths;
  };
  for (const Case& c : {Case{4, 100, 0, 1, 30, 1}, Case{16, 1000, 0, 1, 200, 1}, Case{6, 70, 50, 4, 21, 2},
                        Case{13, 300, 200, 3, 77, 2}}) {
    for (const char* backend : {"flashinfer_tc", "flashinfer"}) {
      for (const char* dtype : {"fp16", "bf16"}) {
        if (std::string_view(backend) == "flashinfer" && std::string_view(dtype) == "bf16") continue;
        SCOPED_TRACE(std::string(backend) + " " + dtype + " N " + std::to_string(c.batch) + " P " +
                     std::to_string(c.prefix) + " Pg " + std::to_string(c.group_prefix));
        json point = {{"layout", "paged"},         {"page_size", 16},     {"page_order", "shuffled"},
                      {"batch", c.batch},          {"heads_q", 32},       {"heads_kv", 8},
                      {"prefix_len", c.prefix},    {"suffix_len", c.suffix}, {"prefix_overlap", false},
                      {"dtype", dtype}};
        if (c.group_prefix > 0) point.update({{"group_prefix_len", c.group_prefix}, {"groups", c.groups}});
        const json r = run_point(KernelKind::shared_prefix, backend, point);
        expect_verified(r, backend, dtype, "flashinfer_cascade", "paged");
        ASSERT_EQ(r["plan"]["levels"].size(), static_cast<std::size_t>(c.depths)) << r["plan"].dump();
        EXPECT_EQ(r["plan"]["suffix"]["path"],
                  std::string_view(backend) == "flashinfer" ? "cuda_core_decode" : "batch_prefill");
        EXPECT_EQ(r["plan"]["levels"][0]["query_rows"], c.batch);
        EXPECT_EQ(r["plan"]["levels"][0]["requests"], 1);
        // The pipeline's minimum is the unique bytes; the level states and partials come on top.
        EXPECT_GT(r["model"]["extra_bytes"].get<double>(), 0.0) << r["model"].dump();
      }
    }
  }
}

TEST(FlashInferTcBackendGpu, OverlappedCascadeIsSkippedWithTheReason) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const json r = run_point(KernelKind::shared_prefix, "flashinfer_tc",
                           {{"layout", "paged"}, {"page_size", 16}, {"batch", 4}, {"prefix_len", 64}, {"suffix_len", 8}});
  EXPECT_EQ(r.value("status", ""), "skipped") << r.dump();
  EXPECT_EQ(r.value("reason", ""),
            "prefix_overlap true: FlashInfer's cascade runs its steps in order on one stream (set prefix_overlap false)");
}

}  // namespace
}  // namespace decode_bench::sweeps
