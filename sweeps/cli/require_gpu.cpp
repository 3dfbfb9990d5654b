#include <iostream>

#include "harness/device_query.hpp"
#include "sweeps/cli/command.hpp"

namespace decode_bench::cli {

bool require_gpu(int index, CommandContext& ctx) {
  if (const auto reason = device_unavailable_reason(index)) {
    std::cerr << "decode-bench: " << *reason << "\n";
    ctx.exit_code = kExitUsage;
    return false;
  }
  return true;
}

}  // namespace decode_bench::cli
