#pragma once
// Selecting points or variants by name, with Google Benchmark's filter rules: a POSIX extended
// regular expression searched for anywhere in the name (anchor with ^ and $ for a whole-name
// match), negated by a leading '-'; an empty filter or "all" selects every name. `sweep --filter`
// applies it to point ids while planning, `ceilings --filter` to variant names before timing.
#include <regex>
#include <string>
#include <string_view>

namespace decode_bench {

class NameFilter {
 public:
  // Throws std::invalid_argument saying why `pattern` is not a valid POSIX extended regular
  // expression (the caller adds the flag that gave it).
  explicit NameFilter(std::string pattern);

  bool selects(std::string_view name) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  bool negated_ = false;
  bool everything_ = false;
  std::regex regex_;
};

}  // namespace decode_bench
