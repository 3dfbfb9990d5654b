// Progress lines: plain lines with an ETA off a terminal, one rewritten line on it.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/progress.hpp"

namespace decode_bench {
namespace {

TEST(Progress, DurationsAreShort) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(7620), "2h07m");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(Progress, PlainOutputIsOneLinePerPointWithEta) {
  std::ostringstream out;
  double now = 100;
  ProgressReporter p(4, out, /*interactive=*/false, [&now] { return now; });
  EXPECT_LT(p.eta_seconds(), 0);  // nothing finished: unknown
  p.start("a");
  now = 110;
  p.finish("a", "ok", "12.5 us");
  EXPECT_DOUBLE_EQ(p.eta_seconds(), 30);  // 10 s per point, 3 left
  p.start("b");
  now = 130;
  p.finish("b", "error", "cudaErrorInvalidValue");
  p.done();
  EXPECT_EQ(out.str(),
            "[1/4] a: ok (12.5 us), ETA 30s\n"
            "[2/4] b: error (cudaErrorInvalidValue), ETA 30s\n"
            "2/4 points in 30s, 1 failed\n");
}

TEST(Progress, TerminalOutputRewritesOneLineAndKeepsFailures) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter p(2, out, /*interactive=*/true, [&now] { return now; });
  p.start("a");
  now = 5;
  p.finish("a", "ok");
  p.start("b");
  now = 10;
  p.finish("b", "error", "boom");
  p.done();
  const std::string s = out.str();
  EXPECT_EQ(s.find("\n"), s.find("[2/2] b: error (boom)") + std::string("[2/2] b: error (boom), ETA 0s").size());
  EXPECT_NE(s.find("\r\033[K[1/2] a ... ETA ?"), std::string::npos) << s;
  EXPECT_NE(s.find("\r\033[K[2/2] b ... ETA 5s"), std::string::npos) << s;
  EXPECT_NE(s.find("2/2 points in 10s, 1 failed\n"), std::string::npos) << s;
}

}  // namespace
}  // namespace decode_bench
