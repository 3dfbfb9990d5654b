// The `flashinfer_tc` backend on the host: registered in every build; with FlashInfer's headers,
// what it takes (every GQA group, FP16 and BF16, head dims 64, 128 and 256, paged and contiguous,
// the cascade over a shared-prefix batch) and the sentence for what it does not; plan() refusing before any device
// work. The runs are GPU tests (tests/test_flashinfer_tc_backend_gpu.cpp).
#include <stdexcept>
#include <string>
#include <string_view>

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

// A shared-prefix batch of 6 sequences: 40 shared tokens (2 pages and a partial one), 16 more
// shared by each of 4 groups (sizes 2, 2, 1, 1: two depth-1 levels), 8 own tokens each.
AttentionProblem shared_batch(json change = {}) {
  json p = {{"layout", "paged"},     {"page_size", 16},        {"batch", 6},     {"prefix_len", 40},
            {"group_prefix_len", 16}, {"groups", 4},            {"suffix_len", 8}, {"prefix_overlap", false}};
  if (!change.is_null()) p.update(change);
  return described(p, KernelKind::shared_prefix);
}

TEST(FlashInferTcBackend, TakesEveryGqaGroupInFp16AndBf16) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer_tc")->make();
  for (const json& heads : {json{{"heads_q", 32}, {"heads_kv", 8}}, json{{"heads_q", 28}, {"heads_kv", 4}},
                            json{{"heads_q", 20}, {"heads_kv", 4}}, json{{"heads_q", 48}, {"heads_kv", 4}},
                            json{{"heads_q", 32}, {"heads_kv", 1}}, json{{"heads_q", 8}, {"heads_kv", 8}}}) {
    for (const char* dtype : {"fp16", "bf16"}) {
      for (const json& layout : {json{{"layout", "contiguous"}, {"batch", 3}}, json{{"layout", "contiguous"}},
                                 json{{"layout", "paged"}, {"page_size", 16}, {"batch", 4}}}) {
        json point = heads;
        point.update(layout);
        point["dtype"] = dtype;
        const AttentionProblem p = described(point);
        EXPECT_EQ(backend->supports(p), std::nullopt) << point.dump();
        EXPECT_EQ(backend->io_dtype(p), std::string_view(dtype) == "bf16" ? DType::bf16 : DType::fp16);
      }
    }
  }
  EXPECT_EQ(backend->supports(described({{"layout", "paged"}, {"page_size", 16}, {"prefix_len", 32}, {"suffix_len", 8}},
                                        KernelKind::batch_decode)),
            std::nullopt);
  EXPECT_EQ(backend->supports(described({{"head_dim", 64}, {"heads_q", 71}, {"heads_kv", 1}})), std::nullopt);
  EXPECT_EQ(backend->supports(described({{"head_dim", 256}, {"heads_q", 16}, {"heads_kv", 16}})), std::nullopt);
}

TEST(FlashInferTcBackend, NamesWhatItDoesNotTake) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer_tc")->make();
  EXPECT_EQ(reason(*backend, described({{"dtype", "fp32"}})), "dtype fp32: the flashinfer_tc backend runs fp16 and bf16");
  EXPECT_EQ(reason(*backend, described({{"dtype", "fp8_e4m3"}})),
            "dtype fp8_e4m3: the flashinfer_tc backend runs fp16 and bf16");
  EXPECT_EQ(reason(*backend, described({{"head_dim", 96}})),
            "FlashInfer's batch prefill: head_dim 96: the FlashInfer prefill launchers are compiled for head_dim 64, 128 "
            "and 256");
  EXPECT_EQ(reason(*backend, described({{"blocks", 4}})), "blocks 4: FlashInfer's plan chooses its own splits");
  EXPECT_NE(reason(*backend, described({}, KernelKind::baseline)).find("kernel baseline"), std::string::npos);
  AttentionProblem empty = described({{"batch", 2}});
  empty.host_seq_lens = {64, 0};
  EXPECT_EQ(reason(*backend, empty), "sequence 1 has no token: FlashInfer's decode needs at least one per sequence");
}

TEST(FlashInferTcBackend, TakesTheCascadeOverConsecutiveLevelsOnOneStream) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const auto backend = find_backend("flashinfer_tc")->make();
  const AttentionProblem p = shared_batch();
  ASSERT_TRUE(p.prefix.has_value());
  ASSERT_EQ(p.prefix->max_depth(), 2);
  EXPECT_EQ(backend->supports(p), std::nullopt);
  EXPECT_EQ(backend->supports(shared_batch({{"dtype", "bf16"}, {"heads_q", 28}, {"heads_kv", 4}})), std::nullopt);
  EXPECT_EQ(backend->supports(shared_batch({{"group_prefix_len", 0}, {"groups", 1}})), std::nullopt);

  EXPECT_EQ(reason(*backend, shared_batch({{"prefix_overlap", true}})),
            "prefix_overlap true: FlashInfer's cascade runs its steps in order on one stream (set prefix_overlap false)");
  // Depth-1 levels over sequences 0-1 and 3-4: sequence 2 between them reads none, so the
  // queries of one batch prefill are not consecutive rows.
  AttentionProblem gap = p;
  gap.prefix->levels.clear();
  gap.prefix->levels.push_back({1, 48, 64, 0, 2});
  gap.prefix->levels.push_back({1, 48, 64, 3, 2});
  EXPECT_EQ(reason(*backend, gap),
            "the depth-1 levels share sequences that are not consecutive (sequence 2 has none): FlashInfer's batch "
            "prefill reads the queries of its requests as consecutive rows");
  // FlashInfer's merge block holds heads x head_dim / 8 threads: 33 heads at head dim 256 are too many.
  EXPECT_EQ(reason(*backend, shared_batch({{"head_dim", 256}, {"heads_q", 33}, {"heads_kv", 1}})),
            "FlashInfer's MergeStateInPlace: heads 33: FlashInfer's merge runs a block of heads x 32 threads at "
            "head_dim 256, so 1 .. 32");
  AttentionProblem no_own = p;
  no_own.prefix->lengths[3] = static_cast<std::int32_t>(no_own.prefix->suffix_begin[3]);
  EXPECT_EQ(reason(*backend, no_own), "sequence 3 has no token of its own: the cascade's suffix step needs one");
}

// plan() refuses what supports() refuses, and q / o in another dtype than it asked for.
TEST(FlashInferTcBackend, PlanRefusesBeforeAnyDeviceWork) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  struct NoWorkspace final : Workspace {
    void* allocate(std::size_t) override { throw std::logic_error("allocated"); }
    cudaStream_t stream() const override { return nullptr; }
  } workspace;
  const auto backend = find_backend("flashinfer_tc")->make();
  AttentionProblem d96 = described({{"head_dim", 96}});
  d96.io_dtype = DType::fp16;
  EXPECT_THROW(backend->plan(d96, workspace), std::invalid_argument);
  AttentionProblem fp16_io_for_bf16 = described({{"dtype", "bf16"}});
  fp16_io_for_bf16.io_dtype = DType::fp16;
  EXPECT_THROW(backend->plan(fp16_io_for_bf16, workspace), std::invalid_argument);
  AttentionProblem overlap = shared_batch({{"prefix_overlap", true}});
  overlap.io_dtype = DType::fp16;
  EXPECT_THROW(backend->plan(overlap, workspace), std::invalid_argument);
  EXPECT_EQ(backend->run(nullptr), cudaErrorNotReady);  // nothing planned
}

}  // namespace
}  // namespace decode_bench::sweeps
