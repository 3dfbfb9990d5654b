// The kernel table (harness/kernel_kind.hpp) is the one list of kernel names: the `kernel` axis
// allows exactly its names, the CLI's registration gives each exactly one runner, and names and
// kinds map one to one.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/kernel_kind.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/builtin_runners.hpp"
#include "sweeps/point_kernel.hpp"

namespace decode_bench::sweeps {
namespace {

std::vector<std::string> table_names() {
  std::vector<std::string> out;
  for (const KernelInfo& k : kernel_kinds()) out.emplace_back(k.name);
  return out;
}

TEST(KernelTable, TheKernelAxisAllowsExactlyTheTablesNames) {
  const AxisDef* axis = find_axis("kernel");
  ASSERT_NE(axis, nullptr);
  std::vector<std::string> allowed(axis->allowed.begin(), axis->allowed.end());
  EXPECT_EQ(allowed, table_names());
  EXPECT_EQ(allowed, (std::vector<std::string>{"cpu_reference", "baseline", "flash_decode", "batch_decode",
                                               "shared_prefix", "capacity", "trace"}));
  EXPECT_EQ(axis->default_value, "flash_decode");
}

TEST(KernelTable, EveryKernelHasExactlyOneRegisteredRunner) {
  RunnerRegistry registry;
  register_builtin_runners(registry);  // the CLI's registration
  EXPECT_EQ(registry.names(), table_names());
  for (const KernelInfo& k : kernel_kinds()) {
    const PointRunner* runner = registry.find(k.name);
    ASSERT_NE(runner, nullptr) << k.name;
    EXPECT_EQ(runner->name(), k.name);
  }
}

TEST(KernelTable, NamesAndKindsMapOneToOne) {
  for (const KernelInfo& k : kernel_kinds()) {
    EXPECT_EQ(parse_kernel_kind(k.name), k.kind) << k.name;
    EXPECT_EQ(kernel_name(k.kind), k.name);
  }
  EXPECT_FALSE(parse_kernel_kind("flash-decode").has_value());
  EXPECT_FALSE(parse_kernel_kind("").has_value());
  EXPECT_EQ(kernel_of(nlohmann::json{{"kernel", "shared_prefix"}}), KernelKind::shared_prefix);
  EXPECT_FALSE(kernel_of(nlohmann::json{{"kernel", "my_kernel"}}).has_value());
  EXPECT_FALSE(kernel_of(nlohmann::json::object()).has_value());
}

TEST(KernelTable, PropertiesFollowTheKernels) {
  EXPECT_FALSE(kernel_splits_k(KernelKind::baseline));
  EXPECT_FALSE(kernel_splits_k(KernelKind::cpu_reference));
  EXPECT_FALSE(kernel_splits_k(KernelKind::capacity));
  EXPECT_TRUE(kernel_splits_k(KernelKind::batch_decode));
  EXPECT_FALSE(kernel_is_timed(KernelKind::capacity));
  EXPECT_TRUE(kernel_is_timed(KernelKind::cpu_reference));
  // A trace times its own steps: the timing axes (cold, end_to_end, counters) do not apply.
  EXPECT_FALSE(kernel_is_timed(KernelKind::trace));
  EXPECT_FALSE(kernel_splits_k(KernelKind::trace));
  std::vector<std::string> through_backend;
  for (const KernelInfo& k : kernel_kinds())
    if (kernel_uses_backend(k.kind)) through_backend.emplace_back(k.name);
  EXPECT_EQ(through_backend, (std::vector<std::string>{"baseline", "flash_decode", "batch_decode", "shared_prefix"}));
}

}  // namespace
}  // namespace decode_bench::sweeps
