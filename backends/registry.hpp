#pragma once
// The backends this build can measure with, by the `backend` axis value (docs/backends.md): the
// in-tree ones (registry.cpp, one line each) and those loaded at run time from plugin libraries
// (backends/plugin_backend.hpp, `decode-bench sweep --backend-lib`). The list is the axis's
// allowed values; sweeps make one instance of each per device worker.
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/backend.hpp"

namespace decode_bench {

// The `backend` axis's default: this project's own kernels. Points run with it keep the ids they
// had before the axis existed (a default value never enters an id).
inline constexpr std::string_view kDefaultBackend = "decode-bench";

struct BackendEntry {
  std::string name;                                // the axis value; the backend's name() returns the same
  std::function<std::unique_ptr<Backend>()> make;  // a fresh instance (no device work)
};

// In registration order: the in-tree backends first. Entries never move (a deque that only grows),
// so references and names taken from it stay valid while backends are added.
const std::deque<BackendEntry>& registered_backends();
// nullptr when no backend of that name is registered.
const BackendEntry* find_backend(std::string_view name);
std::vector<std::string_view> backend_names();

// Why `name` cannot be a backend's axis value (empty, a character outside letters, digits, '_',
// '-' and '.', which point ids and --set would split on), or empty when it can.
std::string backend_name_error(std::string_view name);

// Adds a backend at run time. Throws std::invalid_argument naming it when its name is invalid or
// already registered. Call before sweeps start (the registry is not locked against workers).
void register_backend(BackendEntry entry);

}  // namespace decode_bench
