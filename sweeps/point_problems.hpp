#pragma once
// Cross-axis problems of expanded points, reported once per distinct problem. One bad value (an
// override of heads_kv, a T range past the device's memory) fails every point that combines it,
// often thousands over many experiments; the user needs its path and reason once, with how many
// points of which experiments it fails and one of them to look at.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sweeps/config_error.hpp"

namespace decode_bench::sweeps {

class PointProblems {
 public:
  // `path` and `message` say what is wrong and where, the same for every point it fails (the key);
  // `detail` is this point's part (" needs about 2.00 GiB"), shown for the first point only.
  void add(const std::string& path, const std::string& message, const std::string& experiment,
           const std::string& point_id, const std::string& detail = "");

  // One error per distinct (path, message), in order of first appearance:
  //   "MESSAGE (point ID DETAIL)"                                           one point
  //   "MESSAGE (N points of experiment(s) A, B; the first: ID DETAIL)"      more
  // at most kMaxReported of them, then one error at "experiments" counting the rest.
  void report(std::vector<ConfigError>& errors) const;

  static constexpr std::size_t kMaxReported = 20;

 private:
  struct Problem {
    std::string path, message;
    std::size_t points = 0;
    std::vector<std::string> experiments;  // in order of appearance, each once
    std::string first_point, first_detail;
  };
  std::vector<Problem> problems_;
  std::map<std::pair<std::string, std::string>, std::size_t> index_;
};

}  // namespace decode_bench::sweeps
