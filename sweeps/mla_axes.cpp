#include "sweeps/mla_axes.hpp"

#include "sweeps/point_kernel.hpp"

namespace decode_bench::sweeps {

bool is_mla_point(const nlohmann::json& params) { return params.value("attention", "mha") == "mla"; }

std::vector<std::pair<std::string, std::string>> mla_point_problems(const nlohmann::json& p,
                                                                    const std::set<std::string>& given) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!is_mla_point(p)) return out;
  for (const char* name : {"heads_kv", "head_dim"})
    if (given.count(name))
      out.emplace_back(name, std::string("attention mla takes no ") + name +
                                 ": the latent cache is one row of kv_lora_rank + rope_dim values per token, "
                                 "shared by every query head (set kv_lora_rank and rope_dim)");
  if (p.value("prefix_len", 0) > 0)
    out.emplace_back("prefix_len", "attention mla has no shared-prefix path (prefix_len must be 0)");
  const std::string dtype = p.value("dtype", "fp16");
  if (dtype != "fp16" && dtype != "bf16" && dtype != "fp8_e4m3")
    out.emplace_back("dtype", "attention mla stores its latent cache as fp16, bf16 or fp8_e4m3, not " + dtype);
  const bool capacity = kernel_is(p, KernelKind::capacity);
  if (!capacity && !kernel_is(p, KernelKind::flash_decode) && !kernel_is(p, KernelKind::batch_decode))
    out.emplace_back("kernel", "attention mla runs with kernel flash_decode or batch_decode (MLA decode) or capacity, not " +
                                   p.value("kernel", std::string("?")));
  if (capacity && (p.value("kv_lora_rank", 512) + p.value("rope_dim", 64)) % 2 != 0)
    out.emplace_back("rope_dim", "capacity counts the latent row as K and V halves: kv_lora_rank + rope_dim must be even");
  if (capacity) return out;
  // MLA decode: causal q_len (multi-token prediction) and nothing else of the attention variants.
  for (const char* name : {"window", "logits_soft_cap"})
    if (p.value(name, 0.0) != 0.0)
      out.emplace_back(name, std::string("attention mla has no ") + name + " path (MLA decode is causal attention "
                                                                          "over the whole latent cache)");
  if (p.value("sinks", false)) out.emplace_back("sinks", "attention mla has no sinks path");
  if (const int q_len = p.value("q_len", 1); q_len > kMlaMaxQLen)
    out.emplace_back("q_len", "attention mla takes q_len 1 or 2 (decode and multi-token prediction), not " +
                                  std::to_string(q_len));
  if (p.value("layout", std::string("contiguous")) == "paged" && p.value("page_order", std::string("sequential")) == "churned")
    out.emplace_back("page_order", "attention mla lays its pages out in order or shuffled (page_order sequential or "
                                   "shuffled), not churned");
  if (p.value("layout", std::string("contiguous")) == "contiguous" && p.value("fragmentation", 1.0) != 1.0)
    out.emplace_back("fragmentation", "attention mla's contiguous latent cache is one slab of max_len rows per "
                                      "sequence (fragmentation must be 1)");
  if (p.value("end_to_end", false))
    out.emplace_back("end_to_end", "attention mla has no end_to_end timing (the E2E copies are of MHA K/V slabs)");
  if (p.value("layers", 1) > 1)
    out.emplace_back("layers", "attention mla builds one layer's latent cache (layers must be 1)");
  return out;
}

}  // namespace decode_bench::sweeps
