#pragma once
// The benchmark's K, V and q values as a pure function of their coordinates:
//   value = f(seed, tensor, sequence, head, token, dim)
// so a contiguous pool and its paged twin (any page size, any page order) hold identical data,
// and the host (for the CPU reference) and the device (filling pools in place) produce the same
// floats bit for bit (FP8 caches: the bytes of kernels/fp8_generator.hpp from the same bits).
// Values lie in (-0.99, 0.99) and are never zero in any storage type: the
// margin below 1 keeps bf16/fp16 rounding from reaching +-1, and the odd numerator keeps them
// away from 0.
#include <cstdint>

#include "kernels/host_device.hpp"

namespace decode_bench {

enum class GeneratedTensor : std::uint32_t { k = 0, v = 1, q = 2 };

DB_HD std::uint64_t generator_mix(std::uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One key per row (tensor, sequence, head, token): the mixing a row's D values share.
// q uses token 0 and the query head as `head`.
DB_HD std::uint64_t generated_row_key(std::uint64_t seed, GeneratedTensor tensor, int seq, int head,
                                      std::int64_t token) {
  std::uint64_t z = generator_mix(seed + 0x9E3779B97F4A7C15ull);
  z = generator_mix(z ^ ((static_cast<std::uint64_t>(tensor) << 32) | static_cast<std::uint32_t>(seq)));
  return generator_mix(z ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(head)) << 40) ^
                       static_cast<std::uint64_t>(token));
}

// The 64 random bits of element `dim` of the row (FP8 caches map them to a byte,
// kernels/fp8_generator.hpp; the other types to the float below).
DB_HD std::uint64_t generated_bits(std::uint64_t row_key, int dim) {
  return generator_mix(row_key + static_cast<std::uint64_t>(dim + 1) * 0x9E3779B97F4A7C15ull);
}

// Element `dim` of the row: (2u + 1) / 2^23 - 1 with a 23-bit u is exact in float and never 0,
// then one rounding by the 0.99 factor (identical on host and device: IEEE multiply).
DB_HD float generated_value(std::uint64_t row_key, int dim) {
  const std::uint64_t z = generated_bits(row_key, dim);
  const float odd = static_cast<float>(2 * (z >> 41) + 1);  // < 2^24: exact
  return (odd * 0x1.0p-23f - 1.0f) * 0.99f;
}

}  // namespace decode_bench
