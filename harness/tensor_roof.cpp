#include "harness/tensor_roof.hpp"

namespace decode_bench {
namespace {

constexpr std::string_view kFp16[] = {"fp16_tensor", "fp16_tensor_wgmma"};
constexpr std::string_view kBf16[] = {"bf16_tensor_wgmma", "fp16_tensor"};
constexpr std::string_view kFp8E4m3[] = {"fp8_e4m3_tensor_wgmma"};

}  // namespace

std::span<const std::string_view> matching_tensor_roofs(DType operands) {
  switch (operands) {
    case DType::fp16: return kFp16;
    case DType::bf16: return kBf16;
    case DType::fp8_e4m3: return kFp8E4m3;
    default: return {};
  }
}

DType tensor_operands_for_kv(DType kv) { return dtype_is_fp8(kv) ? DType::fp16 : kv; }

std::optional<TensorRoof> highest_tensor_roof(const nlohmann::json& ceilings, DType operands) {
  std::optional<TensorRoof> best;
  if (!ceilings.is_object()) return best;
  for (std::string_view name : matching_tensor_roofs(operands)) {
    const auto c = ceilings.find(std::string(name));
    if (c == ceilings.end() || !c->is_object()) continue;
    const auto v = c->find("value");
    if (v == c->end() || !v->is_number()) continue;
    const double tflops = v->get<double>();
    if (tflops > 0 && (!best || tflops > best->tflops)) best = TensorRoof{std::string(name), tflops};
  }
  return best;
}

}  // namespace decode_bench
