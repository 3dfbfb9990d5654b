// The `flashinfer_mla` and `flashinfer_mla_fa3` backends on the host: registered in every build;
// the latent cache as FlashInfer's MLA kernel addresses it (backends/flashinfer/
// flashinfer_mla_layout.hpp, header-only, so checked in every build); with FlashInfer's headers,
// what flashinfer_mla takes and the sentence for what it does not, plan() refusing before any
// device work; the FA3 backend's reason. The runs are GPU tests
// (tests/test_flashinfer_mla_backend_gpu.cpp).
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/flashinfer/flashinfer_mla_layout.hpp"
#include "backends/registry.hpp"
#include "flashinfer_build.hpp"
#include "sweeps/point_problem.hpp"
#include "tests/flashinfer_backend_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

using ::decode_bench::testing::flashinfer_built;
using ::decode_bench::testing::reason;

// An MLA point as the pipeline describes it (no memory): DeepSeek-V3's latent, 16 heads, BF16,
// paged at 64, 3 sequences of 100 tokens, with `change` applied.
AttentionProblem mla_point(json change = json::object(), KernelKind kernel = KernelKind::flash_decode) {
  json p = {{"attention", "mla"}, {"kernel", std::string(kernel_name(kernel))},
            {"kv_lora_rank", 512}, {"rope_dim", 64}, {"heads_q", 16}, {"dtype", "bf16"},
            {"layout", "paged"}, {"page_size", 64}, {"batch", 3}, {"T", 100}};
  if (!change.is_null()) p.update(change);  // {} arrives as null
  return describe_point(kernel, p);
}

TEST(FlashInferMlaBackend, BothAreRegisteredUnderTheirNames) {
  for (const char* name : {"flashinfer_mla", "flashinfer_mla_fa3"}) {
    const BackendEntry* entry = find_backend(name);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_EQ(entry->make()->name(), name);
  }
  EXPECT_EQ(find_backend("flashinfer_mla")->make()->version(),
            flashinfer_built() ? flashinfer_build::kVersion : "not built");
  EXPECT_EQ(find_backend("flashinfer_mla_fa3")->make()->version(),
            *flashinfer_build::kMlaFa3NotBuiltReason != '\0' ? "not built" : flashinfer_build::kVersion);
}

// Paged: the pool's table and page stride; ckv and kpe are the two column ranges of a 576-wide row.
TEST(FlashInferMlaLayout, PagedLatentsAreThePoolsPagesWithKpeAfterCkv) {
  const AttentionProblem p = mla_point({{"page_size", 7}, {"T", 20}});
  MlaLatentPages l;
  ASSERT_EQ(mla_latent_pages_reason(p, &l), std::nullopt);
  EXPECT_EQ(l.page_size, 7);
  EXPECT_EQ(l.row_stride, 576);
  EXPECT_EQ(l.page_stride, 7 * 576);
  EXPECT_EQ(l.kpe_offset, 512);
  EXPECT_FALSE(l.slots_as_pages);
  EXPECT_EQ(l.indptr, (std::vector<std::int32_t>{0, 3, 6, 9}));  // ceil(20 / 7) = 3 pages each
  EXPECT_TRUE(l.indices.empty());                                // the pool's own, on the device
}

// Contiguous: one slab of max_len rows per sequence is one page; sequence b is page b.
TEST(FlashInferMlaLayout, ContiguousSlabsArePagesOfMaxLen) {
  const AttentionProblem p = mla_point({{"layout", "contiguous"}, {"T", 100}, {"length_dist", "uniform"}, {"seed", 5}});
  MlaLatentPages l;
  ASSERT_EQ(mla_latent_pages_reason(p, &l), std::nullopt);
  ASSERT_GT(p.max_len, 0);
  EXPECT_EQ(l.page_size, p.max_len);
  EXPECT_EQ(l.page_stride, p.max_len * 576);
  EXPECT_EQ(l.row_stride, 576);
  EXPECT_EQ(l.kpe_offset, 512);
  EXPECT_TRUE(l.slots_as_pages);
  EXPECT_EQ(l.indptr, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(l.indices, (std::vector<std::int32_t>{0, 1, 2}));
  // Every sequence fits its one page.
  for (const std::int32_t len : p.host_seq_lens) EXPECT_LE(len, l.page_size);
}

// FlashInfer keeps strides and the block table's token count in 32 bits.
TEST(FlashInferMlaLayout, WhatThirtyTwoBitsCannotAddressIsNamed) {
  AttentionProblem slab = mla_point({{"layout", "contiguous"}, {"T", 100}});
  slab.max_len = 7'500'000;  // 7.5M x 576 elements > 2^32
  const auto stride = mla_latent_pages_reason(slab);
  ASSERT_TRUE(stride.has_value());
  EXPECT_NE(stride->find("32-bit page stride"), std::string::npos) << *stride;

  AttentionProblem table = mla_point();
  table.host_indptr = {0, 10, 20, 70'000'000};  // 70M pages of 64 tokens > 2^32 tokens
  const auto tokens = mla_latent_pages_reason(table);
  ASSERT_TRUE(tokens.has_value());
  EXPECT_NE(tokens->find("70000000 pages of 64 tokens"), std::string::npos) << *tokens;

  AttentionProblem short_indptr = mla_point();
  short_indptr.host_indptr.pop_back();
  ASSERT_TRUE(mla_latent_pages_reason(short_indptr).has_value());
  EXPECT_TRUE(mla_latent_pages_reason(describe_point(KernelKind::flash_decode, {{"T", 10}})).has_value());  // MHA
}

TEST(FlashInferMlaBackend, WithoutTheHeadersEveryPointHasTheConfiguresReason) {
  if (flashinfer_built()) GTEST_SKIP() << "this build has FlashInfer " << flashinfer_build::kVersion;
  for (const char* name : {"flashinfer_mla", "flashinfer_mla_fa3"})
    EXPECT_EQ(reason(*find_backend(name)->make(), mla_point()),
              "backend " + std::string(name) + " not built: " + flashinfer_build::kNotBuiltReason);
}

TEST(FlashInferMlaBackend, TakesBf16AndFp16LatentsPagedAndContiguousAtQLenOneAndTwo) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer_mla not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer_mla")->make();
  for (const char* dtype : {"bf16", "fp16"})
    for (const char* layout : {"paged", "contiguous"})
      for (const int q_len : {1, 2})
        for (const int heads : {8, 16, 64, 128})
          for (const KernelKind kernel : {KernelKind::flash_decode, KernelKind::batch_decode}) {
            const json change = {{"dtype", dtype}, {"layout", layout}, {"q_len", q_len}, {"heads_q", heads}};
            const AttentionProblem p = mla_point(change, kernel);
            EXPECT_EQ(backend->supports(p), std::nullopt) << change.dump();
            EXPECT_EQ(backend->io_dtype(p), std::string(dtype) == "bf16" ? DType::bf16 : DType::fp16);
          }
  EXPECT_EQ(backend->lse_base(), LseBase::two);
}

TEST(FlashInferMlaBackend, NamesWhatItDoesNotTake) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer_mla not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer_mla")->make();
  const auto says = [&](const AttentionProblem& p, const std::string& part) {
    const std::string why = reason(*backend, p);
    EXPECT_NE(why.find(part), std::string::npos) << "expected '" << part << "' in: " << why;
  };
  says(mla_point({{"dtype", "fp8_e4m3"}}), "dtype fp8_e4m3: the flashinfer_mla backend compiles FlashInfer's MLA "
                                           "kernel for bf16 and fp16 latents");
  says(mla_point({{"kv_lora_rank", 256}}), "kv_lora_rank 256, rope_dim 64: FlashInfer's MLA kernel is compiled here "
                                           "for 512 and 64");
  says(mla_point({{"rope_dim", 32}}), "kv_lora_rank 512, rope_dim 32");
  says(mla_point({{"blocks", 4}}), "blocks 4: FlashInfer's MLAPlan chooses its own splits");
  says(mla_point({}, KernelKind::baseline), "kernel baseline: FlashInfer's MLA decode runs for kernel flash_decode or "
                                            "batch_decode");
  says(mla_point({{"T", 1}, {"q_len", 2}}), "sequence 0 has 1 tokens, fewer than q_len 2");
  // An MHA point: FlashInfer's MHA backends are the other two.
  says(describe_point(KernelKind::flash_decode, {{"T", 64}, {"dtype", "fp16"}}),
       "attention mha: the flashinfer_mla backend runs FlashInfer's MLA decode");
  // The MHA backends point at this one for MLA.
  for (const char* mha : {"flashinfer", "flashinfer_tc"}) {
    const std::string why = reason(*find_backend(mha)->make(), mla_point());
    EXPECT_NE(why.find("its MLA decode is the flashinfer_mla backend"), std::string::npos) << mha << ": " << why;
  }
}

// plan() refuses what supports() refuses, and an io dtype other than the latents', before any
// device call (there is no device here).
TEST(FlashInferMlaBackend, PlanRefusesBeforeAnyDeviceWork) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer_mla not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer_mla")->make();
  struct NoWorkspace final : Workspace {
    void* allocate(std::size_t) override { throw std::logic_error("allocate called"); }
    cudaStream_t stream() const override { return nullptr; }
  } ws;
  AttentionProblem fp8 = mla_point({{"dtype", "fp8_e4m3"}});
  EXPECT_THROW(backend->plan(fp8, ws), std::invalid_argument);
  AttentionProblem fp32_io = mla_point();
  fp32_io.io_dtype = DType::fp32;
  try {
    backend->plan(fp32_io, ws);
    ADD_FAILURE() << "plan took fp32 q and o";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("reads q and writes o in bf16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(backend->run(nullptr), cudaErrorNotReady);  // nothing planned
}

// flashinfer_mla_fa3: where its kernel is not in the build, the configure's reason for every point;
// where it is, flashinfer_mla's refusals under its own name, and on a machine whose device is not
// compute capability 9.0 (or that has none, as here in CI) the reason its sm_90a code cannot run.
// plan() refuses alike, before any device work.
TEST(FlashInferMlaBackend, Fa3BackendNamesWhyItCannotRun) {
  const auto fa3 = find_backend("flashinfer_mla_fa3")->make();
  struct NoWorkspace final : Workspace {
    void* allocate(std::size_t) override { throw std::logic_error("allocate called"); }
    cudaStream_t stream() const override { return nullptr; }
  } ws;
  const std::string not_built = flashinfer_build::kMlaFa3NotBuiltReason;
  if (!not_built.empty()) {
    EXPECT_EQ(reason(*fa3, mla_point()), "backend flashinfer_mla_fa3 not built: " + not_built);
    AttentionProblem p = mla_point();
    EXPECT_THROW(fa3->plan(p, ws), std::invalid_argument);
    return;
  }
  const std::string fp8 = reason(*fa3, mla_point({{"dtype", "fp8_e4m3"}}));
  EXPECT_NE(fp8.find("dtype fp8_e4m3: the flashinfer_mla_fa3 backend compiles FlashInfer's MLA kernel for bf16 and "
                     "fp16 latents"),
            std::string::npos)
      << fp8;
  EXPECT_NE(reason(*fa3, mla_point({{"blocks", 4}})).find("blocks 4"), std::string::npos);
  EXPECT_EQ(fa3->lse_base(), LseBase::two);
  EXPECT_FALSE(fa3->denominator_sums_rounded_weights());  // the FP32 weights' sum, as the reference's
  EXPECT_TRUE(find_backend("flashinfer_mla")->make()->denominator_sums_rounded_weights());
  AttentionProblem fp8_point = mla_point({{"dtype", "fp8_e4m3"}});
  EXPECT_THROW(fa3->plan(fp8_point, ws), std::invalid_argument);
  const auto on_device = fa3->supports(mla_point());
  if (on_device.has_value()) {
    EXPECT_NE(on_device->find("compute capability"), std::string::npos) << *on_device;
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
