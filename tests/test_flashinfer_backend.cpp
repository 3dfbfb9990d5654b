// The `flashinfer` backend on the host (and, for registration and the not-built reason, both
// FlashInfer backends): registered in every build; with FlashInfer's headers, what
// it takes and the sentence for what it does not (FlashInfer's own for GQA group 7); without them,
// every point's reason is the configure's. The runs are GPU tests
// (tests/test_flashinfer_backend_gpu.cpp).
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "flashinfer_build.hpp"
#include "sweeps/point_problem.hpp"
#include "tests/flashinfer_backend_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

using ::decode_bench::testing::described;
using ::decode_bench::testing::flashinfer_built;
using ::decode_bench::testing::reason;


// Both FlashInfer backends, with or without the headers.
constexpr const char* kFlashInferBackends[] = {"flashinfer", "flashinfer_tc"};

TEST(FlashInferBackend, IsRegisteredUnderItsName) {
  for (const char* name : kFlashInferBackends) {
    const BackendEntry* entry = find_backend(name);
    ASSERT_NE(entry, nullptr) << name;
    const auto backend = entry->make();
    EXPECT_EQ(backend->name(), name);
    EXPECT_EQ(backend->version(), flashinfer_built() ? flashinfer_build::kVersion : "not built") << name;
  }
}

TEST(FlashInferBackend, WithoutTheHeadersEveryPointHasTheConfiguresReason) {
  if (flashinfer_built()) GTEST_SKIP() << "this build has FlashInfer " << flashinfer_build::kVersion;
  for (const char* name : kFlashInferBackends) {
    const auto backend = find_backend(name)->make();
    EXPECT_EQ(reason(*backend, described({})),
              "backend " + std::string(name) + " not built: " + flashinfer_build::kNotBuiltReason);
  }
}

TEST(FlashInferBackend, TakesCudaCoreDecodeAndNamesWhatItDoesNot) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer")->make();
  for (const json& ok : {json::object(), json{{"layout", "paged"}, {"page_size", 16}, {"batch", 4}},
                         json{{"heads_q", 8}, {"heads_kv", 8}}, json{{"heads_q", 24}, {"heads_kv", 4}}}) {
    EXPECT_EQ(backend->supports(described(ok)), std::nullopt) << ok.dump();
  }
  EXPECT_EQ(backend->supports(described({{"layout", "paged"}, {"page_size", 16}}, KernelKind::batch_decode)), std::nullopt);
  EXPECT_EQ(backend->io_dtype(described({})), DType::fp16);

  EXPECT_EQ(reason(*backend, described({{"heads_q", 28}, {"heads_kv", 4}})),
            "FlashInfer's CUDA-core decode: Unsupported group_size: 7");
  EXPECT_EQ(reason(*backend, described({{"dtype", "fp32"}})),
            "dtype fp32: FlashInfer's CUDA-core decode reads fp16, bf16 or fp8 K/V");
  EXPECT_NE(reason(*backend, described({{"head_dim", 64}})).find("head_dim 64"), std::string::npos);
  EXPECT_EQ(reason(*backend, described({{"blocks", 4}})), "blocks 4: FlashInfer's plan chooses its own splits");
  EXPECT_NE(reason(*backend, described({}, KernelKind::baseline)).find("kernel baseline"), std::string::npos);
  const json shared = {{"layout", "paged"}, {"page_size", 16}, {"prefix_len", 32}, {"suffix_len", 8}, {"batch", 4}};
  EXPECT_EQ(reason(*backend, described(shared, KernelKind::shared_prefix)),
            "prefix_overlap true: FlashInfer's cascade runs its steps in order on one stream (set prefix_overlap false)");
  json one_stream = shared;
  one_stream["prefix_overlap"] = false;
  EXPECT_EQ(backend->supports(described(one_stream, KernelKind::shared_prefix)), std::nullopt);
  one_stream.update({{"heads_q", 28}, {"heads_kv", 4}});
  EXPECT_EQ(reason(*backend, described(one_stream, KernelKind::shared_prefix)),
            "FlashInfer's CUDA-core decode: Unsupported group_size: 7");
  AttentionProblem empty = described({{"batch", 2}});
  empty.host_seq_lens = {64, 0};
  EXPECT_EQ(reason(*backend, empty), "sequence 1 has no token: FlashInfer's decode needs at least one per sequence");
}

// Every K/V type but FP32, on both layouts: q and o in BF16 for BF16 K/V, in FP16 for FP16 and FP8.
TEST(FlashInferBackend, TakesEachKvTypeWithItsIoType) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer")->make();
  for (const auto& [dtype, io] : {std::pair{"fp16", DType::fp16}, std::pair{"bf16", DType::bf16},
                                  std::pair{"fp8_e4m3", DType::fp16}, std::pair{"fp8_e5m2", DType::fp16}}) {
    for (const json& layout : {json{{"layout", "contiguous"}}, json{{"layout", "paged"}, {"page_size", 16}, {"batch", 4}}}) {
      json change = layout;
      change["dtype"] = dtype;
      const AttentionProblem p = described(change);
      EXPECT_EQ(backend->supports(p), std::nullopt) << change.dump();
      EXPECT_EQ(backend->io_dtype(p), io) << change.dump();
    }
  }
}

// plan() refuses what supports() refuses, and q / o in another dtype than it asked for.
TEST(FlashInferBackend, PlanRefusesBeforeAnyDeviceWork) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  struct NoWorkspace final : Workspace {
    void* allocate(std::size_t) override { throw std::logic_error("allocated"); }
    cudaStream_t stream() const override { return nullptr; }
  } workspace;
  const auto backend = find_backend("flashinfer")->make();
  AttentionProblem group7 = described({{"heads_q", 28}, {"heads_kv", 4}});
  group7.io_dtype = DType::fp16;
  EXPECT_THROW(backend->plan(group7, workspace), std::invalid_argument);
  AttentionProblem fp32_io = described({});
  fp32_io.io_dtype = DType::fp32;
  EXPECT_THROW(backend->plan(fp32_io, workspace), std::invalid_argument);
  // q / o in another 16-bit type than the K/V type's.
  AttentionProblem bf16_as_fp16 = described({{"dtype", "bf16"}});
  bf16_as_fp16.io_dtype = DType::fp16;
  try {
    backend->plan(bf16_as_fp16, workspace);
    ADD_FAILURE() << "planned bf16 K/V with fp16 q/o";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "the flashinfer backend reads q and writes o in bf16 for bf16 K/V, not fp16");
  }
  EXPECT_EQ(backend->run(nullptr), cudaErrorNotReady);  // nothing planned
}

}  // namespace
}  // namespace decode_bench::sweeps
