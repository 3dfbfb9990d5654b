#include "sweeps/run_report.hpp"

#include <fstream>
#include <set>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "sweeps/backend_table.hpp"
#include "sweeps/partial_file.hpp"
#include "sweeps/results_table.hpp"

namespace decode_bench::sweeps {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string quoted(const fs::path& path) {
  std::string out(1, '\'');
  out += path.string();
  out += '\'';
  return out;
}

}  // namespace

std::string run_report(const json& doc, std::string_view format) {
  if (format == "json") return doc.dump(2) + "\n";
  const std::vector<json> points = doc.value("points", json::array()).get<std::vector<json>>();
  if (format == "console") {
    std::string out = format_results(doc, points, TableFormat::text);
    std::set<std::string> backends;
    for (const json& p : points) backends.insert(point_backend(p));
    if (backends.size() > 1)
      out += "\n" + std::string(kBackendsSideBySideHeading) + "\n" + format_backend_table(points, TableFormat::text);
    return out;
  }
  if (format == "csv") return format_results(doc, points, TableFormat::csv);
  throw std::invalid_argument("run_report: format '" + std::string(format) + "' is not one of console, json, csv");
}

std::optional<std::string> benchmark_out_problem(const fs::path& out, const fs::path& results) {
  std::error_code ec;
  if (fs::is_directory(out, ec)) return quoted(out) + " is a directory";
  for (const fs::path& taken : {results, partial_path_for(results)}) {
    std::error_code e1, e2;
    const fs::path a = fs::weakly_canonical(out, e1), b = fs::weakly_canonical(taken, e2);
    if (!e1 && !e2 && a == b)
      return quoted(out) + " is the sweep's own " + (taken == results ? "results file" : "sidecar") +
             "; name another file";
  }
  if (out.has_parent_path() && !fs::create_directories(out.parent_path(), ec) && ec)
    return "cannot create the folder " + out.parent_path().string() + ": " + ec.message();
  const bool existed = fs::exists(out, ec);
  {
    std::ofstream probe(out, std::ios::app);
    if (!probe) return quoted(out) + " cannot be opened for writing";
  }
  if (!existed) fs::remove(out, ec);
  return std::nullopt;
}

void write_run_report(const fs::path& out, const json& doc, std::string_view format) {
  const std::string text = run_report(doc, format);
  const fs::path tmp = out.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + out.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write " + out.string() + ": " + ec.message());
  }
}

}  // namespace decode_bench::sweeps
