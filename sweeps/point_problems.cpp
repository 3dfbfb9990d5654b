#include "sweeps/point_problems.hpp"

#include <algorithm>

namespace decode_bench::sweeps {

void PointProblems::add(const std::string& path, const std::string& message, const std::string& experiment,
                        const std::string& point_id, const std::string& detail) {
  const auto [it, inserted] = index_.try_emplace({path, message}, problems_.size());
  if (inserted) problems_.push_back({path, message, 0, {}, point_id, detail});
  Problem& p = problems_[it->second];
  ++p.points;
  if (std::find(p.experiments.begin(), p.experiments.end(), experiment) == p.experiments.end())
    p.experiments.push_back(experiment);
}

void PointProblems::report(std::vector<ConfigError>& errors) const {
  std::size_t rest_points = 0;
  for (std::size_t k = 0; k < problems_.size(); ++k) {
    const Problem& p = problems_[k];
    if (k >= kMaxReported) {
      rest_points += p.points;
      continue;
    }
    std::string where;
    if (p.points == 1) {
      where = "point " + p.first_point + p.first_detail;
    } else {
      where = std::to_string(p.points) + " points of experiment" + (p.experiments.size() == 1 ? " " : "s ");
      for (std::size_t e = 0; e < p.experiments.size(); ++e) where += (e == 0 ? "" : ", ") + p.experiments[e];
      where += "; the first: " + p.first_point + p.first_detail;
    }
    errors.push_back({p.path, p.message + " (" + where + ")"});
  }
  if (problems_.size() > kMaxReported)
    errors.push_back({"experiments", "... and " + std::to_string(problems_.size() - kMaxReported) +
                                         " more problems like the above, of " + std::to_string(rest_points) + " points"});
}

}  // namespace decode_bench::sweeps
