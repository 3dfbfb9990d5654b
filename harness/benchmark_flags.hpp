#pragma once
// Google Benchmark's own flags (--benchmark_repetitions, --benchmark_min_time, --benchmark_filter,
// ...) pass through the decode-bench command line. They are taken out of argv before CLI11 sees
// it and handed to benchmark::Initialize; the timer then lets a flag the user gave win over the
// TimingOptions default.
#include <string>
#include <string_view>
#include <vector>

namespace decode_bench {

// Which pass-through flags were on the command line (the rest keep decode-bench's defaults).
struct BenchmarkFlagsGiven {
  bool repetitions = false;  // --benchmark_repetitions
  bool min_time = false;     // --benchmark_min_time
};

// Hands every --benchmark_* argument but the output flags (below) to benchmark::Initialize and
// returns the others (argv[0] first) for CLI11. Throws std::invalid_argument naming an argument
// Google Benchmark does not know, or a bad output flag. --help stays with CLI11 (Google Benchmark
// would print its own help and exit).
std::vector<std::string> take_benchmark_flags(int argc, const char* const* argv);

const BenchmarkFlagsGiven& benchmark_flags_given();

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

// Calls benchmark::Initialize once (with no flags) unless take_benchmark_flags already did, so
// Google Benchmark's globals are set up before the timer runs it (tests, library users).
void ensure_benchmark_initialized();

// Whether --benchmark_filter selects this point: a regular-expression search in the point name,
// negated by a leading '-'; an empty filter or "all" selects everything. Matched here against
// the plain name (Google Benchmark would add "/repeats:5/manual_time" suffixes). Throws
// std::invalid_argument for a filter that is not a valid regular expression.
bool benchmark_filter_selects(std::string_view name);

}  // namespace decode_bench
