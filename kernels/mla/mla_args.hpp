#pragma once
// The arguments every MLA decode kernel takes (the mma.sync kernels of mla_decode.cuh and
// mla_decode_narrow.cuh, the warpgroup-MMA kernel of mla_decode_wgmma.cuh), and the one function
// that fills them from a plan. The split partials' layout is one for all kernels (o per split, then
// lse per split), so one merge (run_mla_merge_splits) combines any kernel's splits.
// q and o are in the MMA's 16-bit type (MlaIo, kernels/mla/mla_decode.hpp): a kernel reads its type
// T's q and writes its o through MlaArgs::q_as<T> and o_as<T>; split partials are FP32.
#include <cstdint>

#include "kernels/host_device.hpp"     // DB_HD
#include "kernels/log2_domain.cuh"     // kLog2eDouble
#include "kernels/mla/mla_decode.hpp"  // MlaDecodePlan
#include "kernels/mla/mla_shape.hpp"

namespace decode_bench {
namespace device {

struct MlaArgs {
  const std::int32_t* seq_lens;
  const void* q;     // (batch, rows, 576) MlaIo
  void* o;           // (batch, rows, 512): the answer (MlaIo), or FP32 split partials (splits x batch first)
  float* lse;        // (batch, rows) or split partials
  int batch, rows, heads_q, q_len;
  int chunk;         // tokens per split (a multiple of the tile)
  float scale_log2;  // softmax_scale x log2(e)
  bool partial;      // write split partials: o + (split x batch + b) x rows x 512, lse likewise
  // cluster_merge: the splits of a row block are one cluster, which folds its blocks' states
  // (kept in shared memory) into o and lse; partial is false.
  bool cluster_merge;
  // fused_merge (else nullptr): the row blocks' counters, and the answer's o (MlaIo) and lse,
  // which the last split block of each row block writes.
  unsigned* split_counters;
  void* final_o;
  float* final_lse;
  // spread_merge (with split_counters): every split block of a row block folds a share of its
  // splits (the grid launched cooperatively: mla_merge_spread), not the last one alone; two
  // counters a row block.
  bool spread_merge;
  template <class Io>
  DB_HD const Io* q_as() const { return static_cast<const Io*>(q); }
  DB_HD float* partial_o() const { return static_cast<float*>(o); }
  template <class Io>
  DB_HD Io* o_as() const { return static_cast<Io*>(o); }
};

}  // namespace device

// The partials of a split plan in `workspace`: o (splits, batch, rows, 512), then lse (splits, batch,
// rows), then with fused_merge one counter a row block (batch, row_blocks), two with spread_merge.
struct MlaPartials {
  float* o = nullptr;
  float* lse = nullptr;
  unsigned* counters = nullptr;  // fused_merge only
};
inline MlaPartials mla_partials(const MlaDecodePlan& plan, void* workspace) {
  const std::int64_t rows_total = static_cast<std::int64_t>(plan.batch) * plan.rows;
  float* o = static_cast<float*>(workspace);
  float* lse = o + static_cast<std::int64_t>(plan.num_splits) * rows_total * kMlaKernelRank;
  unsigned* counters = plan.fused_merge ? reinterpret_cast<unsigned*>(lse + plan.num_splits * rows_total) : nullptr;
  return {o, lse, counters};
}

// A plan's kernel arguments: the answer written directly without splits or with cluster_merge, the
// partials with other split plans (and with fused_merge the answer too, by each row block's last
// split).
inline device::MlaArgs make_mla_args(const MlaShape& shape, const MlaDecodePlan& plan, const std::int32_t* seq_lens,
                                     const void* q, void* o, float* lse, void* workspace) {
  device::MlaArgs args{};
  args.seq_lens = seq_lens;
  args.q = q;
  args.batch = plan.batch;
  args.rows = plan.rows;
  args.heads_q = shape.heads_q;
  args.q_len = shape.q_len;
  args.chunk = plan.split_tiles * plan.tile_tokens;
  args.scale_log2 = static_cast<float>(shape.softmax_scale * device::kLog2eDouble);
  args.cluster_merge = plan.cluster_merge;
  args.partial = plan.num_splits > 1 && !plan.cluster_merge;
  const MlaPartials part = mla_partials(plan, workspace);
  args.o = args.partial ? part.o : o;
  args.lse = args.partial ? part.lse : lse;
  args.split_counters = args.partial ? part.counters : nullptr;
  args.final_o = args.split_counters != nullptr ? o : nullptr;
  args.final_lse = args.split_counters != nullptr ? lse : nullptr;
  args.spread_merge = args.split_counters != nullptr && plan.spread_merge;
  return args;
}

}  // namespace decode_bench
