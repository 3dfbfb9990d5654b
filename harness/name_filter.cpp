#include "harness/name_filter.hpp"

#include <stdexcept>

namespace decode_bench {

NameFilter::NameFilter(std::string pattern) : pattern_(std::move(pattern)) {
  std::string expression = pattern_;
  if (!expression.empty() && expression.front() == '-') {
    negated_ = true;
    expression.erase(0, 1);
  }
  // "-" alone negates "everything": it selects nothing, which the caller reports as such.
  everything_ = expression.empty() || expression == "all";
  if (everything_) return;
  try {
    regex_ = std::regex(expression, std::regex::extended);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("'" + pattern_ + "' is not a valid POSIX extended regular expression (" + e.what() +
                                ")");
  }
}

bool NameFilter::selects(std::string_view name) const {
  const bool found = everything_ || std::regex_search(name.begin(), name.end(), regex_);
  return found != negated_;
}

}  // namespace decode_bench
