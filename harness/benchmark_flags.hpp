#pragma once
// Google Benchmark's own flags on the decode-bench command line. A whitelist: each supported one
// is either a twin of a first-class flag of the subcommands that time (--benchmark_filter is
// --filter, --benchmark_repetitions is --repetitions, --benchmark_min_time is --min-time; they are
// handed to that subcommand's parser, which maps them onto the same settings) or an output flag
// that `sweep` honours itself (below). Google Benchmark's own parser sees none of them. Any other
// --benchmark_* flag is refused by name.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace decode_bench {

// The twins of first-class flags, parsed by the subcommand (sweeps/cli/measure_flags.hpp).
inline constexpr std::array<std::string_view, 3> kBenchmarkTwinFlags = {
    "--benchmark_filter", "--benchmark_repetitions", "--benchmark_min_time"};
// Every --benchmark_* flag decode-bench accepts (the twins, then the output flags).
inline constexpr std::array<std::string_view, 6> kSupportedBenchmarkFlags = {
    "--benchmark_filter", "--benchmark_repetitions", "--benchmark_min_time",
    "--benchmark_out",    "--benchmark_out_format",  "--benchmark_format"};

// Sorts out the --benchmark_* arguments and returns what CLI11 parses (argv[0] first): the other
// arguments in order, then the twins (moved last, so they reach the subcommand's parser wherever
// they were written). The output flags (below) are kept for the sweep itself. Throws
// std::invalid_argument "--benchmark_X is not supported (supported: ...)" for any other
// --benchmark_* flag, for a twin without "=VALUE", and for a bad output flag. --help stays with
// CLI11 (Google Benchmark would print its own and exit).
std::vector<std::string> take_benchmark_flags(int argc, const char* const* argv);

// The names (without "=VALUE") of the --benchmark_* flags take_benchmark_flags saw, in order.
const std::vector<std::string>& benchmark_flag_names_given();

// Google Benchmark's output flags, honoured by `decode-bench sweep` itself (Google Benchmark
// never sees them: its own --benchmark_out would hold only the last point):
//   --benchmark_format=console|json|csv      the end-of-sweep table on standard output
//   --benchmark_out=FILE                     the whole run written to FILE as well
//   --benchmark_out_format=json|console|csv  FILE's format (json: the results document)
// An empty string is a flag not given. take_benchmark_flags fills this afresh on every call and
// throws std::invalid_argument naming the flag for an empty FILE or an unknown format.
struct BenchmarkOutputFlags {
  std::string format;
  std::string out;
  std::string out_format;
  // The first of the three on the command line ("--benchmark_format", ...); empty when none was.
  std::string first_given;
};

const BenchmarkOutputFlags& benchmark_output_flags();

// Calls benchmark::Initialize once (with no flags), so Google Benchmark's globals are set up
// before the timer runs it.
void ensure_benchmark_initialized();

}  // namespace decode_bench
