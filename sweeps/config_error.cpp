#include "sweeps/config_error.hpp"

namespace decode_bench::sweeps {

std::string format_config_errors(const std::vector<ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) {
    if (!s.empty()) s += '\n';
    s += e.path;
    s += ": ";
    s += e.message;
  }
  return s;
}

}  // namespace decode_bench::sweeps
