#pragma once
// Multi-head latent attention (MLA, DeepSeek-V2/V3, Kimi K2) at decode, in absorbed form: every
// query head of a sequence attends to one shared latent cache of kv_lora_rank + rope_dim values
// per token. All of a token's kv_lora_rank + rope_dim values are its key; the first kv_lora_rank
// are also its value, so the output is kv_lora_rank wide per head. It is multi-query attention
// with a wide head whose value is a prefix of its key.
//
// The latent cache is a KV accessor (kernels/kv_accessor.hpp) of one KV head and head_dim =
// kv_lora_rank + rope_dim whose K and V pointers are the same array (V reads the first
// kv_lora_rank values of each row). q: (batch, q_len, heads_q, key_dim); o: (batch, q_len,
// heads_q, value_dim) (the reference's FP32 and float64, the kernels' 16-bit: MlaIo); lse (natural
// log): (batch, q_len, heads_q).
//
// Query position i of q_len (0-based) sits at token len - q_len + i of its sequence and sees the
// tokens up to and including itself (multi-token prediction: q_len 2); at q_len 1 it sees all.
//
// Softmax scale: DeepSeek's, 1 / sqrt(qk_nope_head_dim + qk_rope_head_dim) = 1 / sqrt(128 + 64),
// the scale of the per-head attention before absorption, which absorbing W_UK into q leaves as it
// was (the absorbed dot product is the same number). Kimi K2 keeps DeepSeek-V3's head dims.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/dtype.hpp"
#include "kernels/host_device.hpp"

namespace decode_bench {

// DeepSeek-V3's (and Kimi K2's) un-absorbed per-head query/key dims behind the softmax scale.
inline constexpr int kMlaQkNopeHeadDim = 128;

struct MlaShape {
  int heads_q = 128;
  int kv_lora_rank = 512;
  int rope_dim = 64;
  int q_len = 1;
  double softmax_scale = 1.0 / std::sqrt(static_cast<double>(kMlaQkNopeHeadDim + 64));

  int key_dim() const { return kv_lora_rank + rope_dim; }  // 576: the latent row
  int value_dim() const { return kv_lora_rank; }           // 512: its value prefix, the output width
  int rows() const { return heads_q * q_len; }             // query rows sharing a sequence's latents

  // Empty when usable, else which field and why.
  std::string invalid_reason() const;
};

// The softmax scale DeepSeek uses for a rope dim (1 / sqrt(kMlaQkNopeHeadDim + rope_dim)).
inline double deepseek_softmax_scale(int rope_dim) {
  return 1.0 / std::sqrt(static_cast<double>(kMlaQkNopeHeadDim + rope_dim));
}

// Latent cache bytes of one token in one layer: one row of key_dim values, stored once for key
// and value (FP8: one byte each; its scale is per cache, not per token).
inline std::uint64_t mla_latent_token_bytes(const MlaShape& s, DType dtype) {
  return static_cast<std::uint64_t>(s.key_dim()) * dtype_bytes(dtype);
}

// What an MLA decode must move and compute, counted before it runs:
//   latent_bytes  every cached token's latent row, read once per sequence (shared by its heads)
//   q_bytes       q read (16-bit, key_dim per row); o_bytes: o (16-bit, value_dim) and lse (FP32) written
//   page_table_bytes  block-table entries and indptr (paged)
//   scale_bytes   FP8: the cache's one dequantization scale (FP32)
//   flops         2 x rows x (key_dim + value_dim) per visible token (scores, then weighted values)
// q and o in a 16-bit type: the MMA's, as a server holds them (the fewest bytes: a kernel handed
// FP32 q would round it to that type anyway).
inline constexpr double kMlaIoBytes = 2.0;
struct MlaTrafficModel {
  double latent_bytes = 0, q_bytes = 0, o_bytes = 0, page_table_bytes = 0, scale_bytes = 0;
  double flops = 0;
  double minimum_bytes() const { return latent_bytes + q_bytes + o_bytes + page_table_bytes + scale_bytes; }
  double arithmetic_intensity() const { return minimum_bytes() > 0 ? flops / minimum_bytes() : 0.0; }
  nlohmann::json to_json() const;
};

// lengths: tokens per sequence; pages_per_seq empty for a contiguous cache. A query row at position
// i of q_len sees len - q_len + 1 + i tokens (fewer when the sequence is shorter than q_len).
MlaTrafficModel mla_traffic_model(const MlaShape& shape, DType dtype, const std::vector<std::int32_t>& lengths,
                                  const std::vector<std::int32_t>& pages_per_seq);

// Tokens a query at position i of q_len sees in a sequence of `len` tokens.
DB_HD std::int64_t mla_visible_tokens(std::int64_t len, int q_len, int i) {
  const std::int64_t v = len - q_len + 1 + i;
  return v < 0 ? 0 : (v > len ? len : v);
}

}  // namespace decode_bench
