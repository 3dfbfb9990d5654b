#include "sweeps/backend_table.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "backends/registry.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/text_split.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

std::string text_of(const json& point, const char* key) {
  const auto it = point.find(key);
  return it != point.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string printed(const char* format, double value) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), format, value);
  return buf.data();
}

// The word a cell shows for a point that is not ok.
std::string status_word(const std::string& status) {
  if (status == kStatusVerificationFailed) return "failed";
  return status.empty() ? "no status" : status;
}

std::string median_text(const BackendCell& c) {
  if (c.median_us) return printed("%.2f", *c.median_us);
  return c.status.empty() ? "-" : c.status;
}

std::string ratio_text(const BackendCell& c) { return c.over_fastest ? printed("%.2f", *c.over_fastest) : "-"; }

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

// The shape without its "<experiment>/" prefix.
std::string shape_name(const BackendRow& r) {
  const std::string prefix = r.experiment + "/";
  return prefix.size() > 1 && r.shape.starts_with(prefix) ? r.shape.substr(prefix.size()) : r.shape;
}

using Line = std::vector<std::string>;

Line header_of(const BackendTable& t) {
  Line h = {"shape"};
  for (const std::string& b : t.backends) h.push_back(b + " (us)");
  for (const std::string& b : t.backends) h.push_back(b + " / fastest");
  h.emplace_back("fastest");
  return h;
}

Line line_of(const BackendRow& r) {
  Line l = {shape_name(r)};
  for (const BackendCell& c : r.cells) l.push_back(median_text(c));
  for (const BackendCell& c : r.cells) l.push_back(ratio_text(c));
  l.push_back(or_dash(r.fastest));
  return l;
}

// Rows of one experiment, experiments in order of first appearance.
std::vector<std::pair<std::string, std::vector<const BackendRow*>>> by_experiment(const BackendTable& t) {
  std::vector<std::pair<std::string, std::vector<const BackendRow*>>> groups;
  for (const BackendRow& r : t.rows) {
    if (groups.empty() || groups.back().first != r.experiment) groups.push_back({r.experiment, {}});
    groups.back().second.push_back(&r);
  }
  return groups;
}

std::string heading(const std::string& experiment, std::size_t shapes) {
  return (experiment.empty() ? "(no experiment)" : experiment) + ": " + std::to_string(shapes) +
         (shapes == 1 ? " shape" : " shapes");
}

std::string text_table(const BackendTable& t) {
  std::ostringstream out;
  const Line header = header_of(t);
  const auto groups = by_experiment(t);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& [experiment, rows] = groups[gi];
    if (gi) out << "\n";
    out << heading(experiment, rows.size()) << "\n";
    std::vector<Line> lines = {header};
    for (const BackendRow* r : rows) lines.push_back(line_of(*r));
    std::vector<std::size_t> width(header.size(), 0);
    for (const Line& l : lines)
      for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], l[c].size());
    for (const Line& l : lines) {
      std::string s;
      for (std::size_t c = 0; c < width.size(); ++c) {
        const std::string pad(width[c] - l[c].size(), ' ');
        // The shape and fastest columns read left to right; numbers line up on the right.
        s += "  ";
        s += c == 0 || c + 1 == width.size() ? l[c] + pad : pad + l[c];
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out << s << "\n";
    }
    if (const std::string note = io_dtype_note(t, rows); !note.empty()) out << "  " << note << "\n";
  }
  return out.str();
}

std::string markdown_table(const BackendTable& t) {
  std::ostringstream out;
  const Line header = header_of(t);
  const auto groups = by_experiment(t);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& [experiment, rows] = groups[gi];
    if (gi) out << "\n";
    out << "### " << heading(experiment, rows.size()) << "\n\n|";
    for (const std::string& h : header) out << " " << h << " |";
    out << "\n|";
    for (std::size_t c = 0; c < header.size(); ++c) out << (c == 0 || c + 1 == header.size() ? " :--- |" : " ---: |");
    out << "\n";
    for (const BackendRow* r : rows) {
      Line l = line_of(*r);
      l[0] = "`" + l[0] + "`";  // ids hold no '|'
      out << "|";
      for (const std::string& c : l) out << " " << c << " |";
      out << "\n";
    }
    if (const std::string note = io_dtype_note(t, rows); !note.empty()) out << "\n" << note << "\n";
  }
  return out.str();
}

// Field names and values of one row, as csv and json carry them (nullopt: empty / null).
std::vector<std::pair<std::string, std::optional<json>>> fields_of(const BackendTable& t, const BackendRow& r) {
  std::vector<std::pair<std::string, std::optional<json>>> f = {{"shape", json(r.shape)},
                                                                {"experiment", json(r.experiment)}};
  for (std::size_t b = 0; b < t.backends.size(); ++b) {
    const BackendCell& c = r.cells[b];
    const std::string& name = t.backends[b];
    f.emplace_back(name + "_median_us", c.median_us ? std::optional<json>(*c.median_us) : std::nullopt);
    f.emplace_back(name + "_status", c.status.empty() ? std::nullopt : std::optional<json>(c.status));
    f.emplace_back(name + "_over_fastest", c.over_fastest ? std::optional<json>(*c.over_fastest) : std::nullopt);
  }
  f.emplace_back("fastest", r.fastest.empty() ? std::nullopt : std::optional<json>(r.fastest));
  return f;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_table(const BackendTable& t) {
  std::ostringstream out;
  const BackendRow empty{{}, {}, std::vector<BackendCell>(t.backends.size()), {}};
  const auto names = fields_of(t, empty);
  for (std::size_t i = 0; i < names.size(); ++i) out << (i ? "," : "") << names[i].first;
  out << "\n";
  for (const BackendRow& r : t.rows) {
    const auto f = fields_of(t, r);
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (i) out << ",";
      if (!f[i].second) continue;
      const json& v = *f[i].second;
      // Full precision for numbers: the csv is for further arithmetic.
      out << (v.is_string() ? csv_field(v.get<std::string>()) : printed("%.17g", v.get<double>()));
    }
    out << "\n";
  }
  return out.str();
}

std::string json_table(const BackendTable& t) {
  json rows = json::array();
  for (const BackendRow& r : t.rows) {
    json o = json::object();
    for (const auto& [name, value] : fields_of(t, r)) o[name] = value ? *value : json(nullptr);
    rows.push_back(std::move(o));
  }
  return rows.dump(2) + "\n";
}

}  // namespace

std::string point_backend(const json& point) {
  const auto params = point.find("parameters");
  if (params != point.end() && params->is_object()) {
    const std::string b = text_of(*params, "backend");
    if (!b.empty()) return b;
  }
  return std::string(kDefaultBackend);
}

std::string shape_of(const json& point) {
  const std::string id = text_of(point, "id");
  std::string out;
  for (const std::string_view part : split_at(id, '/'))
    if (!part.starts_with("backend=")) out += (out.empty() ? "" : "/") + std::string(part);
  return out;
}

BackendTable backend_table(const std::vector<json>& points) {
  BackendTable t;
  for (const json& p : points) {
    const std::string b = point_backend(p);
    if (std::find(t.backends.begin(), t.backends.end(), b) == t.backends.end()) t.backends.push_back(b);
  }
  std::sort(t.backends.begin(), t.backends.end(), [](const std::string& a, const std::string& b) {
    if ((a == kDefaultBackend) != (b == kDefaultBackend)) return a == kDefaultBackend;
    return a < b;
  });
  // Rows grouped by experiment in order of first appearance, shapes in file order within each.
  std::vector<std::string> experiments;
  std::map<std::string, std::vector<BackendRow>> rows;
  std::map<std::pair<std::string, std::string>, std::size_t> position;
  for (const json& p : points) {
    const std::string e = text_of(p, "experiment");
    const std::string s = shape_of(p);
    if (!rows.count(e)) experiments.push_back(e);
    auto& list = rows[e];
    const auto [it, added] = position.emplace(std::make_pair(e, s), list.size());
    if (added) list.push_back({e, s, std::vector<BackendCell>(t.backends.size()), {}});
    const std::size_t b =
        std::find(t.backends.begin(), t.backends.end(), point_backend(p)) - t.backends.begin();
    BackendCell& c = list[it->second].cells[b];
    const std::string status = text_of(p, "status");
    c = {};
    const auto timing = p.find("timing");
    const bool timed = timing != p.end() && timing->is_object() && timing->contains("median_us") &&
                       (*timing)["median_us"].is_number();
    if (status == kStatusOk && timed) {
      c.status = std::string(kStatusOk);
      c.median_us = (*timing)["median_us"].get<double>();
      const auto backend = p.find("backend");
      if (backend != p.end() && backend->is_object()) c.io_dtype = text_of(*backend, "io_dtype");
    } else {
      c.status = status_word(status);
    }
  }
  for (const std::string& e : experiments) {
    for (BackendRow& r : rows[e]) {
      std::optional<std::size_t> best;
      for (std::size_t b = 0; b < r.cells.size(); ++b)
        if (r.cells[b].median_us && (!best || *r.cells[b].median_us < *r.cells[*best].median_us)) best = b;
      if (best) {
        r.fastest = t.backends[*best];
        for (BackendCell& c : r.cells)
          if (c.median_us) c.over_fastest = *c.median_us / *r.cells[*best].median_us;
      }
      t.rows.push_back(std::move(r));
    }
  }
  return t;
}

std::string format_backend_table(const std::vector<json>& points, TableFormat format) {
  const BackendTable t = backend_table(points);
  switch (format) {
    case TableFormat::text:
      return text_table(t);
    case TableFormat::markdown:
      return markdown_table(t);
    case TableFormat::csv:
      return csv_table(t);
    case TableFormat::json:
      return json_table(t);
  }
  return {};
}

std::string io_dtype_note(const BackendTable& t, const std::vector<const BackendRow*>& rows) {
  // Each backend's io dtypes over its ok points, in order of first appearance.
  std::vector<std::vector<std::string>> types(t.backends.size());
  std::vector<std::string> all;
  for (const BackendRow* r : rows)
    for (std::size_t b = 0; b < r->cells.size() && b < types.size(); ++b) {
      const std::string& d = r->cells[b].io_dtype;
      if (d.empty()) continue;
      if (std::find(types[b].begin(), types[b].end(), d) == types[b].end()) types[b].push_back(d);
      if (std::find(all.begin(), all.end(), d) == all.end()) all.push_back(d);
    }
  if (all.size() < 2) return "";
  std::string note = "q and o:";
  bool first = true;
  for (std::size_t b = 0; b < types.size(); ++b) {
    if (types[b].empty()) continue;
    note += (first ? " " : "; ") + t.backends[b] + " ";
    for (std::size_t i = 0; i < types[b].size(); ++i) note += (i ? "/" : "") + types[b][i];
    first = false;
  }
  return note + " (each kernel's time holds its own q and o traffic; the pipeline converts outside timing)";
}

}  // namespace decode_bench::sweeps
