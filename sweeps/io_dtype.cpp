#include "sweeps/io_dtype.hpp"

#include <cstring>
#include <stdexcept>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace decode_bench::sweeps {
namespace {

template <class H>
std::uint16_t bits_of(H h) {
  std::uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
template <class H>
H from_bits(std::uint16_t b) {
  H h;
  std::memcpy(&h, &b, sizeof b);
  return h;
}

void require_half(DType dtype) {
  if (dtype != DType::fp16 && dtype != DType::bf16)
    throw std::invalid_argument("q/o conversion to " + std::string(dtype_name(dtype)) + ": only fp16 and bf16 are 16-bit");
}

}  // namespace

std::optional<std::string> io_dtype_unsupported(DType dtype) {
  if (dtype == DType::fp32 || dtype == DType::fp16 || dtype == DType::bf16) return std::nullopt;
  return "asks for q and o in " + std::string(dtype_name(dtype)) + "; the pipeline gives them in fp32, fp16 or bf16";
}

std::vector<std::uint16_t> to_io_bits(std::span<const float> x, DType dtype) {
  require_half(dtype);
  std::vector<std::uint16_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = dtype == DType::fp16 ? bits_of(__float2half_rn(x[i])) : bits_of(__float2bfloat16_rn(x[i]));
  return out;
}

std::vector<float> from_io_bits(std::span<const std::uint16_t> bits, DType dtype) {
  require_half(dtype);
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i)
    out[i] = dtype == DType::fp16 ? __half2float(from_bits<__half>(bits[i]))
                                  : __bfloat162float(from_bits<__nv_bfloat16>(bits[i]));
  return out;
}

}  // namespace decode_bench::sweeps
