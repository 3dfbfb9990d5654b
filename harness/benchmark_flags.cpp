#include "harness/benchmark_flags.hpp"

#include <algorithm>
#include <stdexcept>

#include <benchmark/benchmark.h>

namespace decode_bench {
namespace {

std::vector<std::string>& names_given() {
  static std::vector<std::string> names;
  return names;
}

bool& initialized() {
  static bool done = false;
  return done;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// The whitelist for every --benchmark_* flag that is not an output flag (those are taken first):
// a twin of a first-class flag, which goes on to CLI11; anything else is refused by name.
void require_twin_flag(std::string_view arg) {
  const std::string_view name = arg.substr(0, arg.find('='));
  names_given().emplace_back(name);
  if (!listed(kBenchmarkTwinFlags, name)) {
    std::string supported;
    for (std::string_view s : kSupportedBenchmarkFlags) supported += (supported.empty() ? "" : ", ") + std::string(s);
    throw std::invalid_argument(std::string(name) + " is not supported (supported: " + supported + ")");
  }
  if (arg.size() == name.size())
    throw std::invalid_argument(std::string(name) + " needs a value: " + std::string(name) + "=VALUE");
}

BenchmarkOutputFlags& output_flags() {
  static BenchmarkOutputFlags flags;
  return flags;
}

// Records `arg` when it is one of the three output flags (benchmark_flags.hpp) and says whether
// it was. Only the --flag=value form, as Google Benchmark spells its flags.
bool take_output_flag(std::string_view arg) {
  const std::string_view name = arg.substr(0, arg.find('='));
  std::string* slot = name == "--benchmark_format"       ? &output_flags().format
                      : name == "--benchmark_out"        ? &output_flags().out
                      : name == "--benchmark_out_format" ? &output_flags().out_format
                                                         : nullptr;
  if (slot == nullptr) return false;
  const std::string value(arg.size() > name.size() ? arg.substr(name.size() + 1) : std::string_view());
  if (value.empty())
    throw std::invalid_argument(std::string(name) + " needs a value: " + std::string(name) +
                                (name == "--benchmark_out" ? "=FILE" : "=console|json|csv"));
  if (name != "--benchmark_out" && value != "console" && value != "json" && value != "csv")
    throw std::invalid_argument(std::string(name) + " '" + value + "' is not one of console, json, csv");
  *slot = value;
  if (output_flags().first_given.empty()) output_flags().first_given = name;
  return true;
}

}  // namespace

std::vector<std::string> take_benchmark_flags(int argc, const char* const* argv) {
  std::vector<std::string> rest;
  std::vector<std::string> twin_args;
  names_given().clear();
  output_flags() = {};
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i > 0 && take_output_flag(arg)) continue;
    if (i > 0 && starts_with(arg, "--benchmark_")) {
      require_twin_flag(arg);
      twin_args.emplace_back(arg);
    } else {
      rest.emplace_back(arg);
    }
  }
  rest.insert(rest.end(), twin_args.begin(), twin_args.end());
  return rest;
}

const std::vector<std::string>& benchmark_flag_names_given() { return names_given(); }

const BenchmarkOutputFlags& benchmark_output_flags() { return output_flags(); }

void ensure_benchmark_initialized() {
  if (initialized()) return;
  initialized() = true;
  char program[] = "decode-bench";
  char* argv[] = {program, nullptr};
  int argc = 1;
  benchmark::Initialize(&argc, argv);
}

}  // namespace decode_bench
