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
  if (!kernel_is(p, KernelKind::capacity))
    out.emplace_back("kernel", "attention mla runs with kernel capacity only (no sweep runner computes MLA decode "
                               "yet), not " + p.value("kernel", std::string("?")));
  else if ((p.value("kv_lora_rank", 512) + p.value("rope_dim", 64)) % 2 != 0)
    out.emplace_back("rope_dim", "capacity counts the latent row as K and V halves: kv_lora_rank + rope_dim must be even");
  return out;
}

}  // namespace decode_bench::sweeps
