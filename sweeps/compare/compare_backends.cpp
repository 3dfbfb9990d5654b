#include "sweeps/compare/compare_backends.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "sweeps/backend_table.hpp"

namespace decode_bench::compare {
namespace {

using nlohmann::json;

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `document` with only `backend`'s points, each under its shape as its id.
json backend_document(const json& document, const std::string& backend) {
  json out = json::object();
  for (const auto& [key, value] : document.items())
    if (key != "points") out[key] = value;
  out["points"] = json::array();
  std::set<std::string> shapes;
  for (const json& p : document.at("points")) {
    if (sweeps::point_backend(p) != backend) continue;
    const std::string shape = sweeps::shape_of(p);
    if (!shapes.insert(shape).second)
      throw std::invalid_argument("--backends: backend '" + backend + "' has two points of shape '" + shape +
                                  "' (ids that differ only in their backend component)");
    json q = p;
    q["id"] = shape;
    out["points"].push_back(std::move(q));
  }
  return out;
}

}  // namespace

std::pair<std::string, std::string> parse_backend_pair(const std::string& text) {
  const auto comma = text.find(',');
  const std::string a = text.substr(0, comma);
  const std::string b = comma == std::string::npos ? std::string() : text.substr(comma + 1);
  if (comma == std::string::npos || a.empty() || b.empty() || b.find(',') != std::string::npos)
    throw std::invalid_argument("--backends '" + text + "': two backend names BASELINE,CANDIDATE (e.g. decode-bench,flashinfer)");
  if (a == b) throw std::invalid_argument("--backends '" + text + "': the same backend twice; name two different ones");
  return {a, b};
}

BackendDocuments split_by_backend(const json& document, const std::string& a, const std::string& b) {
  if (a == b) throw std::invalid_argument("--backends: '" + a + "' twice; name two different backends");
  std::set<std::string> present;
  for (const json& p : document.at("points")) present.insert(sweeps::point_backend(p));
  for (const std::string& name : {a, b})
    if (!present.count(name))
      throw std::invalid_argument("--backends: no point of backend '" + name + "' in the file (its backends: " +
                                  joined(present) + ")");
  return {backend_document(document, a), backend_document(document, b)};
}

CompareReport compare_backends(const json& document, const std::string& a, const std::string& b,
                               const CompareOptions& options) {
  const BackendDocuments docs = split_by_backend(document, a, b);
  CompareReport report = compare_results(docs.a, docs.b, options);
  report.backend_a = a;
  report.backend_b = b;
  return report;
}

}  // namespace decode_bench::compare
