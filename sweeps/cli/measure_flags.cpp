#include "sweeps/cli/measure_flags.hpp"

#include <stdexcept>

namespace decode_bench::cli {

namespace {
constexpr const char* kTwinGroup = "Google Benchmark spellings (one of a pair, never both)";
}  // namespace

bool subcommand_times_kernels(std::string_view name) { return name == "sweep" || name == "ceilings"; }

void MeasureFlags::add_to(CLI::App* sub, const std::string& filter_help) {
  filter_option_ = sub->add_option("--filter", filter_, filter_help)->type_name("REGEX");
  benchmark_filter_option_ = sub->add_option("--benchmark_filter", benchmark_filter_,
                                             "Google Benchmark's spelling of --filter (=REGEX)")
                                 ->type_name("REGEX")
                                 ->group(kTwinGroup);
  const auto specs = timing_flag_specs();
  timing_values_.assign(specs.size(), std::string());  // sized once: CLI11 keeps pointers into it
  timing_options_.clear();
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const std::string flag(specs[k].flag);
    CLI::Option* option =
        sub->add_option(flag, timing_values_[k], std::string(specs[k].help))->type_name(std::string(specs[k].value_name));
    if (flag.starts_with("--benchmark_")) option->group(kTwinGroup);
    timing_options_.push_back(option);
  }
}

std::optional<GivenFlag> MeasureFlags::filter() const {
  const bool first_class = filter_option_ && filter_option_->count() > 0;
  const bool twin = benchmark_filter_option_ && benchmark_filter_option_->count() > 0;
  if (first_class && twin)
    throw std::invalid_argument("--filter and --benchmark_filter set the same thing: give one of them");
  if (first_class) return GivenFlag{"--filter", filter_};
  if (twin) return GivenFlag{"--benchmark_filter", benchmark_filter_};
  return std::nullopt;
}

std::vector<GivenFlag> MeasureFlags::timing() const {
  std::vector<GivenFlag> given;
  const auto specs = timing_flag_specs();
  for (std::size_t k = 0; k < timing_options_.size(); ++k)
    if (timing_options_[k]->count() > 0) given.push_back({std::string(specs[k].flag), timing_values_[k]});
  return given;
}

}  // namespace decode_bench::cli
