// The backend registry and the `backend` axis, host-side: the axis allows exactly the registered
// backends and names them in --list-axes and in the error for an unknown one (exit 2); a point of
// the default backend keeps the id it had before the axis existed, another backend enters the id
// after the kernel; the decode-bench backend's support rule is the one the decode points report.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/decode_bench_support.hpp"
#include "backends/registry.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/point_problem.hpp"
#include "tests/cli_runner.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

TEST(BackendRegistry, EveryEntryMakesTheBackendItNames) {
  ASSERT_FALSE(registered_backends().empty());
  for (const BackendEntry& entry : registered_backends()) {
    const auto backend = entry.make();
    ASSERT_NE(backend, nullptr) << entry.name;
    EXPECT_EQ(backend->name(), entry.name);
    EXPECT_FALSE(backend->version().empty()) << entry.name;
    EXPECT_EQ(find_backend(entry.name), &entry);
  }
  EXPECT_NE(find_backend(kDefaultBackend), nullptr) << "the default backend is registered";
  EXPECT_EQ(find_backend("no-such-backend"), nullptr);
  // The in-tree backends, first and in registry.cpp's order (plugins a test of this process loaded
  // come after them: tests/test_plugin_backend.cpp).
  const auto names = backend_names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string_view>(names.begin(), names.begin() + 3),
            (std::vector<std::string_view>{"decode-bench", "flashinfer", "flashinfer_tc"}));
}

TEST(BackendAxis, AllowsTheRegisteredBackendsAndStaysOutOfDefaultIds) {
  const AxisDef* axis = find_axis("backend");
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->allowed, backend_names());
  EXPECT_EQ(axis->default_value, std::string(kDefaultBackend));
  EXPECT_FALSE(axis->always_in_id);
  // Right after `kernel` in the table: the order of keys in ids.
  EXPECT_EQ(axis_table()[0].name, "kernel");
  EXPECT_EQ(axis_table()[1].name, "backend");
}

TEST(BackendAxis, GpuPointsRecordTheirBackendAndOnlyAnotherOneEntersTheId) {
  const json preset = testing::one_experiment({{"kernel", {"flash_decode", "shared_prefix", "cpu_reference", "capacity"}}},
                                              {{"T", 64}, {"layout", "paged"}});
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 4u);
  for (const Point& p : plan.points) {
    const std::string kernel = p.parameters["kernel"];
    const bool gpu = kernel == "flash_decode" || kernel == "shared_prefix";
    EXPECT_EQ(p.parameters.contains("backend"), gpu) << p.id;
    if (gpu) {
      EXPECT_EQ(p.parameters["backend"], "decode-bench") << p.id;
    }
    EXPECT_EQ(p.id.find("backend="), std::string::npos) << "the default backend is not in the id: " << p.id;
  }
  EXPECT_EQ(plan.points[0].id, "e/kernel=flash_decode/layout=paged/dtype=fp16/T=64/page_size=16");

  ValidationContext ctx;
  ctx.registered_backends = {"other"};
  const Plan other = testing::plan_of(testing::one_experiment({{"backend", {"decode-bench", "other"}}}, {{"T", 64}}), {}, ctx);
  EXPECT_EQ(testing::ids_of(other.points),
            (std::vector<std::string>{"e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=64",
                                      "e/kernel=flash_decode/backend=other/layout=contiguous/dtype=fp16/T=64"}));
}

TEST(BackendAxis, AnUnknownBackendIsAConfigErrorListingTheRegisteredOnes) {
  const auto errors = testing::plan_errors(testing::one_experiment({{"backend", "no-such-backend"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "experiments[0].axes.backend");
  // A prefix: plugins loaded by another test of this process follow the in-tree names.
  EXPECT_EQ(errors[0].message.rfind("unknown value \"no-such-backend\" (one of: decode-bench, flashinfer, flashinfer_tc", 0), 0u)
      << errors[0].message;
}

TEST(BackendCli, ListAxesShowsTheBackendsAndAnUnknownOneExitsTwo) {
  const auto axes = ::decode_bench::testing::run_decode_bench("sweep --list-axes");
  EXPECT_EQ(axes.exit_code, 0) << axes.output;
  // The name column is as wide as the longest axis name.
  const std::size_t backend_row = axes.output.find("\n  backend ");
  ASSERT_NE(backend_row, std::string::npos) << axes.output;
  const std::size_t row_end = axes.output.find('\n', backend_row + 1);
  EXPECT_NE(axes.output.substr(backend_row, row_end - backend_row)
                .find(" one of: decode-bench, flashinfer, flashinfer_tc, flashinfer_mla, "
                       "flashinfer_mla_fa3; default decode-bench"),
            std::string::npos)
      << axes.output;
  const auto bad = ::decode_bench::testing::run_decode_bench("sweep --dry-run --preset ci-smoke --set backend=no-such-backend");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--set backend[0]: unknown value \"no-such-backend\" (one of: decode-bench, flashinfer, "
                            "flashinfer_tc, flashinfer_mla, flashinfer_mla_fa3)"),
            std::string::npos)
      << bad.output;
  // Naming the default changes nothing: the same points, the same ids.
  const auto plain = ::decode_bench::testing::run_decode_bench("sweep --dry-run --preset ci-smoke");
  const auto named = ::decode_bench::testing::run_decode_bench("sweep --dry-run --preset ci-smoke --set backend=decode-bench");
  EXPECT_EQ(named.exit_code, 0) << named.output;
  EXPECT_EQ(named.output, plain.output);
}

// The backend's rule is what a decode point reports as its skip reason (sweeps/decode_point.hpp).
TEST(DecodeBenchBackend, SupportsIsTheDecodePointRule) {
  const auto backend = find_backend(kDefaultBackend)->make();
  for (const json& change : {json{{"kernel", "baseline"}, {"dtype", "fp8_e4m3"}}, json{{"head_dim", 72}},
                             json{{"heads_q", 3}, {"heads_kv", 1}, {"dtype", "fp32"}},
                             json{{"kernel", "baseline"}, {"heads_q", 3}}, json{{"heads_q", 32}, {"heads_kv", 8}}}) {
    json p = {{"kernel", "flash_decode"}, {"layout", "contiguous"}, {"dtype", "fp16"}, {"T", 64}};
    p.update(change);
    const KernelKind kernel = *parse_kernel_kind(p["kernel"].get<std::string>());
    EXPECT_EQ(backend->supports(describe_point(kernel, p)), decode_point_unsupported(p)) << p.dump();
  }
  AttentionProblem no_prefix = describe_point(KernelKind::flash_decode, json{{"T", 64}});
  no_prefix.kernel = KernelKind::shared_prefix;
  const auto why = backend->supports(no_prefix);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("prefix_len > 0"), std::string::npos) << *why;
}

// The described problem: host CSR and last-page lengths as the pools lay sequences out, the
// levels of a shared-prefix batch, the requests; no device pointer.
TEST(DescribePoint, HostLayoutLevelsAndRequests) {
  const json paged = {{"kernel", "flash_decode"}, {"layout", "paged"}, {"page_size", 16}, {"batch", 3},
                      {"T", 33},                  {"blocks", 4},       {"heads_q", 8},      {"heads_kv", 2}};
  const AttentionProblem p = describe_point(KernelKind::flash_decode, paged);
  EXPECT_EQ(p.batch, 3);
  EXPECT_EQ(p.layout, KvLayoutKind::paged);
  EXPECT_EQ(p.host_seq_lens, (std::vector<std::int32_t>{33, 33, 33}));
  EXPECT_EQ(p.host_indptr, (std::vector<std::int32_t>{0, 3, 6, 9}));
  EXPECT_EQ(p.host_last_page_len, (std::vector<std::int32_t>{1, 1, 1}));
  EXPECT_EQ(p.paged.page_size, 16);
  EXPECT_EQ(p.splits, 4);
  EXPECT_FALSE(p.prefix.has_value());
  EXPECT_EQ(p.q, nullptr);
  EXPECT_EQ(p.paged.k, nullptr);

  const json shared = {{"kernel", "shared_prefix"}, {"layout", "paged"}, {"page_size", 16}, {"batch", 4},
                       {"prefix_len", 40},          {"suffix_len", 8},   {"T", 48},         {"prefix_overlap", false}};
  EXPECT_FALSE(request_unsupported(KernelKind::shared_prefix, shared).has_value());
  const AttentionProblem s = describe_point(KernelKind::shared_prefix, shared);
  ASSERT_TRUE(s.prefix.has_value());
  ASSERT_EQ(s.prefix->levels.size(), 1u);
  EXPECT_EQ(s.prefix->levels[0].token_end, 32);  // page-aligned: the partial third page is copied per sequence
  EXPECT_EQ(s.host_last_page_len, (std::vector<std::int32_t>{16, 16, 16, 16}));
  EXPECT_FALSE(s.prefix_overlap);
  EXPECT_TRUE(is_shared_prefix_batch(KernelKind::batch_decode, shared));
  EXPECT_FALSE(is_shared_prefix_batch(KernelKind::batch_decode, paged));
  EXPECT_EQ(request_unsupported(KernelKind::flash_decode, shared),
            "prefix_len 40: shared-prefix points run under kernel shared_prefix or batch_decode (layout paged)");
}

}  // namespace
}  // namespace decode_bench::sweeps
