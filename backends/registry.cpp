#include "backends/registry.hpp"

namespace decode_bench {

// One line per in-tree backend: its `backend` axis value and the factory its own file under
// backends/ defines (backends/CMakeLists.txt compiles every .cpp there; flashinfer's and
// flashinfer_tc's are built by backends/flashinfer/CMakeLists.txt, with or without FlashInfer's
// headers).
#define DECODE_BENCH_BACKENDS(X)                 \
  X("decode-bench", make_decode_bench_backend)   \
  X("flashinfer", make_flashinfer_backend)       \
  X("flashinfer_tc", make_flashinfer_tc_backend)

#define DECODE_BENCH_DECLARE_BACKEND(name, factory) std::unique_ptr<Backend> factory();
DECODE_BENCH_BACKENDS(DECODE_BENCH_DECLARE_BACKEND)
#undef DECODE_BENCH_DECLARE_BACKEND

namespace {

#define DECODE_BENCH_BACKEND_ENTRY(name, factory) BackendEntry{name, &factory},
constexpr BackendEntry kBackends[] = {DECODE_BENCH_BACKENDS(DECODE_BENCH_BACKEND_ENTRY)};
#undef DECODE_BENCH_BACKEND_ENTRY

}  // namespace

std::span<const BackendEntry> registered_backends() { return kBackends; }

const BackendEntry* find_backend(std::string_view name) {
  for (const BackendEntry& b : kBackends)
    if (b.name == name) return &b;
  return nullptr;
}

std::vector<std::string_view> backend_names() {
  std::vector<std::string_view> out;
  for (const BackendEntry& b : kBackends) out.push_back(b.name);
  return out;
}

}  // namespace decode_bench
