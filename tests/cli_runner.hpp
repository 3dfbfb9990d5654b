#pragma once
// Runs the decode-bench executable with arguments and captures its exit code and output.
#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace decode_bench::testing {

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

inline CliResult run_decode_bench(const std::string& args) {
  // Appended in place: GCC 12 warned (-Warray-bounds, in char_traits.h) on the same string built
  // as one chain of operator+ over temporaries.
  std::string cmd = DECODE_BENCH_EXE;
  cmd += ' ';
  cmd += args;
  cmd += " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace decode_bench::testing
