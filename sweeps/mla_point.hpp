#pragma once
// An MLA decode point (attention = mla, kernels/mla/mla_shape.hpp) as the measurement pipeline
// sees it: its parameters, what no backend can measure, the problem as described before any memory
// exists, and its device memory. The latent cache is the problem's K/V as one KV head of head_dim
// kv_lora_rank + rope_dim (harness/attention_problem.hpp, AttentionProblem::mla). Host-only.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/attention_problem.hpp"
#include "harness/kernel_kind.hpp"
#include "kernels/mla/mla_shape.hpp"
#include "sweeps/decode_point.hpp"

namespace decode_bench::sweeps {

struct MlaPoint {
  DecodePoint decode;  // lengths, dtype, layout, page size and order, seed, timing, counters
  MlaShape shape;      // heads_q, kv_lora_rank, rope_dim, q_len, DeepSeek's softmax scale
};

MlaPoint parse_mla_point(const nlohmann::json& params);

// Why no backend can measure this MLA point (its lengths, end_to_end, layers > 1), or nullopt. The
// axes' own refusals (sweeps/mla_axes.hpp) come earlier, at validation.
std::optional<std::string> mla_request_unsupported(const nlohmann::json& params);

// The problem with its device pointers null: shape (heads_q, 1, key_dim), mla, batch, dtype,
// layout, page size, host lengths, CSR and last-page lengths, variant.q_len, blocks.
AttentionProblem describe_mla_point(KernelKind kernel, const nlohmann::json& params);

// Device bytes the point allocates: the latent rows (whole pages, or max_len-row slabs), block
// table, q, o, lse and the split partials of the widest plan (plan_mla_decode and
// plan_mla_decode_wgmma in either tiling, at 256 SMs).
std::uint64_t estimate_mla_device_bytes(const nlohmann::json& params);

}  // namespace decode_bench::sweeps
