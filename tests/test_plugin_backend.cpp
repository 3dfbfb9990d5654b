// Backend plugins (backends/plugin_backend.hpp, include/decode_bench/backend.h), host-side, with
// the C test plugins of tests/plugins/test_plugin.c: every refusal of `sweep --backend-lib` (exit 2,
// naming the file and what is wrong), a loaded plugin's backend in the backend axis, --list-axes and
// point ids, and the adapter: the C view of the problem, supports' reason, plan's error message as
// the exception the pipeline records as the point's error, the workspace callback, and an
// exception of the harness's workspace kept out of the plugin's C frames and rethrown.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "backends/plugin_backend.hpp"
#include "backends/registry.hpp"
#include "harness/cuda_check.hpp"
#include "sweeps/axes.hpp"
#include "tests/cli_runner.hpp"
#include "tests/plugin_test_support.hpp"

namespace decode_bench {
namespace {

using testing::run_decode_bench;

const std::string kValid = DECODE_BENCH_TEST_PLUGIN;
const std::string kWrongAbi = DECODE_BENCH_TEST_PLUGIN_WRONG_ABI;
const std::string kNoSymbols = DECODE_BENCH_TEST_PLUGIN_NO_SYMBOLS;
const std::string kClash = DECODE_BENCH_TEST_PLUGIN_CLASH;
const std::string kEmptyName = DECODE_BENCH_TEST_PLUGIN_EMPTY_NAME;
const std::string kBadName = DECODE_BENCH_TEST_PLUGIN_BAD_NAME;

// `sweep --list-axes` with these libraries: a refusal is exit 2 with the file and the reason.
void expect_refused(const std::string& libs, const std::string& file, const std::string& reason) {
  const auto r = run_decode_bench("sweep " + libs + " --list-axes");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("decode-bench: --backend-lib: backend library '" + file + "': " + reason), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("Axes ("), std::string::npos) << "nothing is listed after a refusal: " << r.output;
}

TEST(PluginLoader, RefusesAMissingFile) {
  expect_refused("--backend-lib /no/such/dir/libnothing.so", "/no/such/dir/libnothing.so", "no such file");
}

TEST(PluginLoader, RefusesAFileDlopenCannotLoad) {
  const auto path = std::filesystem::temp_directory_path() / ("decode_bench_not_elf_" + std::to_string(getpid()) + ".so");
  std::ofstream(path) << "not a shared library\n";
  expect_refused("--backend-lib " + path.string(), path.string(), "cannot be loaded: ");
  std::filesystem::remove(path);
}

TEST(PluginLoader, RefusesALibraryWithoutThePluginSymbols) {
  expect_refused("--backend-lib " + kNoSymbols, kNoSymbols,
                 "not a decode-bench backend plugin: it does not export decode_bench_plugin_abi_version and "
                 "decode_bench_plugin_backends (include/decode_bench/backend.h)");
}

TEST(PluginLoader, RefusesAnotherAbiVersion) {
  expect_refused("--backend-lib " + kWrongAbi, kWrongAbi,
                 "plugin ABI version 2, this decode-bench reads version 1 (rebuild it against this decode-bench's "
                 "include/decode_bench/backend.h)");
}

TEST(PluginLoader, RefusesANameAlreadyRegistered) {
  expect_refused("--backend-lib " + kClash, kClash,
                 "backend 'decode-bench' clashes with a backend already registered (in-tree or from an earlier "
                 "--backend-lib)");
  // The same library twice: its backend clashes with itself, named on the second file.
  expect_refused("--backend-lib " + kValid + " --backend-lib " + kValid, kValid,
                 "backend 'host_test_plugin' clashes with a backend already registered");
}

TEST(PluginLoader, RefusesEmptyAndInvalidNames) {
  expect_refused("--backend-lib " + kEmptyName, kEmptyName, "a backend name must not be empty");
  expect_refused("--backend-lib " + kBadName, kBadName,
                 "backend name 'bad/name' has a character outside letters, digits, '_', '-' and '.'");
}

TEST(PluginLoader, ALoadedBackendIsAValueOfTheBackendAxis) {
  const auto axes = run_decode_bench("sweep --backend-lib " + kValid + " --list-axes");
  ASSERT_EQ(axes.exit_code, 0) << axes.output;
  EXPECT_NE(axes.output.find("one of: decode-bench, flashinfer, flashinfer_tc, flashinfer_mla, flashinfer_mla_fa3, "
                             "host_test_plugin;"),
            std::string::npos)
      << axes.output;

  const std::string select = " --preset quick --set kernel=flash_decode --set backend=host_test_plugin --dry-run";
  const auto dry = run_decode_bench("sweep --backend-lib " + kValid + select);
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("/backend=host_test_plugin"), std::string::npos) << "its points name it: " << dry.output;

  const auto without = run_decode_bench("sweep" + select);
  EXPECT_EQ(without.exit_code, 2) << without.output;
  EXPECT_NE(without.output.find("unknown value \"host_test_plugin\""), std::string::npos) << without.output;
}

// A paged GQA problem as the pipeline describes it to supports() (no device memory).
AttentionProblem described_problem(int head_dim) {
  AttentionProblem p;
  p.kernel = KernelKind::batch_decode;
  p.shape = {.heads_q = 8, .heads_kv = 2, .head_dim = head_dim};
  p.batch = 2;
  p.kv_dtype = DType::fp16;
  p.layout = KvLayoutKind::paged;
  p.paged.page_size = 16;
  p.paged.heads_kv = 2;
  p.paged.head_dim = head_dim;
  p.max_len = 100;
  p.host_seq_lens = {100, 37};
  p.host_indptr = {0, 7, 10};
  p.host_last_page_len = {4, 5};
  p.splits = 4;
  return p;
}

class FakeWorkspace final : public Workspace {
 public:
  enum class Mode { give, refuse, throw_cuda };
  explicit FakeWorkspace(Mode mode) : mode_(mode) {}
  void* allocate(std::size_t bytes) override {
    requested += bytes;
    if (mode_ == Mode::refuse) return nullptr;
    if (mode_ == Mode::throw_cuda) throw CudaError(cudaErrorMemoryAllocation, "workspace: out of memory");
    return buffer_;
  }
  cudaStream_t stream() const override { return nullptr; }
  std::size_t requested = 0;

 private:
  Mode mode_;
  alignas(16) unsigned char buffer_[64] = {};
};

std::unique_ptr<Backend> host_test_backend() { return decode_bench::testing::host_test_plugin().make(); }

TEST(PluginBackend, JoinsTheRegistryAndTheBackendAxis) {
  const auto backend = host_test_backend();
  EXPECT_EQ(backend->name(), "host_test_plugin");
  EXPECT_EQ(backend->version(), "0.0.1");
  const auto names = backend_names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], kDefaultBackend) << "the in-tree backends stay first";
  EXPECT_NE(std::find(names.begin(), names.end(), "host_test_plugin"), names.end());
  EXPECT_EQ(sweeps::find_axis("backend")->allowed, names) << "the axis follows the registry";
  EXPECT_THROW(load_backend_library(kValid), PluginLoadError) << "a second load clashes";
}

TEST(PluginBackend, SupportsSeesTheProblemThroughTheCView) {
  const auto backend = host_test_backend();
  EXPECT_EQ(backend->supports(described_problem(64)), std::nullopt);
  EXPECT_EQ(backend->supports(described_problem(128)),
            "head_dim 128: host_test_plugin takes 64 (kernel 3, heads 8/2, batch 2, kv_dtype 1, layout 1, "
            "page_size 16, max_len 100, splits 4, seq_lens[0] 100)");
  AttentionProblem shared = described_problem(64);
  shared.kernel = KernelKind::shared_prefix;
  const auto why = backend->supports(shared);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("kernel shared_prefix: a plugin backend is given no prefix levels"), std::string::npos) << *why;
}

TEST(PluginBackend, APlanErrorIsTheExceptionThePipelineRecords) {
  const auto backend = host_test_backend();
  AttentionProblem p = described_problem(64);
  p.io_dtype = backend->io_dtype(p);
  EXPECT_EQ(p.io_dtype, DType::fp16);
  FakeWorkspace workspace(FakeWorkspace::Mode::give);
  try {
    backend->plan(p, workspace);
    FAIL() << "plan succeeded";
  } catch (const CudaError&) {
    FAIL() << "a plugin's own failure is not a CUDA error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "host_test_plugin computes nothing (batch 2, io_dtype 1, workspace given)");
  }
  EXPECT_EQ(workspace.requested, 64u);

  FakeWorkspace refusing(FakeWorkspace::Mode::refuse);
  try {
    backend->plan(p, refusing);
    FAIL() << "plan succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "plan() returned 7 without a message");
  }
  EXPECT_EQ(backend->run(nullptr), cudaErrorNotReady) << "run's return value is the cudaError_t";
}

TEST(PluginBackend, TheWorkspacesExceptionCrossesBackAsItself) {
  const auto backend = host_test_backend();
  FakeWorkspace throwing(FakeWorkspace::Mode::throw_cuda);
  try {
    backend->plan(described_problem(64), throwing);
    FAIL() << "plan succeeded";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation) << "out of memory keeps the driver's rule (skipped)";
  }
}

TEST(PluginBackend, AnIoDtypeOutsideTheEnumFailsThePlan) {
  const auto backend = host_test_backend();
  AttentionProblem p = described_problem(64);
  p.batch = 3;  // the test plugin answers 42
  EXPECT_EQ(backend->io_dtype(p), DType::fp32);
  FakeWorkspace workspace(FakeWorkspace::Mode::give);
  try {
    backend->plan(p, workspace);
    FAIL() << "plan succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "io_dtype() returned 42, not a decode_bench_dtype");
  }
  EXPECT_EQ(workspace.requested, 0u) << "the plugin's plan is not called";
}

TEST(PluginBackend, TheCViewMirrorsTheProblem) {
  AttentionProblem p = described_problem(128);
  p.layout = KvLayoutKind::contiguous;
  p.kernel = KernelKind::flash_decode;
  p.kv_dtype = DType::bf16;
  int k = 0, v = 0;
  p.contiguous = ContiguousKV<void>{&k, &v, 2 * 100 * 128, 100 * 128, 128};
  const decode_bench_problem c = to_c_problem(p);
  EXPECT_EQ(c.kernel, DECODE_BENCH_KERNEL_FLASH_DECODE);
  EXPECT_EQ(c.layout, DECODE_BENCH_LAYOUT_CONTIGUOUS);
  EXPECT_EQ(c.kv_dtype, DECODE_BENCH_DTYPE_BF16);
  EXPECT_EQ(c.contiguous.k, &k);
  EXPECT_EQ(c.contiguous.v, &v);
  EXPECT_EQ(c.contiguous.slot_stride, 2 * 100 * 128);
  EXPECT_EQ(c.contiguous.head_stride, 100 * 128);
  EXPECT_FLOAT_EQ(c.softmax_scale, 1.f / std::sqrt(128.f));
  EXPECT_EQ(c.host_seq_lens, p.host_seq_lens.data());
  EXPECT_EQ(c.host_indptr[2], 10);
  EXPECT_EQ(c.io_dtype, DECODE_BENCH_DTYPE_FP32);
  p.kernel = KernelKind::cpu_reference;
  EXPECT_THROW(to_c_problem(p), std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench
