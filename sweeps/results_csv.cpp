#include "sweeps/results_csv.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// The fixed columns after the parameters, each with where its value sits in a point.
struct Column {
  const char* name;
  std::vector<const char*> path;
};

const std::vector<Column>& measured_columns() {
  static const std::vector<Column> columns = {
      {"median_us", {"timing", "median_us"}},
      {"gbps", {"achieved", "gbps"}},
      {"tflops", {"achieved", "tflops"}},
      {"fraction_of_dram_read", {"achieved", "fraction_of_dram_read"}},
      {"fraction_of_read_floor", {"achieved", "fraction_of_read_floor"}},
      {"model_bytes", {"model", "bytes"}},
      {"model_flops", {"model", "flops"}},
      {"verified", {"verification", "passed"}},
      {"max_abs_error", {"verification", "max_abs_error"}},
      {"capacity_sequences", {"capacity", "sequences"}},
      {"capacity_backend", {"capacity", "backend"}},
      {"device_index", {"device"}},
  };
  return columns;
}

constexpr const char* kLeading[] = {"id", "experiment", "status", "reason"};
constexpr const char* kDeviceName = "device_name";

bool is_fixed_column(const std::string& name) {
  if (std::find(std::begin(kLeading), std::end(kLeading), name) != std::end(kLeading)) return true;
  for (const Column& c : measured_columns())
    if (name == c.name) return true;
  return name == kDeviceName;
}

// A JSON value as one CSV field's text: strings as they are, null as nothing, the rest as JSON.
std::string value_text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string value_at(const json& point, const std::vector<const char*>& path) {
  const json* at = &point;
  for (const char* key : path) {
    if (!at->is_object()) return "";
    const auto it = at->find(key);
    if (it == at->end()) return "";
    at = &*it;
  }
  return value_text(*at);
}

// The name of the GPU that measured `point`: its entry in "devices" (sweep --devices), else the
// document's "device".
std::string device_name(const json& document, const json& point) {
  if (const auto d = point.find("device"); d != point.end() && d->is_number_integer() && document.contains("devices"))
    for (const json& entry : document["devices"])
      if (entry.is_object() && entry.value("index", -1) == d->get<int>() && entry.contains("info") &&
          entry["info"].is_object())
        return entry["info"].value("name", "");
  if (const auto d = document.find("device"); d != document.end() && d->is_object()) return d->value("name", "");
  return "";
}

void write_row(std::ostringstream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
  out << "\n";
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string results_csv(const json& document, const std::vector<json>& points) {
  std::set<std::string> parameters;
  for (const json& p : points)
    if (const auto it = p.find("parameters"); it != p.end() && it->is_object())
      for (const auto& [name, _] : it->items()) parameters.insert(name);

  std::ostringstream out;
  std::vector<std::string> header(std::begin(kLeading), std::end(kLeading));
  for (const std::string& name : parameters) header.push_back(is_fixed_column(name) ? "parameters." + name : name);
  for (const Column& c : measured_columns()) header.emplace_back(c.name);
  header.emplace_back(kDeviceName);
  write_row(out, header);

  for (const json& p : points) {
    std::vector<std::string> row;
    for (const char* name : kLeading) row.push_back(value_at(p, {name}));
    for (const std::string& name : parameters) row.push_back(value_at(p, {"parameters", name.c_str()}));
    for (const Column& c : measured_columns()) row.push_back(value_at(p, c.path));
    row.push_back(device_name(document, p));
    write_row(out, row);
  }
  return out.str();
}

}  // namespace decode_bench::sweeps
