#pragma once
// A string's parts between a separator ("a,b" -> a, b; "e/T=8" -> e, T=8): the one split of the
// command line's comma lists (--set values, --devices, runs joined for compare) and of point ids'
// '/' components. Every part is returned, empty ones too ("a,,b" -> a, "", b; "" -> ""), so the
// caller names what an empty one means; the views point into `s`.
#include <string_view>
#include <vector>

namespace decode_bench::sweeps {

inline std::vector<std::string_view> split_at(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(separator, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace decode_bench::sweeps
