#pragma once
// The MLA axes' rules (attention = mla; kv_lora_rank, rope_dim): which axes an MLA point takes and
// which it refuses by name, kept out of the axis table so the rules read in one place.
//   takes:    heads_q (query heads sharing the latent cache), kv_lora_rank, rope_dim, dtype fp16 /
//             bf16 / fp8_e4m3, layout contiguous or paged, page_size, batch, T, length_dist, seed
//             and, for MLA decode (kernel flash_decode or batch_decode), q_len 1 or 2 (multi-token
//             prediction)
//   refuses:  heads_kv and head_dim (the latent cache is one shared row of kv_lora_rank + rope_dim),
//             prefix_len (no shared-prefix MLA path), dtype fp32 and fp8_e5m2, kernels other than
//             flash_decode, batch_decode and capacity, and for decode q_len above 2, window, sinks,
//             logits_soft_cap, end_to_end and layers > 1
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

bool is_mla_point(const nlohmann::json& params);

// The longest q_len an MLA decode point takes (decode and multi-token prediction).
inline constexpr int kMlaMaxQLen = 2;

// {axis name, message} per rule an MLA point breaks; `given` holds the axes the preset set
// explicitly (a default heads_kv is no problem). Empty for an MHA point.
std::vector<std::pair<std::string, std::string>> mla_point_problems(const nlohmann::json& params,
                                                                    const std::set<std::string>& given);

}  // namespace decode_bench::sweeps
