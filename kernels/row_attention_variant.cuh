#pragma once
// Device side of the attention variants in the tensor-core row kernel (row_attention_mma.cuh,
// kVariant): where a variant item's block works, where its rows' q and outputs live, and which
// tokens each row sees. Definitions: kernels/attention_variant.hpp; the kernel's plain
// instantiations include none of this in their code (every use sits behind `if constexpr`).
//
// A variant item is one KV head g of one sequence b of length L, with group x q_len rows: row v of
// the item is query token i = v / group (position L - q_len + i) and query head g x group + v % group
// (kernels/row_attention_variant.hpp). Its q and output row in the (B, q_len, H_q) arrays is
// (b x q_len + i) x H_q + g x group + v % group. The item's token range starts at the first position
// its first token sees (a window reads only the window: L - q_len - window + 1 on), so splits and
// tiles cover only that; a row's own visible range [lo, hi) masks the tiles at both edges.
//
// Explicit items (RowAttentionArgs::items set: the shared prefix's level items) take the soft-cap
// alone: one query row each, row r's o and lse at row r and its q at row_q[r] as in the plain
// kernel (the q load reads the row map itself; identity without one), no window, no sink
// (row_attention_unsupported_reason refuses the rest). Each row then sees [0, item end), which
// covers the item's range [token_begin, token_end): nothing inside it is masked.
#include <climits>
#include <cstdint>

#include "kernels/attention_variant.hpp"
#include "kernels/row_attention_common.cuh"
#include "kernels/row_attention_variant.hpp"
#include "kernels/tanh_approx.cuh"

namespace decode_bench::device {

// The uniform grid's block work for variant decode items (no work list: the planner never lays one
// out for a variant). Block (item x row_blocks + rb, split) as locate_block_work.
template <int kTile>
__device__ __forceinline__ RowBlockWork locate_variant_block_work(const RowAttentionArgs& a,
                                                                  const RowAttentionVariant& v) {
  if (a.items != nullptr) return locate_block_work<kTile>(a);  // explicit items: the plain grid (entries nullptr)
  RowBlockWork w;
  const int unit = blockIdx.x / a.row_blocks;
  w.row_block = blockIdx.x - unit * a.row_blocks;
  w.item_index = unit;
  const int seq = unit / a.heads_kv, h = unit - seq * a.heads_kv;
  const int rows = variant_rows_per_item(a.group, v.q_len);
  const std::int64_t len = a.seq_lens[seq];
  w.item = {seq, h, unit * rows, (unit + 1) * rows, visible_range(len, v.q_len, 0, v.window).begin, len};
  w.split = blockIdx.y;
  w.splits = a.splits;
  w.partial = static_cast<std::int64_t>(w.item.row_begin) * a.splits;
  split_range<kTile>(w.item, w.split, w.splits, w.t_begin, w.t_end);
  return w;
}

// The merge's and the epilogue's view of a variant item's rows (PlainRowOutput's interface).
struct VariantRowOutput {
  static constexpr bool kActive = true;
  int seq = 0, kv_head = 0, row_begin = 0, group = 1, q_len = 1, heads_q = 1;
  const float* sinks = nullptr;

  // The item row's query token.
  __device__ __forceinline__ int token(int r) const { return (r - row_begin) / group; }
  // Its row of q, o and lse, (B, q_len, H_q).
  __device__ __forceinline__ int row(int r) const {
    const int v = r - row_begin, i = v / group;
    return (seq * q_len + i) * heads_q + kv_head * group + (v - i * group);
  }
  // Its sink logit (natural log), -inf without sinks.
  __device__ __forceinline__ float sink(int r) const {
    return sinks == nullptr ? -INFINITY : sinks[kv_head * group + (r - row_begin) % group];
  }
};

__device__ __forceinline__ VariantRowOutput variant_row_output(const RowAttentionArgs& a, const RowAttentionVariant& v,
                                                               const ItemView& item) {
  VariantRowOutput o;
  o.seq = item.seq;
  o.kv_head = item.kv_head;
  o.row_begin = item.row_begin;
  o.group = a.group;
  o.q_len = v.q_len;
  o.heads_q = a.heads_q;
  o.sinks = v.sinks;
  if (a.items != nullptr) {
    // Explicit items: outputs at identity rows, query token 0, from the fields alone (a group above
    // every row index makes i = 0 and v = r), so the per-row maps above keep their code. No sinks.
    o.seq = 0;
    o.kv_head = 0;
    o.row_begin = 0;
    o.group = INT_MAX;
    o.heads_q = 0;
  }
  return o;
}

// The positions [lo, hi) item row r sees (past q_len's rows, padding: the last token's).
struct RowVisible {
  int lo, hi;
};
__device__ __forceinline__ RowVisible row_visible(const VariantRowOutput& out, const RowAttentionVariant& v,
                                                  const ItemView& item, int r) {
  const int i = min(out.token(r), v.q_len - 1);
  const VisibleRange vr = visible_range(item.token_end, v.q_len, i, v.window);
  return {static_cast<int>(vr.begin), static_cast<int>(vr.end)};
}

// A soft-capped score in the kernel's log2 domain: s2 = s x log2(e), so cap x tanh(s / cap) becomes
// c2 x tanh(s2 / c2) with c2 = cap x log2(e) (cap_log2), inv_cap_log2 = 1 / c2; s2 is the true logit
// (FP8: after the K scale). One MUFU tanh (kernels/tanh_approx.cuh): a relative error of about 2^-11
// in the capped logit, which FP16 / BF16's verification tolerance holds; FP8 points with a cap have
// a tolerance of their own, 4e-3 (harness/verify.hpp; docs/kernels/rows_mma.md, "Attention
// variants"; the variants have no FP32 instantiation).
__device__ __forceinline__ float soft_cap_log2(float s2, float cap_log2, float inv_cap_log2) {
  return cap_log2 * tanh_approx(s2 * inv_cap_log2);
}

}  // namespace decode_bench::device
