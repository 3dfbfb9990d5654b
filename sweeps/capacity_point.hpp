#pragma once
// A `kernel = capacity` point's parameters as a pools/capacity.hpp query, read once with the axis
// defaults. The mapping (docs/results.md, "Capacity points"):
//   layout        contiguous | paged                        -> PoolKind
//   T             tokens per sequence (the mean under uniform/zipf; prefix_len + suffix_len with a prefix)
//   fragmentation max_seq_len = ceil(T * fragmentation)     (absent on paged points: 1)
//   length_dist   fixed: every suffix T - prefix_len; uniform: on [1, 2(T - prefix_len) - 1];
//                 zipf: mean T - prefix_len, exponent zipf_alpha. Longer draws are clamped to
//                 max_seq_len - prefix_len, as `decode-bench capacity` does.
//   prefix_len    shared prefix tokens; paged points fork it from one parent, contiguous points
//                 admit each sequence whole (a contiguous fork copies the prefix anyway, and the
//                 parent would take a slot of its own)
//   budget_bytes, page_size, page_order, dtype, heads_kv, head_dim, seed: as named
// heads_q and batch do not change a count (the budget holds K and V only) and are ignored.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "pools/capacity.hpp"

namespace decode_bench::sweeps {

struct CapacityPoint {
  PoolKind pool = PoolKind::contiguous;
  CapacityQuery query;
};

// Throws std::invalid_argument naming the parameter and its value ("budget_bytes 0: ...").
CapacityPoint parse_capacity_point(const nlohmann::json& params);

}  // namespace decode_bench::sweeps
