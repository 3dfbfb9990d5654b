#include "sweeps/shared_prefix_bound.hpp"

#include <algorithm>
#include <optional>

#include "harness/read_floor.hpp"
#include "harness/tensor_roof.hpp"

namespace decode_bench::sweeps {

nlohmann::json shared_prefix_bound(double unique_kv_bytes, double prefix_row_tokens, int heads_q, int head_dim,
                                   DType kv_dtype, const nlohmann::json& ceilings, TimingMode mode) {
  const double prefix_flops = 4.0 * prefix_row_tokens * heads_q * head_dim;
  nlohmann::json b = {{"unique_kv_bytes", unique_kv_bytes}, {"prefix_flops", prefix_flops}};
  const auto ceiling = [&](const char* name) -> double {
    return ceilings.contains(name) ? ceilings[name].value("value", 0.0) : 0.0;
  };
  const std::optional<TensorRoof> roof = highest_tensor_roof(ceilings, tensor_operands_for_kv(kv_dtype));
  const double dram = ceiling("dram_read"), tensor = roof ? roof->tflops : 0.0;
  if (dram > 0) {
    b["dram_read_gbps"] = dram;
    b["memory_us"] = unique_kv_bytes / (dram * 1e3);
  }
  if (tensor > 0) {
    b["tensor_roof"] = roof->name;
    b["tensor_tflops"] = tensor;
    b["compute_us"] = prefix_flops / (tensor * 1e6);
  }
  if (dram > 0 && tensor > 0)  // only with both ceilings measured
    b["bound_us"] = std::max(b["memory_us"].get<double>(), b["compute_us"].get<double>());
  if (tensor > 0 && mode == TimingMode::cold) {
    if (const auto floor = read_floor_us(read_floor_samples(ceilings), unique_kv_bytes)) {
      b["memory_floor_us"] = *floor;
      b["floor_bound_us"] = std::max(*floor, b["compute_us"].get<double>());
    }
  }
  return b;
}

void add_bound_ratios(nlohmann::json& bound, double median_us) {
  if (bound.contains("bound_us")) bound["median_over_bound"] = median_us / bound["bound_us"].get<double>();
  if (bound.contains("floor_bound_us")) bound["median_over_floor_bound"] = median_us / bound["floor_bound_us"].get<double>();
}

}  // namespace decode_bench::sweeps
