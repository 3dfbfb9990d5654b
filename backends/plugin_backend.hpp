#pragma once
// Backends from shared libraries built outside this tree against the C header
// include/decode_bench/backend.h (docs/backends.md, "Plugins"): the loader that opens a library,
// checks it and adds its backends to the registry (backends/registry.hpp), and the adapter that
// makes one C function table a decode_bench::Backend.
#include <memory>
#include <stdexcept>
#include <string>

#include "decode_bench/backend.h"
#include "harness/backend.hpp"

namespace decode_bench {

// A library that cannot be used as a plugin; the message names the file and what is wrong.
class PluginLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Opens `path` (kept open until exit: its kernels stay registered with the CUDA runtime), checks
// its ABI version and its backends' names, and registers each. Throws PluginLoadError for a
// missing file, a library dlopen refuses, one without the two plugin symbols, another ABI version,
// no backends, an incomplete function table, or a name that is invalid or already registered;
// nothing of that library is registered then. Call before sweeps start.
void load_backend_library(const std::string& path);

// The Backend of one function table, which stays valid while the process runs. Throws
// std::runtime_error when its create() fails.
std::unique_ptr<Backend> make_plugin_backend(const decode_bench_backend& table);

// The C view of a problem (device pointers and host arrays point into `problem`, which must
// outlive it). Throws std::invalid_argument for kernels a plugin is never given.
decode_bench_problem to_c_problem(const AttentionProblem& problem);

}  // namespace decode_bench
