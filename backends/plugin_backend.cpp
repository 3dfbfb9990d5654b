// The plugin loader and the adapter from include/decode_bench/backend.h's function table to
// harness/backend.hpp's Backend (docs/backends.md, "Plugins").
#include "backends/plugin_backend.hpp"

#include <dlfcn.h>

#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "harness/kernel_kind.hpp"

namespace decode_bench {
namespace {

decode_bench_dtype to_c_dtype(DType d) {
  switch (d) {
    case DType::fp32: return DECODE_BENCH_DTYPE_FP32;
    case DType::fp16: return DECODE_BENCH_DTYPE_FP16;
    case DType::bf16: return DECODE_BENCH_DTYPE_BF16;
    case DType::fp8_e4m3: return DECODE_BENCH_DTYPE_FP8_E4M3;
    case DType::fp8_e5m2: return DECODE_BENCH_DTYPE_FP8_E5M2;
  }
  return DECODE_BENCH_DTYPE_FP32;
}

std::optional<DType> from_c_dtype(int d) {
  switch (d) {
    case DECODE_BENCH_DTYPE_FP32: return DType::fp32;
    case DECODE_BENCH_DTYPE_FP16: return DType::fp16;
    case DECODE_BENCH_DTYPE_BF16: return DType::bf16;
    case DECODE_BENCH_DTYPE_FP8_E4M3: return DType::fp8_e4m3;
    case DECODE_BENCH_DTYPE_FP8_E5M2: return DType::fp8_e5m2;
    default: return std::nullopt;
  }
}

// A message a plugin wrote into a buffer, or `fallback` when it wrote none.
std::string c_message(const std::vector<char>& buffer, const std::string& fallback) {
  const std::string_view text(buffer.data());  // the buffer's last byte stays NUL (see with_buffer)
  return text.empty() ? fallback : std::string(text);
}

constexpr std::size_t kMessageBytes = 2048;

// The harness's workspace behind the C callback. An exception (CUDA's out-of-memory) cannot cross
// the plugin's C frames: it is kept and rethrown once plan() returns, so the driver's rules apply.
struct WorkspaceBridge {
  Workspace* workspace;
  std::exception_ptr error;

  static void* allocate(void* ctx, std::size_t bytes) {
    auto* self = static_cast<WorkspaceBridge*>(ctx);
    if (self->error) return nullptr;
    try {
      return self->workspace->allocate(bytes);
    } catch (...) {
      self->error = std::current_exception();
      return nullptr;
    }
  }
};

class PluginBackend final : public Backend {
 public:
  explicit PluginBackend(const decode_bench_backend& table) : t_(table), instance_(table.create()) {
    if (instance_ == nullptr) throw std::runtime_error("backend " + std::string(t_.name) + ": create() returned NULL");
  }
  ~PluginBackend() override { t_.destroy(instance_); }
  PluginBackend(const PluginBackend&) = delete;
  PluginBackend& operator=(const PluginBackend&) = delete;

  std::string name() const override { return t_.name; }
  std::string version() const override { return t_.version; }

  std::optional<std::string> supports(const AttentionProblem& p) const override {
    if (p.kernel == KernelKind::shared_prefix)
      return "kernel shared_prefix: a plugin backend is given no prefix levels (plugin ABI version " +
             std::to_string(DECODE_BENCH_BACKEND_ABI_VERSION) + "); kernel batch_decode runs " + name() +
             "'s plain decode of the same pages";
    if (!kernel_uses_backend(p.kernel))
      return "kernel " + std::string(kernel_name(p.kernel)) + " is not computed by a backend";
    if (p.mla)
      return "attention mla: a plugin backend is given no latent cache (plugin ABI version " +
             std::to_string(DECODE_BENCH_BACKEND_ABI_VERSION) + ")";
    if (!p.variant.plain())
      return p.variant.describe() + ": a plugin backend is given no attention variants (plugin ABI version " +
             std::to_string(DECODE_BENCH_BACKEND_ABI_VERSION) + ")";
    const decode_bench_problem c = to_c_problem(p);
    std::vector<char> reason(kMessageBytes, '\0');
    if (t_.supports(instance_, &c, reason.data(), reason.size() - 1) == 0) return std::nullopt;
    return c_message(reason, "backend " + name() + " refused the problem without a reason");
  }

  DType io_dtype(const AttentionProblem& p) const override {
    const decode_bench_problem c = to_c_problem(p);
    const int d = t_.io_dtype(instance_, &c);
    if (auto dtype = from_c_dtype(d)) return *dtype;
    bad_io_dtype_ = d;  // reported by plan(): this call cannot fail the point itself
    return DType::fp32;
  }

  void plan(const AttentionProblem& problem, Workspace& workspace) override {
    plan_json_ = nlohmann::json::object();
    if (bad_io_dtype_) {
      const int d = *bad_io_dtype_;
      bad_io_dtype_.reset();
      throw std::runtime_error("io_dtype() returned " + std::to_string(d) + ", not a decode_bench_dtype");
    }
    problem_ = problem;  // the C view points into this copy's host arrays
    c_ = to_c_problem(problem_);
    WorkspaceBridge bridge{&workspace, nullptr};
    decode_bench_workspace ws{&bridge, &WorkspaceBridge::allocate, workspace.stream()};
    std::vector<char> error(kMessageBytes, '\0');
    const int rc = t_.plan(instance_, &c_, &ws, error.data(), error.size() - 1);
    if (bridge.error) std::rethrow_exception(bridge.error);
    if (rc != 0) throw std::runtime_error(c_message(error, "plan() returned " + std::to_string(rc) + " without a message"));
    const char* text = t_.plan_json(instance_);
    if (text == nullptr) {
      plan_json_ = {{"family", name()}};
      return;
    }
    nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    if (!parsed.is_object())
      throw std::runtime_error("plan_json() is not a JSON object: " + std::string(text).substr(0, 200));
    plan_json_ = std::move(parsed);
  }

  cudaError_t run(cudaStream_t stream) override { return static_cast<cudaError_t>(t_.run(instance_, stream)); }
  nlohmann::json plan_json() const override { return plan_json_; }

 private:
  const decode_bench_backend& t_;
  decode_bench_instance* instance_;
  AttentionProblem problem_;
  decode_bench_problem c_{};
  nlohmann::json plan_json_ = nlohmann::json::object();
  mutable std::optional<int> bad_io_dtype_;
};

// What is wrong with one function table, or empty.
std::string table_error(const decode_bench_backend& t) {
  if (t.name == nullptr) return "a backend has no name";
  if (std::string why = backend_name_error(t.name); !why.empty()) return why;
  std::string missing;
  const auto need = [&](bool present, const char* what) {
    if (!present) missing += std::string(missing.empty() ? "" : ", ") + what;
  };
  need(t.version != nullptr, "version");
  need(t.create != nullptr, "create");
  need(t.destroy != nullptr, "destroy");
  need(t.supports != nullptr, "supports");
  need(t.io_dtype != nullptr, "io_dtype");
  need(t.plan != nullptr, "plan");
  need(t.run != nullptr, "run");
  need(t.plan_json != nullptr, "plan_json");
  return missing.empty() ? std::string() : "backend '" + std::string(t.name) + "' lacks " + missing;
}

}  // namespace

decode_bench_problem to_c_problem(const AttentionProblem& p) {
  decode_bench_problem c{};
  switch (p.kernel) {
    case KernelKind::baseline: c.kernel = DECODE_BENCH_KERNEL_BASELINE; break;
    case KernelKind::flash_decode: c.kernel = DECODE_BENCH_KERNEL_FLASH_DECODE; break;
    case KernelKind::batch_decode: c.kernel = DECODE_BENCH_KERNEL_BATCH_DECODE; break;
    case KernelKind::shared_prefix: c.kernel = DECODE_BENCH_KERNEL_SHARED_PREFIX; break;
    default:
      throw std::invalid_argument("kernel " + std::string(kernel_name(p.kernel)) + " is not computed by a backend");
  }
  c.heads_q = p.shape.heads_q;
  c.heads_kv = p.shape.heads_kv;
  c.head_dim = p.shape.head_dim;
  c.softmax_scale = static_cast<float>(p.shape.softmax_scale());
  c.batch = p.batch;
  c.kv_dtype = to_c_dtype(p.kv_dtype);
  c.layout = p.layout == KvLayoutKind::paged ? DECODE_BENCH_LAYOUT_PAGED : DECODE_BENCH_LAYOUT_CONTIGUOUS;
  c.contiguous = {p.contiguous.k,           p.contiguous.v,       p.contiguous.slot_stride, p.contiguous.head_stride,
                  p.contiguous.head_dim,    p.contiguous.k_scale, p.contiguous.v_scale};
  c.paged = {p.paged.k,        p.paged.v,         p.paged.page_indices, p.paged.indptr,  p.last_page_len,
             p.paged.page_size, p.paged.heads_kv, p.paged.head_dim,     p.paged.k_scale, p.paged.v_scale};
  c.seq_lens = p.seq_lens;
  c.host_seq_lens = p.host_seq_lens.empty() ? nullptr : p.host_seq_lens.data();
  c.host_indptr = p.host_indptr.empty() ? nullptr : p.host_indptr.data();
  c.max_len = p.max_len;
  c.splits = p.splits;
  c.io_dtype = to_c_dtype(p.io_dtype);
  c.q = p.q;
  c.o = p.o;
  c.lse = p.lse;
  return c;
}

std::unique_ptr<Backend> make_plugin_backend(const decode_bench_backend& table) {
  return std::make_unique<PluginBackend>(table);
}

void load_backend_library(const std::string& path) {
  const std::string where = "backend library '" + path + "': ";
  std::error_code ec;
  const std::filesystem::path file(path);
  if (!std::filesystem::exists(file, ec)) throw PluginLoadError(where + "no such file");
  if (std::filesystem::is_directory(file, ec)) throw PluginLoadError(where + "is a directory, not a shared library");
  // An absolute path, so that dlopen never searches the library path for a bare file name. The
  // handle is never closed: the library's kernels stay registered with the CUDA runtime.
  const std::string absolute = std::filesystem::absolute(file, ec).string();
  void* handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw PluginLoadError(where + "cannot be loaded: " + (why ? why : "dlopen failed"));
  }
  auto abi = reinterpret_cast<decode_bench_plugin_abi_version_fn>(dlsym(handle, "decode_bench_plugin_abi_version"));
  auto list = reinterpret_cast<decode_bench_plugin_backends_fn>(dlsym(handle, "decode_bench_plugin_backends"));
  if (abi == nullptr || list == nullptr)
    throw PluginLoadError(where + "not a decode-bench backend plugin: it does not export " +
                          (abi == nullptr ? std::string("decode_bench_plugin_abi_version") : "") +
                          (abi == nullptr && list == nullptr ? " and " : "") +
                          (list == nullptr ? std::string("decode_bench_plugin_backends") : "") +
                          " (include/decode_bench/backend.h)");
  if (const int version = abi(); version != DECODE_BENCH_BACKEND_ABI_VERSION)
    throw PluginLoadError(where + "plugin ABI version " + std::to_string(version) + ", this decode-bench reads version " +
                          std::to_string(DECODE_BENCH_BACKEND_ABI_VERSION) +
                          " (rebuild it against this decode-bench's include/decode_bench/backend.h)");
  int count = 0;
  const decode_bench_backend* tables = list(&count);
  if (tables == nullptr || count <= 0) throw PluginLoadError(where + "decode_bench_plugin_backends() lists no backends");
  // Every table checked before any is registered: a library is taken whole or not at all.
  std::vector<std::string_view> names;
  for (int i = 0; i < count; ++i) {
    if (std::string why = table_error(tables[i]); !why.empty()) throw PluginLoadError(where + why);
    const std::string_view name = tables[i].name;
    if (find_backend(name) != nullptr)
      throw PluginLoadError(where + "backend '" + std::string(name) +
                            "' clashes with a backend already registered (in-tree or from an earlier --backend-lib)");
    for (std::string_view other : names)
      if (other == name) throw PluginLoadError(where + "lists backend '" + std::string(name) + "' twice");
    names.push_back(name);
  }
  for (int i = 0; i < count; ++i) {
    const decode_bench_backend* table = &tables[i];
    register_backend({table->name, [table] { return make_plugin_backend(*table); }});
  }
}

}  // namespace decode_bench
