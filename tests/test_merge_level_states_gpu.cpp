// Phase 3 of the shared-prefix decode alone (launch_merge_level_states): random decode and level
// states, merged on the GPU against a float64 fold of the same states (merge_weights), at depths
// 0..4 with missing levels (-1 rows), empty states (LSE -inf), state counts that do not fill a
// block, head dims with and without float4 columns, and an output that does not start on 16 bytes.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "harness/device_buffer.hpp"
#include "kernels/attention_state.hpp"
#include "kernels/shared_prefix.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

struct MergeCase {
  int num_states, max_depth, head_dim, level_rows;
  int o_offset = 0;  // floats of padding before o: 1 leaves rows off 16-byte boundaries
};

void run_merge_case(const MergeCase& c, std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "states " << c.num_states << ", depth " << c.max_depth << ", head dim "
                                  << c.head_dim << ", o offset " << c.o_offset);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-2.f, 2.f), lse_value(-6.f, 6.f);
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::size_t n = static_cast<std::size_t>(c.num_states), d = static_cast<std::size_t>(c.head_dim);
  std::vector<float> o(c.o_offset + n * d), lse(n), level_o(static_cast<std::size_t>(c.level_rows) * d),
      level_lse(c.level_rows);
  for (auto& x : o) x = value(rng);
  for (auto& x : level_o) x = value(rng);
  for (std::size_t i = 0; i < n; ++i) lse[i] = i % 11 == 3 ? ninf : lse_value(rng);  // some empty suffixes
  for (int r = 0; r < c.level_rows; ++r) level_lse[r] = r % 7 == 5 ? ninf : lse_value(rng);
  std::vector<std::int32_t> merge_rows(static_cast<std::size_t>(c.max_depth) * n);
  std::uniform_int_distribution<int> row_of(-1, c.level_rows - 1);  // -1: no level at that depth
  for (auto& r : merge_rows) r = row_of(rng);

  // float64 fold, depth by depth.
  std::vector<double> want_o(n * d), want_lse(n);
  for (std::size_t i = 0; i < n; ++i) {
    double acc = lse[i];
    std::vector<double> x(o.begin() + c.o_offset + i * d, o.begin() + c.o_offset + (i + 1) * d);
    for (int l = 0; l < c.max_depth; ++l) {
      const int r = merge_rows[static_cast<std::size_t>(l) * n + i];
      if (r < 0) continue;
      const MergeWeights<double> w = merge_weights<double>(acc, level_lse[r]);
      for (std::size_t k = 0; k < d; ++k) x[k] = w.weight_a * x[k] + w.weight_b * level_o[r * d + k];
      acc = w.lse;
    }
    want_lse[i] = acc;
    for (std::size_t k = 0; k < d; ++k) want_o[i * d + k] = x[k];
  }

  DeviceBuffer<float> d_o(o), d_lse(lse), d_level_o(level_o), d_level_lse(level_lse);
  DeviceBuffer<std::int32_t> d_rows(merge_rows);
  ASSERT_EQ(launch_merge_level_states(d_o.get() + c.o_offset, d_lse.get(), d_level_o.get(), d_level_lse.get(),
                                      d_rows.get(), c.max_depth, c.num_states, c.head_dim, nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> got_o = d_o.download(), got_lse = d_lse.download();
  for (int k = 0; k < c.o_offset; ++k) EXPECT_EQ(got_o[k], o[k]) << "the padding before o is left alone";
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isinf(want_lse[i])) {
      EXPECT_TRUE(std::isinf(got_lse[i]) && got_lse[i] < 0) << "state " << i;
    } else {
      EXPECT_NEAR(got_lse[i], want_lse[i], 1e-5 * (1 + std::fabs(want_lse[i]))) << "state " << i;
    }
    for (std::size_t k = 0; k < d; ++k)
      worst = std::max(worst, std::fabs(got_o[c.o_offset + i * d + k] - want_o[i * d + k]));
  }
  EXPECT_LE(worst, 1e-5) << "max |o - float64 fold|";
}

TEST(MergeLevelStatesGpu, MatchesTheFloat64FoldAtEveryDepthAndHeadDim) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 4100;
  for (int depth : {0, 1, 2, 4})
    for (int head_dim : {64, 80, 96, 128, 256, 6})
      for (int states : {1, 7, 9, 100}) run_merge_case({states, depth, head_dim, 13}, ++seed);
  // o off a 16-byte boundary: the scalar columns.
  run_merge_case({37, 3, 128, 5, 1}, ++seed);
  run_merge_case({37, 2, 80, 5, 3}, ++seed);
}

TEST(MergeLevelStatesGpu, RefusesDepthsOutsideZeroToFour) {
  DB_REQUIRE_GPU();
  DeviceBuffer<float> buf(64);
  DeviceBuffer<std::int32_t> rows(16);
  EXPECT_EQ(launch_merge_level_states(buf.get(), buf.get(), buf.get(), buf.get(), rows.get(), 5, 1, 16, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_merge_level_states(buf.get(), buf.get(), buf.get(), buf.get(), rows.get(), -1, 1, 16, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace decode_bench
