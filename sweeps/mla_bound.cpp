#include "sweeps/mla_bound.hpp"

#include <algorithm>
#include <optional>

#include "harness/tensor_roof.hpp"

namespace decode_bench::sweeps {

nlohmann::json mla_bound(double bytes, double flops, DType latent_dtype, const nlohmann::json& ceilings) {
  nlohmann::json b = {{"bytes", bytes}, {"flops", flops}, {"arithmetic_intensity", bytes > 0 ? flops / bytes : 0.0}};
  const double dram = ceilings.contains("dram_read") ? ceilings["dram_read"].value("value", 0.0) : 0.0;
  const std::optional<TensorRoof> roof = highest_tensor_roof(ceilings, tensor_operands_for_kv(latent_dtype));
  if (dram > 0) {
    b["dram_read_gbps"] = dram;
    b["memory_us"] = bytes / (dram * 1e3);
  }
  if (roof) {
    b["tensor_roof"] = roof->name;
    b["tensor_tflops"] = roof->tflops;
    b["compute_us"] = flops / (roof->tflops * 1e6);
  }
  if (dram > 0 && roof) {
    const double ridge = roof->tflops * 1e12 / (dram * 1e9);
    b["ridge_intensity"] = ridge;
    b["limiter"] = b["arithmetic_intensity"].get<double>() >= ridge ? "compute" : "memory";
    b["bound_us"] = std::max(b["memory_us"].get<double>(), b["compute_us"].get<double>());
  }
  return b;
}

void add_mla_bound_ratios(nlohmann::json& bound, nlohmann::json& achieved, double median_us) {
  if (bound.contains("bound_us")) bound["median_over_bound"] = median_us / bound["bound_us"].get<double>();
  if (bound.contains("tensor_tflops") && achieved.contains("tflops")) {
    achieved["tensor_roof"] = bound["tensor_roof"];
    achieved["fraction_of_tensor_roof"] = achieved["tflops"].get<double>() / bound["tensor_tflops"].get<double>();
  }
}

}  // namespace decode_bench::sweeps
