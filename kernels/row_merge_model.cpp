#include "kernels/row_merge_model.hpp"

#include <algorithm>

namespace decode_bench {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::int64_t fused_merge_round_trips(int rows, int n, int head_dim, int kernel_head_dim, int threads,
                                     std::int64_t scratch_floats) {
  if (n <= 1 || rows <= 0) return 0;
  const std::int64_t cols = head_dim / 4;
  const std::int64_t pairs = rows * cols;
  std::int64_t trips = 1;  // the counter's acquiring add
  if (pairs <= threads) return trips + ceil_div(n, kMergeFoldLoads);
  if (pairs <= 2 * threads && merge_folds_two_pairs(threads, kernel_head_dim))
    return trips + ceil_div(n, kMergeFoldLoads / 2);
  const std::int64_t per_pass = scratch_floats / (n + 2);
  if (per_pass < 1) return trips + rows * (1 + ceil_div(n, 8));  // merge_split_states per row, one after another
  for (std::int64_t first = 0; first < rows; first += per_pass) {
    const std::int64_t pass_rows = std::min<std::int64_t>(per_pass, rows - first);
    trips += ceil_div(ceil_div(pass_rows * n, threads), kMergeLseBatch);
    trips += ceil_div(pass_rows * cols, 2 * static_cast<std::int64_t>(threads)) * ceil_div(n, 4);
  }
  return trips;
}

std::int64_t separate_merge_round_trips(int n, int kernel_head_dim) {
  if (n <= 1) return 0;
  const std::int64_t lanes = std::max(1, separate_merge_threads(n, kernel_head_dim) / std::max(1, kernel_head_dim / 4));
  return 1 + ceil_div(ceil_div(n, lanes), kSeparateMergeBatch);
}

RowMergeChoice choose_row_merge(RowMergeMode mode, int rows, int n, int head_dim, int kernel_head_dim, int threads,
                                std::int64_t scratch_floats, bool dependent_launch) {
  RowMergeChoice c;
  if (n <= 1) return c;
  c.fused_round_trips = fused_merge_round_trips(rows, n, head_dim, kernel_head_dim, threads, scratch_floats);
  c.separate_round_trips = separate_merge_round_trips(n, kernel_head_dim) +
                           (dependent_launch ? kRowMergeDependentLaunchRoundTrips : kRowMergeLaunchRoundTrips);
  c.separate = mode == RowMergeMode::separate ||
               (mode == RowMergeMode::automatic && c.separate_round_trips < c.fused_round_trips);
  return c;
}

}  // namespace decode_bench
