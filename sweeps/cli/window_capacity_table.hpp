#pragma once
// `decode-bench capacity --preset sliding-window`: what releasing the pages behind the window saves
// for the sliding-window models (pools/window_capacity.hpp), at 32K and 128K tokens a sequence.
#include <cstdint>
#include <string>
#include <vector>

namespace decode_bench::cli {

// Prints the table (and writes the rows as JSON to `output` when not empty); returns the exit code.
int run_window_capacity(std::uint64_t budget_bytes, const std::string& output, const std::vector<std::string>& argv);

}  // namespace decode_bench::cli
