#pragma once
// The cases of the short-sequence kernel's tests, both stages (tests/test_short_decode_gpu.cpp up
// to 64 tokens, tests/test_short_decode_long_gpu.cpp 65-128): flash_decode over ragged lengths,
// launched twice with the outputs poisoned before each (tests/decode_case.hpp), so an element
// either launch leaves unwritten fails.
#include <cstdint>
#include <utility>
#include <vector>

#include "tests/decode_case.hpp"

namespace decode_bench::testing {

// flash_decode over `lengths`, the planner's splits, two launches.
inline DecodeCase short_decode_case(DecodeShape shape, std::vector<std::int32_t> lengths, int page, std::uint64_t seed) {
  DecodeCase c{DecodeKernel::flash_decode, shape, std::move(lengths), page, 0, seed};
  c.launches = 2;
  return c;
}

// Every length from 0 to `limit` in one batch (each block picks its passes from its own length).
inline std::vector<std::int32_t> every_length_to(std::int32_t limit) {
  std::vector<std::int32_t> lengths;
  for (std::int32_t len = 0; len <= limit; ++len) lengths.push_back(len);
  return lengths;
}

}  // namespace decode_bench::testing
