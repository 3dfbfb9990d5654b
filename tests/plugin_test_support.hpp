#pragma once
// The valid C test plugin (tests/plugins/test_plugin.c), loaded into the test process on first use
// and registered from then on (a second load would clash with itself).
#include "backends/plugin_backend.hpp"
#include "backends/registry.hpp"

namespace decode_bench::testing {

inline const BackendEntry& host_test_plugin() {
  if (find_backend("host_test_plugin") == nullptr) load_backend_library(DECODE_BENCH_TEST_PLUGIN);
  return *find_backend("host_test_plugin");
}

}  // namespace decode_bench::testing
