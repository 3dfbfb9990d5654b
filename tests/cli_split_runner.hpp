#pragma once
// Runs the decode-bench executable with standard output and standard error kept apart, for tests
// of what a command prints where (tests/cli_runner.hpp merges them).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace decode_bench::testing {

struct CliSplitResult {
  int exit_code;
  std::string out;
  std::string err;
};

inline CliSplitResult run_decode_bench_split(const std::string& args) {
  char err_path[] = "/tmp/decode_bench_stderr_XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd < 0) return {-1, "", "mkstemp failed"};
  close(fd);
  const std::string cmd = std::string(DECODE_BENCH_EXE) + " " + args + " 2>" + err_path;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {-1, "", "popen failed"};
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  std::ifstream in(err_path);
  std::string err{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::remove(err_path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err};
}

}  // namespace decode_bench::testing
