#include "sweeps/results_table.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/results_schema.hpp"
#include "sweeps/results_csv.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// The value at `path` inside `point`, or null when any step is missing.
const json* find_at(const json& point, std::initializer_list<const char*> path) {
  const json* at = &point;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end() || it->is_null()) return nullptr;
    at = &*it;
  }
  return at;
}

std::optional<double> number_at(const json& point, std::initializer_list<const char*> path) {
  const json* v = find_at(point, path);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::string printed(const char* format, double value) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), format, value);
  return buf.data();
}

std::string cell(const std::optional<double>& value, const char* format) {
  return value ? printed(format, *value) : "-";
}

std::string text_of(const json& point, const char* key) {
  const auto it = point.find(key);
  return it != point.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The id without its "<experiment>/" prefix.
std::string point_name(const json& point) {
  const std::string id = text_of(point, "id");
  const std::string prefix = text_of(point, "experiment") + "/";
  return prefix.size() > 1 && id.starts_with(prefix) ? id.substr(prefix.size()) : id;
}

bool in_table(const std::string& status) { return status == kStatusOk || status == kStatusVerificationFailed; }

std::string reason_of(const json& point) {
  const std::string reason = text_of(point, "reason");
  return reason.empty() ? "(no reason recorded)" : reason;
}

// One experiment's points, in file order.
struct Group {
  std::string experiment;
  std::vector<const json*> points;
};

std::vector<Group> by_experiment(const std::vector<json>& points) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> position;
  for (const json& p : points) {
    const std::string e = text_of(p, "experiment");
    const auto [it, added] = position.emplace(e, groups.size());
    if (added) groups.push_back({e, {}});
    groups[it->second].points.push_back(&p);
  }
  return groups;
}

// "kernels_over_T: 10 points (9 ok, 1 skipped)"
std::string heading(const Group& g) {
  static const std::array<std::string_view, 4> kOrder = {kStatusOk, kStatusVerificationFailed, kStatusSkipped,
                                                         kStatusError};
  std::map<std::string, std::size_t> counts;
  std::vector<std::string> others;  // statuses outside the schema's four, in order of appearance
  for (const json* p : g.points) {
    const std::string s = text_of(*p, "status");
    if (counts[s]++ == 0 && std::find(kOrder.begin(), kOrder.end(), s) == kOrder.end()) others.push_back(s);
  }
  std::vector<std::string> parts;
  for (std::string_view s : kOrder)
    if (const auto it = counts.find(std::string(s)); it != counts.end())
      parts.push_back(std::to_string(it->second) + " " + it->first);
  for (const std::string& s : others) parts.push_back(std::to_string(counts[s]) + " " + (s.empty() ? "no status" : s));
  std::string out = (g.experiment.empty() ? "(no experiment)" : g.experiment) + ": " + std::to_string(g.points.size()) +
                    (g.points.size() == 1 ? " point (" : " points (");
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + ")";
}

using Row = std::vector<std::string>;

// An experiment with capacity points gets their count as an eighth column.
bool has_capacity(const Group& g) {
  return std::any_of(g.points.begin(), g.points.end(), [](const json* p) { return find_at(*p, {"capacity"}); });
}

Row header_of(bool capacity) {
  Row h = {"point", "median (us)", "GB/s", "of ceiling", "of floor", "verified", "max error"};
  if (capacity) h.emplace_back("sequences");
  return h;
}

Row row_of(const json& p, bool capacity) {
  const json* passed = find_at(p, {"verification", "passed"});
  Row r = {point_name(p),
           cell(number_at(p, {"timing", "median_us"}), "%.2f"),
           cell(number_at(p, {"achieved", "gbps"}), "%.1f"),
           cell(number_at(p, {"achieved", "fraction_of_dram_read"}), "%.3f"),
           cell(number_at(p, {"achieved", "fraction_of_read_floor"}), "%.3f"),
           passed == nullptr || !passed->is_boolean() ? "-"
           : passed->get<bool>()                      ? "yes"
                                                      : "no",
           cell(number_at(p, {"verification", "max_abs_error"}), "%.1e")};
  if (capacity) r.push_back(cell(number_at(p, {"capacity", "sequences"}), "%.0f"));
  return r;
}

constexpr std::size_t kVerifiedColumn = 5;

// Skipped / error points of one experiment: each with its reason, or per status the count and
// the first one when there are more than kListedUnmeasured.
std::vector<std::pair<std::string, std::string>> unmeasured_lines(const Group& g) {
  std::vector<const json*> listed;
  for (const json* p : g.points)
    if (!in_table(text_of(*p, "status"))) listed.push_back(p);
  std::vector<std::pair<std::string, std::string>> lines;  // status, text
  if (listed.size() <= kListedUnmeasured) {
    for (const json* p : listed) lines.emplace_back(text_of(*p, "status"), point_name(*p) + ": " + reason_of(*p));
    return lines;
  }
  std::map<std::string, std::pair<const json*, std::size_t>> first;  // status -> first point, count
  std::vector<std::string> order;
  for (const json* p : listed) {
    const std::string s = text_of(*p, "status");
    auto [it, added] = first.emplace(s, std::make_pair(p, 0));
    if (added) order.push_back(s);
    ++it->second.second;
  }
  for (const std::string& s : order) {
    const auto& [p, n] = first[s];
    lines.emplace_back(
        s, (n == 1 ? "" : std::to_string(n) + " points, the first ") + point_name(*p) + ": " + reason_of(*p));
  }
  return lines;
}

std::string text_table(const std::vector<Group>& groups) {
  std::ostringstream out;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    if (gi) out << "\n";
    out << heading(g) << "\n";
    const bool capacity = has_capacity(g);
    const Row header = header_of(capacity);
    std::vector<Row> rows;
    for (const json* p : g.points)
      if (in_table(text_of(*p, "status"))) rows.push_back(row_of(*p, capacity));
    if (!rows.empty()) {
      std::vector<std::size_t> width(header.size());
      for (std::size_t c = 0; c < width.size(); ++c) width[c] = header[c].size();
      for (const Row& r : rows)
        for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
      const auto line = [&](const Row& cells) {
        std::string s;
        for (std::size_t c = 0; c < width.size(); ++c) {
          const std::string pad(width[c] - cells[c].size(), ' ');
          // The point and verified columns read left to right; numbers line up on the right.
          s += "  ";
          s += c == 0 || c == kVerifiedColumn ? cells[c] + pad : pad + cells[c];
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        out << s << "\n";
      };
      line(header);
      for (const auto& r : rows) line(r);
    }
    for (const auto& [status, text] : unmeasured_lines(g)) out << "  " << status << "  " << text << "\n";
  }
  return out.str();
}

// A '|' would end the cell early.
std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_table(const std::vector<Group>& groups) {
  std::ostringstream out;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    if (gi) out << "\n";
    out << "### " << heading(g) << "\n\n";
    const bool capacity = has_capacity(g);
    bool any = false;
    for (const json* p : g.points) {
      if (!in_table(text_of(*p, "status"))) continue;
      if (!any) {
        const Row header = header_of(capacity);
        out << "|";
        for (const std::string& h : header) out << " " << h << " |";
        out << "\n|";
        for (std::size_t c = 0; c < header.size(); ++c) out << (c == 0 || c == kVerifiedColumn ? " :--- |" : " ---: |");
        out << "\n";
        any = true;
      }
      Row r = row_of(*p, capacity);
      r[0] = "`" + r[0] + "`";
      out << "|";
      for (const std::string& c : r) out << " " << markdown_cell(c) << " |";
      out << "\n";
    }
    const auto lines = unmeasured_lines(g);
    if (any && !lines.empty()) out << "\n";
    for (const auto& [status, text] : lines) out << "- " << status << ": " << text << "\n";
  }
  return out.str();
}

}  // namespace

std::optional<TableFormat> parse_table_format(std::string_view name) {
  if (name == "text") return TableFormat::text;
  if (name == "markdown") return TableFormat::markdown;
  if (name == "csv") return TableFormat::csv;
  if (name == "json") return TableFormat::json;
  return std::nullopt;
}

std::vector<json> select_points(const json& points, const PointSelection& selection) {
  std::optional<std::regex> filter;
  if (!selection.filter.empty()) {
    try {
      filter.emplace(selection.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--filter '" + selection.filter + "' is not a valid regular expression: " + e.what());
    }
  }
  std::set<std::string> present;
  for (const json& p : points) present.insert(text_of(p, "experiment"));
  for (const std::string& e : selection.experiments) {
    if (present.count(e)) continue;
    std::string names;
    for (const std::string& n : present) names += (names.empty() ? "" : ", ") + (n.empty() ? "(none)" : n);
    throw std::invalid_argument("--experiment '" + e + "': no point is in it (experiments here: " + names + ")");
  }
  const std::set<std::string> wanted(selection.experiments.begin(), selection.experiments.end());
  std::vector<json> out;
  for (const json& p : points) {
    if (!wanted.empty() && !wanted.count(text_of(p, "experiment"))) continue;
    const std::string id = text_of(p, "id");
    if (filter && !std::regex_search(id, *filter)) continue;
    out.push_back(p);
  }
  return out;
}

std::string point_outcome_text(const json& point) {
  const std::string status = text_of(point, "status");
  if (status == kStatusOk) {
    if (const auto sequences = number_at(point, {"capacity", "sequences"})) {
      const json* backend = find_at(point, {"capacity", "backend"});
      return "ok: " + printed("%.0f", *sequences) + " sequences" +
             (backend && backend->is_string() ? " (" + backend->get<std::string>() + ")" : "");
    }
    if (const auto tokens = number_at(point, {"trace", "summary", "tokens_per_s"})) {
      const auto steps = number_at(point, {"trace", "summary", "steps"});
      const auto peak = number_at(point, {"trace", "summary", "peak_running"});
      return "ok: " + printed("%.0f tokens/s", *tokens) + (steps ? ", " + printed("%.0f steps", *steps) : "") +
             (peak ? ", peak " + printed("%.0f", *peak) + " running" : "");
    }
    std::vector<std::string> parts;
    if (const auto v = number_at(point, {"timing", "median_us"})) parts.push_back(printed("%.2f us", *v));
    if (const auto v = number_at(point, {"achieved", "gbps"})) parts.push_back(printed("%.1f GB/s", *v));
    if (const auto v = number_at(point, {"achieved", "fraction_of_dram_read"}))
      parts.push_back(printed("%.3f of the DRAM read ceiling", *v));
    std::string out = "ok";
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : ": ") + parts[i];
    return out;
  }
  if (status == kStatusVerificationFailed) {
    const auto error = number_at(point, {"verification", "max_abs_error"});
    if (!error) return "verification failed (" + reason_of(point) + ")";
    const auto tolerance = number_at(point, {"verification", "tolerance"});
    return "verification failed (max error " + printed("%.1e", *error) +
           (tolerance ? ", tolerance " + printed("%g", *tolerance) : "") + ")";
  }
  return (status.empty() ? "no status" : status) + (point.contains("reason") ? " (" + reason_of(point) + ")" : "");
}

std::string results_table(const std::vector<json>& points, TableFormat format) {
  const std::vector<Group> groups = by_experiment(points);
  if (format == TableFormat::text) return text_table(groups);
  if (format == TableFormat::markdown) return markdown_table(groups);
  throw std::invalid_argument("results_table: text or markdown only");
}

std::string format_results(const json& document, const std::vector<json>& points, TableFormat format) {
  switch (format) {
    case TableFormat::text:
    case TableFormat::markdown:
      return results_table(points, format);
    case TableFormat::csv:
      return results_csv(document, points);
    case TableFormat::json:
      return json(points).dump(2) + "\n";
  }
  return {};
}

}  // namespace decode_bench::sweeps
