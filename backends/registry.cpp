#include "backends/registry.hpp"

#include <stdexcept>

namespace decode_bench {

// One line per in-tree backend: its `backend` axis value and the factory its own file under
// backends/ defines (backends/CMakeLists.txt compiles every .cpp and .cu there; the FlashInfer
// backends' are built by backends/flashinfer/CMakeLists.txt, with or without FlashInfer's
// headers). Every line ends in a backslash, so a new backend is one inserted line and nothing else
// changes.
#define DECODE_BENCH_BACKENDS(X)                 \
  X("decode-bench", make_decode_bench_backend)   \
  X("flashinfer", make_flashinfer_backend)       \
  X("flashinfer_tc", make_flashinfer_tc_backend) \
  X("flashinfer_mla", make_flashinfer_mla_backend) \
  X("flashinfer_mla_fa3", make_flashinfer_mla_fa3_backend) \
  /* the list ends here */

#define DECODE_BENCH_DECLARE_BACKEND(name, factory) std::unique_ptr<Backend> factory();
DECODE_BENCH_BACKENDS(DECODE_BENCH_DECLARE_BACKEND)
#undef DECODE_BENCH_DECLARE_BACKEND

namespace {

std::deque<BackendEntry>& backends() {
#define DECODE_BENCH_BACKEND_ENTRY(name, factory) BackendEntry{name, &factory},
  static std::deque<BackendEntry> entries{DECODE_BENCH_BACKENDS(DECODE_BENCH_BACKEND_ENTRY)};
#undef DECODE_BENCH_BACKEND_ENTRY
  return entries;
}

}  // namespace

const std::deque<BackendEntry>& registered_backends() { return backends(); }

const BackendEntry* find_backend(std::string_view name) {
  for (const BackendEntry& b : backends())
    if (b.name == name) return &b;
  return nullptr;
}

std::vector<std::string_view> backend_names() {
  std::vector<std::string_view> out;
  for (const BackendEntry& b : backends()) out.push_back(b.name);
  return out;
}

std::string backend_name_error(std::string_view name) {
  if (name.empty()) return "a backend name must not be empty";
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok)
      return "backend name '" + std::string(name) +
             "' has a character outside letters, digits, '_', '-' and '.' (it is a --set value and part of point ids)";
  }
  return {};
}

void register_backend(BackendEntry entry) {
  if (std::string why = backend_name_error(entry.name); !why.empty()) throw std::invalid_argument(why);
  if (find_backend(entry.name) != nullptr)
    throw std::invalid_argument("backend '" + entry.name + "' is already registered");
  if (!entry.make) throw std::invalid_argument("backend '" + entry.name + "' has no factory");
  backends().push_back(std::move(entry));
}

}  // namespace decode_bench
