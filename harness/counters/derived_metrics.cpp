#include "harness/counters/derived_metrics.hpp"

#include <cmath>
#include <optional>
#include <stdexcept>

namespace decode_bench::counters {
namespace {

using nlohmann::json;

constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";

std::optional<double> get(const std::map<std::string, double>& raw, const std::string& name) {
  const auto it = raw.find(name);
  if (it == raw.end()) return std::nullopt;
  return it->second;
}

// The sum a + b + 2c of three instruction counters, or nullopt if any is missing.
std::optional<double> add_mul_2fma(const std::map<std::string, double>& raw, const std::string& prefix) {
  const auto add = get(raw, "sm__sass_thread_inst_executed_op_" + prefix + "add_pred_on.sum");
  const auto mul = get(raw, "sm__sass_thread_inst_executed_op_" + prefix + "mul_pred_on.sum");
  const auto fma = get(raw, "sm__sass_thread_inst_executed_op_" + prefix + "fma_pred_on.sum");
  if (!add || !mul || !fma) return std::nullopt;
  return *add + *mul + 2.0 * *fma;
}

std::optional<double> model_number(const json& model, const char* key) {
  if (!model.is_object() || !model.contains(key) || !model.at(key).is_number()) return std::nullopt;
  return model.at(key).get<double>();
}

// One memory level: bytes moved, the bandwidth they imply over the kernel's duration, FLOPs per
// byte at this level, and how the measured bytes compare with the model's.
json level(double bytes, double duration_ns, std::optional<double> flops, std::optional<double> model_bytes) {
  json out = {{"bytes", bytes}, {"gbps", bytes / duration_ns}};  // bytes/ns == GB/s (decimal)
  if (flops) out["arithmetic_intensity"] = bytes > 0 ? json(*flops / bytes) : json(nullptr);
  if (model_bytes && *model_bytes > 0) out["measured_over_model"] = bytes / *model_bytes;
  return out;
}

}  // namespace

json derive_counters(const std::map<std::string, double>& raw, const json& model) {
  for (const auto& [name, value] : raw) {
    if (!std::isfinite(value)) throw std::invalid_argument("counter " + name + " is not finite");
    if (value < 0) throw std::invalid_argument("counter " + name + " is negative (" + std::to_string(value) + ")");
  }
  const auto duration_ns = get(raw, kDuration);
  if (!duration_ns) throw std::invalid_argument(std::string("counter ") + kDuration + " is missing");
  if (*duration_ns <= 0) throw std::invalid_argument(std::string("counter ") + kDuration + " must be > 0");

  json out = {{"available", true}};
  json raw_json = json::object();
  for (const auto& [name, value] : raw) raw_json[name] = value;
  out["raw"] = std::move(raw_json);
  out["duration_ns"] = *duration_ns;
  if (const auto clock = get(raw, kSmClock)) out["sm_clock_hz"] = *clock;

  // FLOPs: the sum of whichever precisions were collected.
  const auto fp32 = add_mul_2fma(raw, "f");
  const auto fp16_one_lane = add_mul_2fma(raw, "h");
  std::optional<double> flops;
  if (fp32) {
    out["fp32_flops"] = *fp32;
    flops = *fp32;
  }
  if (fp16_one_lane) {
    const double fp16 = kFp16LanesPerInstruction * *fp16_one_lane;
    out["fp16_flops"] = fp16;
    out["fp16_flops_one_lane"] = *fp16_one_lane;
    out["fp16_lanes_per_instruction"] = kFp16LanesPerInstruction;
    flops = flops.value_or(0.0) + fp16;
  }
  if (flops) {
    out["flops"] = *flops;
    out["achieved_tflops"] = *flops / *duration_ns / 1e3;  // FLOP/ns = GFLOP/s
  }

  const auto model_bytes = model_number(model, "bytes");
  const auto model_flops = model_number(model, "flops");
  if (model_bytes) out["model_bytes"] = *model_bytes;
  if (model_flops) out["model_flops"] = *model_flops;
  if (flops && model_flops && *model_flops > 0) out["flops_measured_over_model"] = *flops / *model_flops;

  json levels = json::object();
  const auto dram_read = get(raw, "dram__bytes_read.sum");
  const auto dram_write = get(raw, "dram__bytes_write.sum");
  if (dram_read || dram_write) {
    json dram = level(dram_read.value_or(0) + dram_write.value_or(0), *duration_ns, flops, model_bytes);
    if (dram_read) dram["read_bytes"] = *dram_read;
    if (dram_write) dram["write_bytes"] = *dram_write;
    levels["dram"] = std::move(dram);
  }
  if (const auto l2 = get(raw, "lts__t_bytes.sum")) levels["l2"] = level(*l2, *duration_ns, flops, model_bytes);
  if (const auto l1 = get(raw, "l1tex__t_bytes.sum")) levels["l1"] = level(*l1, *duration_ns, flops, model_bytes);
  out["levels"] = std::move(levels);
  return out;
}

json counters_unavailable(const std::string& reason) { return {{"available", false}, {"reason", reason}}; }

}  // namespace decode_bench::counters
