#pragma once
// The separate split merge of row attention (RowAttentionPlan::separate_merge): after the
// attention kernel wrote every split's partial state, one block per query row folds the row's
// `splits` partials into its output (merge_split_states, kernels/split_merge.cuh). The fused merge
// puts all of a row block's rows on the one SM that finished last: 71 rows x 128 splits of
// Falcon-7B's MQA at 1 x 32K are 2.3 MB of partials read by one block, batch after dependent
// batch, after the stream has ended. Here they are read by 71 blocks at once, a few round trips
// each; the planner weighs the two (kernels/row_merge_model.hpp).
//
// Uniform grid only (a work list's items have their own chunk counts): row r's states are
// r x splits .. r x splits + splits - 1 of the partials (RowBlockWork::partial).
#include <cstdint>

#include "kernels/block_timeline.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/row_attention_common.cuh"
#include "kernels/row_merge_model.hpp"
#include "kernels/split_merge.cuh"

namespace decode_bench::device {

// grid = (num_rows), block = kThreads (separate_merge_threads: 128, or 512 for many splits).
template <int D, int kThreads>
__global__ void __launch_bounds__(kThreads) row_merge_kernel(const RowAttentionArgs args) {
  dependent_grid_wait();  // a dependent launch: the partials are complete and visible after it
  mark_block(args.timeline, BlockMark::start);
  const std::int64_t row = blockIdx.x;
  const std::int64_t first = row * args.splits;
  merge_split_states<D, kThreads>(args.partial_o + first * args.head_dim, args.partial_lse + first,
                                               args.splits, args.o + row * args.head_dim, args.lse + row,
                                               args.head_dim);
  mark_block(args.timeline, BlockMark::end);
}

}  // namespace decode_bench::device
