#pragma once
// Which attention variants the shared-prefix composition (kernels/shared_prefix.hpp) computes, from
// the shape, the storage type and the variant alone: what the planner refuses and what the
// `decode-bench` backend's supports() reports for a shared-prefix point. Host code.
//   q_len 1 only (the prefix phase holds one query row a sequence and query head); FP16 and BF16 only
//   (FP8 variants run on the decode kernels, not composed here);
//   window and sinks wherever the suffix phase's batch decode takes them (the prefix phase runs the
//   plain row kernel: the window in its items' ranges, no sink);
//   soft-cap where the suffix phase takes it and, with a shared level, the row kernel's variant twin
//   too (the prefix phase runs it with the cap alone: FP16 / BF16 at head dims 80-128, BF16 16-64).
#include <optional>
#include <string>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/row_attention_variant.hpp"

namespace decode_bench {

// has_levels: whether the batch has a shared level (a prefix of at least one page shared by two
// sequences or more); a point asked about before its layout exists passes true.
std::optional<std::string> shared_prefix_variant_unsupported_reason(const DecodeShape& shape, DType kv_dtype,
                                                                    const RowAttentionVariant& variant,
                                                                    bool has_levels = true);

}  // namespace decode_bench
