// The q / o conversions of the pipeline (sweeps/io_dtype.hpp) against known bit patterns: FP16 and
// BF16 round to nearest even, and widening gives back exactly the rounded value.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "sweeps/io_dtype.hpp"

namespace decode_bench::sweeps {
namespace {

TEST(IoDtype, KnownBitPatternsBothWays) {
  const std::vector<float> x = {1.0f, -2.0f, 0.0f, 65504.0f, 1.0f / 3.0f};
  EXPECT_EQ(to_io_bits(x, DType::fp16), (std::vector<std::uint16_t>{0x3C00, 0xC000, 0x0000, 0x7BFF, 0x3555}));
  EXPECT_EQ(to_io_bits(x, DType::bf16), (std::vector<std::uint16_t>{0x3F80, 0xC000, 0x0000, 0x4780, 0x3EAB}));
  const std::vector<float> half = from_io_bits(to_io_bits(x, DType::fp16), DType::fp16);
  EXPECT_EQ(half[0], 1.0f);
  EXPECT_EQ(half[3], 65504.0f);
  EXPECT_EQ(half[4], 0.333251953125f);  // 0x3555: the FP16 nearest to 1/3
  EXPECT_EQ(from_io_bits(to_io_bits(x, DType::bf16), DType::bf16)[4], 0.333984375f);  // 0x3EAB
  EXPECT_TRUE(std::isnan(from_io_bits(std::vector<std::uint16_t>{0xFFFF}, DType::fp16)[0])) << "poison stays NaN";
  EXPECT_TRUE(std::isnan(from_io_bits(std::vector<std::uint16_t>{0xFFFF}, DType::bf16)[0]));
}

TEST(IoDtype, OnlyFp32Fp16AndBf16AreGiven) {
  EXPECT_FALSE(io_dtype_unsupported(DType::fp32).has_value());
  EXPECT_FALSE(io_dtype_unsupported(DType::fp16).has_value());
  EXPECT_FALSE(io_dtype_unsupported(DType::bf16).has_value());
  EXPECT_EQ(io_dtype_unsupported(DType::fp8_e5m2),
            "asks for q and o in fp8_e5m2; the pipeline gives them in fp32, fp16 or bf16");
  EXPECT_THROW(to_io_bits(std::vector<float>{1.0f}, DType::fp32), std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench::sweeps
