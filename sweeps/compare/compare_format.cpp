#include "sweeps/compare/compare_format.hpp"

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "sweeps/results_csv.hpp"

namespace decode_bench::compare {
namespace {

using nlohmann::json;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string interval(const PointComparison& p) {
  if (!p.lo || !p.hi) return "n/a";
  return "[" + fmt("%.3f", *p.lo) + ", " + fmt("%.3f", *p.hi) + "]";
}

std::string verdict_label(const PointComparison& p) {
  switch (p.verdict) {
    case Verdict::regression: return "REGRESSION";
    case Verdict::improvement: return "improvement";
    case Verdict::noisy: return "NOISY (cannot judge)";
    case Verdict::unchanged: return p.lo ? "ok" : "ok (no samples)";
  }
  return "?";
}

// "  (of dram_read; devices 1.432)": the ceiling a normalised point is a fraction of, and its B / A.
std::string bound_note(const PointComparison& p) {
  if (p.bound.empty()) return "";
  return "  (of " + p.bound + (p.bound_ratio ? "; devices " + fmt("%.3f", *p.bound_ratio) : std::string()) + ")";
}

std::string header_line(const CompareReport& r) {
  std::string s = "metric " + r.metric + " (" + (r.lower_is_better ? "lower" : "higher") + " is better), threshold " +
                  fmt("%.1f", 100 * r.threshold) + "%; ratio = B / A with a bootstrap interval of the ratio of medians";
  return s;
}

std::string devices_line(const CompareReport& r) {
  if (!r.backend_a.empty())
    return "A: backend " + r.backend_a + ", B: backend " + r.backend_b + ", points paired by shape, on " + r.device_a +
           " (preset " + r.preset_a + ")";
  const auto runs = [](std::size_t n) { return n == 1 ? std::string() : std::to_string(n) + " runs on "; };
  return "A: " + runs(r.runs_a) + r.device_a + " (preset " + r.preset_a + "), B: " + runs(r.runs_b) + r.device_b +
         " (preset " + r.preset_b + ")";
}

std::string matched_beside_timing_line(const CompareReport& r) {
  return std::to_string(r.matched_beside_timing) +
         " point(s) matched by their timed launch, their ids differing in an axis beside the timing (counters)";
}

std::string summary_counts(const GroupSummary& g) {
  return std::to_string(g.count) + " point(s), geomean ratio " + fmt("%.3f", g.geomean_ratio) + ", " +
         std::to_string(g.regressions) + " regression(s), " + std::to_string(g.noisy) + " noisy, " +
         std::to_string(g.improvements) + " improvement(s)";
}

std::string text(const CompareReport& r) {
  std::string out = header_line(r) + "\n" + devices_line(r) + "\n";
  char line[768];
  if (!r.ceilings.empty()) {
    out += "device ceilings B / A:";
    for (const auto& c : r.ceilings)
      out += " " + c.name + " " + fmt("%.4g", c.b) + "/" + fmt("%.4g", c.a) + " " + c.unit + " = " + fmt("%.3f", c.ratio);
    out += "\n";
  }
  for (const auto& d : r.environment_differences) out += "environment differs: " + d + "\n";
  if (r.matched_beside_timing) out += matched_beside_timing_line(r) + "\n";
  std::snprintf(line, sizeof line, "%-64s %12s %12s %8s %17s  %s\n", "point", "A", "B", "B/A", "interval", "verdict");
  out += line;
  for (const auto& p : r.common) {
    std::snprintf(line, sizeof line, "%-64s %12.4g %12.4g %8.3f %17s  %s%s\n", p.id.c_str(), p.a, p.b, p.ratio,
                  interval(p).c_str(), verdict_label(p).c_str(), bound_note(p).c_str());
    out += line;
  }
  for (const auto& g : r.experiments)
    out += "experiment " + g.experiment + ": " + summary_counts(g) + "; worst " + g.worst_id + " (" +
           fmt("%.3f", g.worst_ratio) + ")\n";
  out += "overall: " + summary_counts(r.overall) + "\n";
  out += std::to_string(r.only_in_a.size()) + " only in A, " + std::to_string(r.only_in_b.size()) + " only in B, " +
         std::to_string(r.not_comparable.size()) + " not comparable\n";
  for (const auto& id : r.only_in_a) out += "  only in A: " + id + "\n";
  for (const auto& id : r.only_in_b) out += "  only in B: " + id + "\n";
  for (const auto& id : r.not_comparable) out += "  not comparable: " + id + "\n";
  return out;
}

std::string markdown(const CompareReport& r) {
  const std::size_t regressions = r.overall.regressions;
  std::string out = "## decode-bench compare: ";
  out += regressions ? std::to_string(regressions) + " regression(s)" : std::string("no regression");
  out += "\n\n- " + devices_line(r) + "\n- " + header_line(r) + "\n";
  for (const auto& d : r.environment_differences) out += "- environment differs: `" + d + "`\n";
  if (r.matched_beside_timing) out += "- " + matched_beside_timing_line(r) + "\n";
  if (!r.ceilings.empty()) {
    out += "\n| device ceiling | A | B | B / A |\n| --- | ---: | ---: | ---: |\n";
    for (const auto& c : r.ceilings)
      out += "| " + c.name + " (" + c.unit + ") | " + fmt("%.4g", c.a) + " | " + fmt("%.4g", c.b) + " | " +
             fmt("%.3f", c.ratio) + " |\n";
  }
  out += "\n| experiment | points | geomean B/A | regressions | noisy | worst point | worst B/A |\n"
         "| --- | ---: | ---: | ---: | ---: | --- | ---: |\n";
  for (const auto& g : r.experiments)
    out += "| " + g.experiment + " | " + std::to_string(g.count) + " | " + fmt("%.3f", g.geomean_ratio) + " | " +
           std::to_string(g.regressions) + " | " + std::to_string(g.noisy) + " | `" + g.worst_id + "` | " +
           fmt("%.3f", g.worst_ratio) + " |\n";
  out += "| **overall** | " + std::to_string(r.overall.count) + " | " + fmt("%.3f", r.overall.geomean_ratio) + " | " +
         std::to_string(r.overall.regressions) + " | " + std::to_string(r.overall.noisy) + " | `" + r.overall.worst_id +
         "` | " + fmt("%.3f", r.overall.worst_ratio) + " |\n";
  const bool normalized = r.metric == kFractionOfCeiling;
  out += "\n<details><summary>" + std::to_string(r.common.size()) + " point(s)</summary>\n\n"
         "| point | A | B | B/A | interval | verdict |" + std::string(normalized ? " ceiling | devices B/A |" : "") +
         "\n| --- | ---: | ---: | ---: | --- | --- |" + std::string(normalized ? " --- | ---: |" : "") + "\n";
  for (const auto& p : r.common) {
    out += "| `" + p.id + "` | " + fmt("%.4g", p.a) + " | " + fmt("%.4g", p.b) + " | " + fmt("%.3f", p.ratio) + " | " +
           interval(p) + " | " + (p.verdict == Verdict::regression ? "**REGRESSION**" : verdict_label(p)) + " |";
    if (normalized) out += " " + p.bound + " | " + (p.bound_ratio ? fmt("%.3f", *p.bound_ratio) : "n/a") + " |";
    out += "\n";
  }
  out += "\n</details>\n";
  if (!r.only_in_a.empty() || !r.only_in_b.empty() || !r.not_comparable.empty()) {
    out += "\nNot compared: " + std::to_string(r.only_in_a.size()) + " only in A, " +
           std::to_string(r.only_in_b.size()) + " only in B, " + std::to_string(r.not_comparable.size()) +
           " not ok in both.\n\n";
    for (const auto& id : r.only_in_a) out += "- only in A: `" + id + "`\n";
    for (const auto& id : r.only_in_b) out += "- only in B: `" + id + "`\n";
    for (const auto& id : r.not_comparable) out += "- not comparable: `" + id + "`\n";
  }
  return out;
}

json group_json(const GroupSummary& g) {
  return {{"count", g.count},           {"geomean_ratio", g.geomean_ratio}, {"regressions", g.regressions},
          {"improvements", g.improvements}, {"noisy", g.noisy},             {"worst_id", g.worst_id},
          {"worst_ratio", g.worst_ratio}};
}

// One row per point of the report: the compared ones with their numbers and verdict, then the
// ids not compared with the reason in the verdict column and the other fields empty.
std::string csv(const CompareReport& r) {
  const auto number = [](double v) { return json(v).dump(); };  // as results_csv writes numbers
  const auto row = [](const std::vector<std::string>& fields) {
    std::string line;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) line += ',';
      line += sweeps::csv_field(fields[i]);
    }
    return line + "\n";
  };
  std::string out = row({"id", "experiment", "a", "b", "ratio", "interval_lo", "interval_hi", "verdict", "samples_a",
                         "samples_b", "bound", "bound_device_ratio"});
  for (const auto& p : r.common)
    out += row({p.id, p.experiment, number(p.a), number(p.b), number(p.ratio), p.lo ? number(*p.lo) : "",
                p.hi ? number(*p.hi) : "", to_string(p.verdict), std::to_string(p.samples_a),
                std::to_string(p.samples_b), p.bound, p.bound_ratio ? number(*p.bound_ratio) : ""});
  for (const auto& [ids, why] : {std::pair{&r.only_in_a, "only_in_a"}, std::pair{&r.only_in_b, "only_in_b"},
                                 std::pair{&r.not_comparable, "not_comparable"}})
    for (const auto& id : *ids) out += row({id, "", "", "", "", "", "", why, "", "", "", ""});
  return out;
}

}  // namespace

Format parse_format(const std::string& text) {
  if (text == "text") return Format::text;
  if (text == "markdown") return Format::markdown;
  if (text == "json") return Format::json;
  if (text == "csv") return Format::csv;
  throw std::invalid_argument("--format '" + text + "': one of text, markdown, json, csv");
}

json report_to_json(const CompareReport& r) {
  json points = json::array();
  for (const auto& p : r.common) {
    json j = {{"id", p.id},         {"experiment", p.experiment}, {"a", p.a},
              {"b", p.b},           {"ratio", p.ratio},           {"verdict", to_string(p.verdict)},
              {"samples_a", p.samples_a}, {"samples_b", p.samples_b}};
    if (p.lo) j["interval"] = {*p.lo, *p.hi};
    if (!p.bound.empty()) j["bound"] = p.bound;
    if (p.bound_ratio) j["bound_device_ratio"] = *p.bound_ratio;
    points.push_back(j);
  }
  json experiments = json::object();
  for (const auto& g : r.experiments) experiments[g.experiment] = group_json(g);
  json ceilings = json::array();
  for (const auto& c : r.ceilings) ceilings.push_back({{"name", c.name}, {"unit", c.unit}, {"a", c.a}, {"b", c.b}, {"ratio", c.ratio}});
  json side_a = {{"device", r.device_a}, {"preset", r.preset_a}, {"runs", r.runs_a}},
       side_b = {{"device", r.device_b}, {"preset", r.preset_b}, {"runs", r.runs_b}};
  if (!r.backend_a.empty()) {
    side_a["backend"] = r.backend_a;
    side_b["backend"] = r.backend_b;
  }
  return {{"metric", r.metric},
          {"lower_is_better", r.lower_is_better},
          {"threshold", r.threshold},
          {"a", side_a},
          {"b", side_b},
          {"ceiling_ratios", ceilings},
          {"environment_differences", r.environment_differences},
          {"matched_beside_timing", r.matched_beside_timing},
          {"points", points},
          {"experiments", experiments},
          {"overall", group_json(r.overall)},
          {"regression", r.any_regression()},
          {"only_in_a", r.only_in_a},
          {"only_in_b", r.only_in_b},
          {"not_comparable", r.not_comparable}};
}

std::string format_report(const CompareReport& report, Format format) {
  switch (format) {
    case Format::text: return text(report);
    case Format::markdown: return markdown(report);
    case Format::json: return report_to_json(report).dump(1) + "\n";
    case Format::csv: return csv(report);
  }
  return "";
}

}  // namespace decode_bench::compare
