// The tensor roof a compute bound uses: the highest measured roof matching the MMA operand type.
#include <gtest/gtest.h>

#include "harness/tensor_roof.hpp"

namespace decode_bench {
namespace {

nlohmann::json roofs(double mma_sync, double fp16_wgmma, double bf16_wgmma, double fp8_wgmma) {
  nlohmann::json c = {{"dram_read", {{"value", 3000.0}}}, {"fp16_fma", {{"value", 5000.0}}}};
  if (mma_sync > 0) c["fp16_tensor"] = {{"value", mma_sync}};
  if (fp16_wgmma > 0) c["fp16_tensor_wgmma"] = {{"value", fp16_wgmma}};
  if (bf16_wgmma > 0) c["bf16_tensor_wgmma"] = {{"value", bf16_wgmma}};
  if (fp8_wgmma > 0) c["fp8_e4m3_tensor_wgmma"] = {{"value", fp8_wgmma}};
  return c;
}

TEST(TensorRoof, HighestMatchingRoofWinsAndIsNamed) {
  const nlohmann::json c = roofs(650, 780, 800, 1500);
  const auto fp16 = highest_tensor_roof(c, DType::fp16);
  ASSERT_TRUE(fp16);
  EXPECT_EQ(fp16->name, "fp16_tensor_wgmma");  // not bf16's 800, not FP8's, not fp16_fma's 5000
  EXPECT_DOUBLE_EQ(fp16->tflops, 780);
  EXPECT_EQ(highest_tensor_roof(c, DType::bf16)->name, "bf16_tensor_wgmma");
  EXPECT_EQ(highest_tensor_roof(c, DType::fp8_e4m3)->name, "fp8_e4m3_tensor_wgmma");
  EXPECT_DOUBLE_EQ(highest_tensor_roof(c, DType::fp8_e4m3)->tflops, 1500);
}

TEST(TensorRoof, MmaSyncRoofServesWhereNoWgmmaRoofWasMeasuredOrItIsHigher) {
  // An A100-like run: no warpgroup MMA. FP16 and BF16 both take mma.sync's roof; FP8 has none.
  const nlohmann::json a100 = roofs(300, 0, 0, 0);
  EXPECT_EQ(highest_tensor_roof(a100, DType::fp16)->name, "fp16_tensor");
  EXPECT_EQ(highest_tensor_roof(a100, DType::bf16)->name, "fp16_tensor");
  EXPECT_FALSE(highest_tensor_roof(a100, DType::fp8_e4m3));
  EXPECT_EQ(highest_tensor_roof(roofs(650, 600, 640, 0), DType::fp16)->name, "fp16_tensor");
  EXPECT_EQ(highest_tensor_roof(roofs(650, 600, 640, 0), DType::bf16)->name, "fp16_tensor");
}

TEST(TensorRoof, NoRoofForUnmatchedTypesOrUnusableValues) {
  const nlohmann::json c = roofs(650, 780, 800, 1500);
  EXPECT_FALSE(highest_tensor_roof(c, DType::fp32));
  EXPECT_FALSE(highest_tensor_roof(c, DType::fp8_e5m2));
  EXPECT_FALSE(highest_tensor_roof(nlohmann::json::object(), DType::fp16));
  EXPECT_FALSE(highest_tensor_roof(nlohmann::json::array(), DType::fp16));
  nlohmann::json bad = {{"fp16_tensor", {{"value", 0.0}}}, {"fp16_tensor_wgmma", {{"value", "fast"}}}};
  EXPECT_FALSE(highest_tensor_roof(bad, DType::fp16));
  bad["fp16_tensor_wgmma"] = {{"value", 700.0}};
  EXPECT_EQ(highest_tensor_roof(bad, DType::fp16)->name, "fp16_tensor_wgmma");
}

TEST(TensorRoof, KvTypesMapToTheirMmaOperands) {
  EXPECT_EQ(tensor_operands_for_kv(DType::fp16), DType::fp16);
  EXPECT_EQ(tensor_operands_for_kv(DType::bf16), DType::bf16);
  EXPECT_EQ(tensor_operands_for_kv(DType::fp8_e4m3), DType::fp16);
  EXPECT_EQ(tensor_operands_for_kv(DType::fp8_e5m2), DType::fp16);
  EXPECT_EQ(tensor_operands_for_kv(DType::fp32), DType::fp32);
}

}  // namespace
}  // namespace decode_bench
