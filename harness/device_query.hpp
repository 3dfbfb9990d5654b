#pragma once
// Whether a usable CUDA device exists. GPU subcommands and GPU tests ask this first, so a
// machine without a GPU gets a sentence ("no CUDA device found: ...") instead of a crash.
#include <optional>
#include <string>

namespace decode_bench {

// nullopt when device `index` exists and has compute capability >= 8.0; otherwise the reason.
std::optional<std::string> device_unavailable_reason(int index = 0);

}  // namespace decode_bench
