// sweeps/text_split.hpp: every part between separators, empty ones included, as views into the text.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "sweeps/text_split.hpp"

namespace decode_bench::sweeps {
namespace {

using Parts = std::vector<std::string_view>;

TEST(TextSplit, EveryPartEmptyOnesIncluded) {
  EXPECT_EQ(split_at("a,b,c", ','), (Parts{"a", "b", "c"}));
  EXPECT_EQ(split_at("a,,b", ','), (Parts{"a", "", "b"}));
  EXPECT_EQ(split_at(",a,", ','), (Parts{"", "a", ""}));
  EXPECT_EQ(split_at("", ','), (Parts{""}));
  EXPECT_EQ(split_at("abc", ','), (Parts{"abc"}));
  EXPECT_EQ(split_at("e/T=8/counters=false", '/'), (Parts{"e", "T=8", "counters=false"}));
}

TEST(TextSplit, PartsPointIntoTheText) {
  const std::string_view text = "x,yz";
  const Parts parts = split_at(text, ',');
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].data(), text.data() + 2);
}

}  // namespace
}  // namespace decode_bench::sweeps
