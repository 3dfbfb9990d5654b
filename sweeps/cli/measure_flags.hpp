#pragma once
// The flags shared by the subcommands that time (sweep, ceilings): --filter and the timing flags
// of harness/timing_flags.hpp, each beside its Google Benchmark twin (--benchmark_filter=REGEX,
// --benchmark_repetitions=N, --benchmark_min_time=SECONDS). CLI11 only collects their text; the
// parsing, validation and messages are the harness's, the same in every subcommand.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/timing_flags.hpp"

namespace decode_bench::cli {

// The subcommands whose work is timed, the only ones that take --benchmark_* flags.
bool subcommand_times_kernels(std::string_view name);

class MeasureFlags {
 public:
  // Registers --filter / --benchmark_filter (described by filter_help) and the timing flags on `sub`.
  // The object must outlive the parse (CLI11 writes into it).
  void add_to(CLI::App* sub, const std::string& filter_help);

  // The filter flag given, if any. Throws std::invalid_argument when both spellings were.
  std::optional<GivenFlag> filter() const;
  // The timing flags given, for apply_timing_flags.
  std::vector<GivenFlag> timing() const;

 private:
  std::string filter_, benchmark_filter_;
  CLI::Option* filter_option_ = nullptr;
  CLI::Option* benchmark_filter_option_ = nullptr;
  std::vector<std::string> timing_values_;  // one per timing_flag_specs() entry
  std::vector<CLI::Option*> timing_options_;
};

}  // namespace decode_bench::cli
