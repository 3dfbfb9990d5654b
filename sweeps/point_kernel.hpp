#pragma once
// A point's `kernel` parameter as a KernelKind (harness/kernel_kind.hpp): how sweeps branch on a
// kernel, instead of comparing its name. Unknown names (a runner registered beyond the table, or a
// point missing the key) are nullopt.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/kernel_kind.hpp"

namespace decode_bench::sweeps {

inline std::optional<KernelKind> kernel_of(const nlohmann::json& params) {
  return parse_kernel_kind(params.value("kernel", std::string()));
}
inline bool kernel_is(const nlohmann::json& params, KernelKind kind) { return kernel_of(params) == kind; }

}  // namespace decode_bench::sweeps
