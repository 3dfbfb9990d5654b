#include "sweeps/compare/compare_results.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

namespace decode_bench::compare {
namespace {

using nlohmann::json;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The number at a dotted path, or nullopt when absent or not a number.
std::optional<double> number_at(const json& point, const std::string& path) {
  const json* cur = &point;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(key)) return std::nullopt;
    cur = &(*cur)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!cur->is_number()) return std::nullopt;
  return cur->get<double>();
}

}  // namespace

bool CompareReport::any_regression() const {
  for (const auto& p : common)
    if (p.regressed) return true;
  return false;
}

bool metric_lower_is_better(const std::string& metric) {
  return metric.rfind("timing.", 0) == 0 || ends_with(metric, "_us") || ends_with(metric, "_ns") ||
         ends_with(metric, "_ms");
}

CompareReport compare_results(const json& a, const json& b, const CompareOptions& options) {
  if (!(options.threshold >= 0 && options.threshold < 1))
    throw std::invalid_argument("--threshold must be in [0, 1), got " + std::to_string(options.threshold));
  if (options.metric.empty() || options.metric.front() == '.' || options.metric.back() == '.')
    throw std::invalid_argument("--metric '" + options.metric + "' is not a dotted path like achieved.gbps");

  CompareReport report;
  report.lower_is_better = options.lower_is_better.value_or(metric_lower_is_better(options.metric));
  std::map<std::string, const json*> in_b;
  for (const json& p : b.at("points")) in_b[p.at("id").get<std::string>()] = &p;
  std::map<std::string, bool> seen_in_a;
  for (const json& pa : a.at("points")) {
    const std::string id = pa.at("id").get<std::string>();
    seen_in_a[id] = true;
    const auto it = in_b.find(id);
    if (it == in_b.end()) {
      report.only_in_a.push_back(id);
      continue;
    }
    const json& pb = *it->second;
    const auto va = number_at(pa, options.metric), vb = number_at(pb, options.metric);
    if (pa.at("status") != "ok" || pb.at("status") != "ok" || !va || !vb || *va <= 0) {
      report.not_comparable.push_back(id);
      continue;
    }
    PointComparison c{id, *va, *vb, *vb / *va, false};
    c.regressed = report.lower_is_better ? c.ratio > 1 + options.threshold : c.ratio < 1 - options.threshold;
    report.common.push_back(c);
  }
  for (const auto& [id, p] : in_b)
    if (!seen_in_a.count(id)) report.only_in_b.push_back(id);
  return report;
}

std::string format_report(const CompareReport& report, const CompareOptions& options) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "metric %s (%s is better), threshold %.1f%%\n", options.metric.c_str(),
                report.lower_is_better ? "lower" : "higher", 100 * options.threshold);
  out += line;
  std::snprintf(line, sizeof line, "%-60s %14s %14s %8s\n", "point", "A", "B", "B/A");
  out += line;
  std::size_t regressions = 0;
  for (const auto& p : report.common) {
    std::snprintf(line, sizeof line, "%-60s %14.4g %14.4g %8.3f%s\n", p.id.c_str(), p.a, p.b, p.ratio,
                  p.regressed ? "  REGRESSION" : "");
    out += line;
    regressions += p.regressed;
  }
  std::snprintf(line, sizeof line, "%zu common point(s), %zu regression(s); %zu only in A, %zu only in B, %zu not comparable\n",
                report.common.size(), regressions, report.only_in_a.size(), report.only_in_b.size(),
                report.not_comparable.size());
  out += line;
  return out;
}

}  // namespace decode_bench::compare
