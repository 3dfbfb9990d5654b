#include "sweeps/compare/ceiling_fraction.hpp"

namespace decode_bench::compare {

using nlohmann::json;

std::optional<double> ceiling_value(const json& doc, const std::string& name) {
  const json& ceilings = doc.at("ceilings");
  if (!ceilings.contains(name) || !ceilings[name].is_object()) return std::nullopt;
  const json& v = ceilings[name].value("value", json());
  if (!v.is_number() || !(v.get<double>() > 0)) return std::nullopt;
  return v.get<double>();
}

std::string compute_roof_for(const json& point) {
  const json& params = point.at("parameters");
  // An MLA point runs on tensor cores: the roof its bound names (sweeps/mla_bound.hpp).
  if (params.value("attention", std::string("mha")) == "mla" && point.contains("bound") && point["bound"].is_object() &&
      point["bound"].contains("tensor_roof") && point["bound"]["tensor_roof"].is_string())
    return point["bound"]["tensor_roof"].get<std::string>();
  const std::string dtype = params.contains("dtype") && params["dtype"].is_string() ? params["dtype"].get<std::string>()
                                                                                     : "fp32";
  return dtype == "fp16" || dtype == "bf16" ? "fp16_fma" : "fp32_fma";
}

namespace {

std::optional<double> number(const json& obj, const char* a, const char* b) {
  if (!obj.contains(a) || !obj[a].is_object() || !obj[a].contains(b) || !obj[a][b].is_number()) return std::nullopt;
  return obj[a][b].get<double>();
}

}  // namespace

std::optional<CeilingFraction> ceiling_fraction(const json& doc, const json& point) {
  const auto dram = ceiling_value(doc, "dram_read");
  const auto median_us = number(point, "timing", "median_us");
  const auto bytes = number(point, "model", "bytes");
  const auto flops = number(point, "model", "flops");
  if (!dram || !median_us || !(*median_us > 0) || !bytes || !flops) return std::nullopt;
  const std::string roof_name = compute_roof_for(point);
  const auto roof_tflops = ceiling_value(doc, roof_name);
  const double intensity = *bytes > 0 ? *flops / *bytes : 0;          // FLOP/B
  const bool compute_bound = roof_tflops && *bytes > 0 && intensity >= *roof_tflops * 1e3 / *dram;
  if (compute_bound) {
    const double gflops = number(point, "achieved", "tflops").value_or(*flops / (*median_us * 1e6)) * 1e3;
    return CeilingFraction{gflops / (*roof_tflops * 1e3), roof_name};
  }
  const double gbps = number(point, "achieved", "gbps").value_or(*bytes / (*median_us * 1e3));
  if (!(gbps > 0)) return std::nullopt;
  return CeilingFraction{gbps / *dram, "dram_read"};
}

}  // namespace decode_bench::compare
