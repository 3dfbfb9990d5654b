// The sliding-window pool on the GPU: sequences grown chunk by chunk in a device PagedPool too small
// to hold them whole, releasing the pages behind the window after each chunk (their block-table
// entries become PagedPool::kReleasedPage, their pages go to later chunks and to the other
// sequence), then decoded with gpt-oss's window of 128 and sinks (BF16, 64 q / 8 KV heads, d 64)
// through the pool's batch view (on the short-sequence kernel's long stage, which such a window
// takes) and checked against the float64 variant reference on the source rows: the kernel reads
// only the window's pages. Skipped with the reason where no GPU exists.
#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include <algorithm>
#include <random>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/decode_launch.hpp"
#include "pools/memory_backend.hpp"
#include "pools/windowed_pages.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

using bf16 = __nv_bfloat16;

// Tokens [from, from + n) of a (H_kv, L, D) sequence as the (H_kv, n, D) block append_tokens takes.
std::vector<bf16> chunk_of(const std::vector<bf16>& seq, int heads_kv, std::int64_t len, int d, std::int64_t from,
                           std::int64_t n) {
  std::vector<bf16> out(static_cast<std::size_t>(heads_kv) * n * d);
  for (int h = 0; h < heads_kv; ++h)
    std::copy_n(seq.begin() + (h * len + from) * d, n * d, out.begin() + h * n * d);
  return out;
}

TEST(WindowedPagesGpu, GptOssWindowDecodesFromAPoolThatReleasedBehindIt) {
  DB_REQUIRE_GPU();
  const DecodeShape shape{64, 8, 64};
  const AttentionVariant variant{.window = 128, .sinks = true};
  for (int page : {16, 7}) {
    SCOPED_TRACE("page " + std::to_string(page));
    const std::vector<std::int64_t> lengths = {1013, 300};
    // Room for the windows (at most window_peak_pages each) and one chunk, far from a whole sequence.
    const auto pages = static_cast<std::int32_t>(2 * window_peak_pages(128, page) + 64 / page + 4);
    ASSERT_LT(pages * page, lengths[0]);
    PagedPool pool({.layout = {8, 64, DType::bf16}, .page_size = page, .num_pages = pages, .max_seq_len = 2048,
                    .max_seqs = 2, .page_order = PageOrder::shuffled},
                   make_device_backend());
    std::mt19937_64 rng(77 + page);
    std::vector<std::vector<bf16>> k, v;
    std::vector<SequenceHandle> hs;
    for (std::int64_t len : lengths) {
      k.push_back(testing::random_values<bf16>(8 * len * 64, rng));
      v.push_back(testing::random_values<bf16>(8 * len * 64, rng));
      hs.push_back(pool.admit(nullptr, nullptr, 0));
    }
    // Both grow in turns, 64 tokens at a time, each releasing behind its window after its chunk.
    for (std::int64_t done = 0; done < lengths[0]; done += 64)
      for (std::size_t s = 0; s < hs.size(); ++s) {
        const std::int64_t n = std::min<std::int64_t>(64, lengths[s] - done);
        if (n <= 0) continue;
        const auto kc = chunk_of(k[s], 8, lengths[s], 64, done, n), vc = chunk_of(v[s], 8, lengths[s], 64, done, n);
        pool.append_tokens(hs[s], std::span<const bf16>(kc), std::span<const bf16>(vc), n);
        release_behind_window(pool, hs[s], variant.window);
      }
    for (std::size_t s = 0; s < hs.size(); ++s) {
      ASSERT_EQ(pool.length(hs[s]), lengths[s]);
      ASSERT_EQ(pool.released_pages(hs[s]), (lengths[s] - 128) / page);
      ASSERT_EQ(pool.block_table(hs[s])[0], PagedPool::kReleasedPage);
    }

    const auto batch = pool.batch<bf16>(hs);
    const std::vector<float> q = testing::random_values<float>(2 * 64 * 64, rng, -2.f, 2.f);
    const std::vector<float> sinks = sink_logits(64, 5);
    DeviceBuffer<float> d_q(q), d_o(q.size()), d_lse(2 * 64), d_sinks(sinks);
    d_o.poison();
    d_lse.poison();
    DB_CUDA_CHECK(cudaDeviceSynchronize());  // the poison (legacy stream) before the pool's stream decodes
    DecodeProblem problem{shape, DType::bf16, 2, lengths[0], batch.seq_lens_device, d_q.get(), d_o.get(), d_lse.get()};
    const std::vector<std::int32_t> host_lens(lengths.begin(), lengths.end());
    problem.host_seq_lens = host_lens.data();
    problem.variant = row_attention_variant(variant, d_sinks.get());
    DecodePlan plan;
    ASSERT_EQ(plan_decode<PagedKV<bf16>>(DecodeKernel::flash_decode, problem, {}, &plan), cudaSuccess);
    EXPECT_EQ(plan.path, DecodePath::short_seq);  // a window of 128 tokens: the short kernel's long stage
    DeviceBuffer<std::uint8_t> workspace(plan.workspace_bytes);
    ASSERT_EQ(init_decode_workspace(plan, workspace.get(), pool.stream()), cudaSuccess);
    ASSERT_EQ(run_decode(batch.kv, problem, plan, workspace.get(), pool.stream()), cudaSuccess);
    DB_CUDA_CHECK(cudaStreamSynchronize(pool.stream()));
    const std::vector<float> o = d_o.download(), lse = d_lse.download();
    for (std::size_t s = 0; s < hs.size(); ++s) {
      const auto kv = ContiguousKV<bf16>::make(k[s].data(), v[s].data(), 8, lengths[s], 64);
      const ReferenceOutput ref = reference_decode_variant(
          kv, 0, lengths[s], std::span<const float>(q.data() + s * 64 * 64, 64 * 64), shape, variant, sinks);
      const auto result = verify_decode(std::span<const float>(o.data() + s * 64 * 64, 64 * 64),
                                        std::span<const float>(lse.data() + s * 64, 64), ref, DType::bf16);
      EXPECT_TRUE(result.passed) << "sequence " << s << ": " << result.summary();
    }
  }
}

}  // namespace
}  // namespace decode_bench
