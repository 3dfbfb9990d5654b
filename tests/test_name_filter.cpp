// NameFilter: Google Benchmark's filter rules over point ids and ceiling variant names.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "harness/name_filter.hpp"

namespace decode_bench {
namespace {

TEST(NameFilter, IsARegexSearchAnywhereInTheName) {
  const NameFilter f("dram_(read|copy)");
  EXPECT_TRUE(f.selects("ceilings/dram_read/read_kernel"));
  EXPECT_TRUE(f.selects("ceilings/dram_copy/copy_kernel"));
  EXPECT_FALSE(f.selects("ceilings/l2_read/read_kernel"));
  EXPECT_EQ(f.pattern(), "dram_(read|copy)");
}

TEST(NameFilter, AnchorsApplyToTheWholeName) {
  const NameFilter f("^flash_decode$");
  EXPECT_TRUE(f.selects("flash_decode"));
  EXPECT_FALSE(f.selects("flash_decode/T=1"));
  EXPECT_FALSE(f.selects("x/flash_decode"));
}

TEST(NameFilter, ALeadingMinusNegates) {
  const NameFilter f("-layout=paged");
  EXPECT_FALSE(f.selects("paged/kernel=flash_decode/layout=paged/T=4096"));
  EXPECT_TRUE(f.selects("kernels/kernel=flash_decode/layout=contiguous/T=4096"));
  EXPECT_FALSE(NameFilter("-").selects("anything"));  // the negation of everything
  EXPECT_FALSE(NameFilter("-all").selects("anything"));
}

TEST(NameFilter, EmptyAndAllSelectEverything) {
  for (const char* all : {"", "all", "."}) EXPECT_TRUE(NameFilter(all).selects("anything/at:all")) << all;
  EXPECT_TRUE(NameFilter("").selects(""));
}

TEST(NameFilter, AnInvalidExpressionIsRefusedWithItsText) {
  for (const char* bad : {"(", "-(paged", "[a-", "a{2,1}"}) {
    try {
      NameFilter f(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("'") + bad + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("POSIX extended"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace decode_bench
