#pragma once
// The backends this build can measure with, by the `backend` axis value (docs/backends.md). The
// list is the axis's allowed values; sweeps make one instance of each per device worker.
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "harness/backend.hpp"

namespace decode_bench {

// The `backend` axis's default: this project's own kernels. Points run with it keep the ids they
// had before the axis existed (a default value never enters an id).
inline constexpr std::string_view kDefaultBackend = "decode-bench";

struct BackendEntry {
  std::string_view name;                // the axis value; the backend's name() returns the same
  std::unique_ptr<Backend> (*make)();   // a fresh instance (no device work)
};

std::span<const BackendEntry> registered_backends();
// nullptr when no backend of that name is registered.
const BackendEntry* find_backend(std::string_view name);
std::vector<std::string_view> backend_names();

}  // namespace decode_bench
