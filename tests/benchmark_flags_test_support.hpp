#pragma once
// take_benchmark_flags on a literal command line, for the flag tests: what CLI11 would get, or
// the refusal's message.
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/benchmark_flags.hpp"

namespace decode_bench::testing {

inline std::vector<std::string> split_benchmark_flags(std::vector<const char*> argv) {
  return take_benchmark_flags(static_cast<int>(argv.size()), argv.data());
}

// The refusal's message, or "(accepted)" when the command line passes.
inline std::string benchmark_flags_refusal(std::vector<const char*> argv) {
  try {
    split_benchmark_flags(std::move(argv));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace decode_bench::testing
