#include "sweeps/partial_file.hpp"

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "harness/results_schema.hpp"

namespace decode_bench::sweeps {

using nlohmann::json;

std::filesystem::path partial_path_for(const std::filesystem::path& output) {
  return output.string() + ".partial.jsonl";
}

namespace {

void write_line(std::FILE* f, const json& j, const std::filesystem::path& path) {
  const std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f) != line.size() || std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0)
    throw std::runtime_error("failed writing " + path.string());
}

}  // namespace

PartialWriter::PartialWriter(std::filesystem::path path, const json& header, const std::vector<json>& carried)
    : path_(std::move(path)) {
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path());
  const std::filesystem::path tmp = path_.string() + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot open " + tmp.string() + " for writing");
  try {
    write_line(f, header, tmp);
    for (const json& p : carried) write_line(f, p, tmp);
  } catch (...) {
    std::fclose(f);
    std::filesystem::remove(tmp);
    throw;
  }
  std::fclose(f);
  std::filesystem::rename(tmp, path_);  // an older sidecar is replaced only once this one is whole
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) throw std::runtime_error("cannot open " + path_.string() + " for appending");
}

PartialWriter::~PartialWriter() {
  if (file_) std::fclose(file_);
}

void PartialWriter::append(const json& point) { write_line(file_, point, path_); }

void PartialWriter::close_and_remove() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  std::filesystem::remove(path_);
}

PartialContents read_partial(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  PartialContents out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      ++out.unreadable_lines;
    } else if (j.contains("decode_bench_partial")) {
      out.header = std::move(j);
    } else if (j.contains("id") && j["id"].is_string()) {
      out.points.push_back(std::move(j));
    } else {
      ++out.unreadable_lines;
    }
  }
  return out;
}

std::vector<json> load_recorded_points(const std::filesystem::path& path, json* device) {
  std::map<std::string, json> by_id;  // later records of one id replace earlier ones
  std::vector<std::string> order;
  const auto add = [&](json p) {
    const std::string id = p["id"];
    if (!by_id.count(id)) order.push_back(id);
    by_id[id] = std::move(p);
  };
  const bool is_partial = path.string().ends_with(".partial.jsonl");
  const std::filesystem::path sidecar = is_partial ? path : partial_path_for(path);
  if (!is_partial && std::filesystem::exists(path)) {
    json doc = read_results(path);
    if (device) *device = doc["device"];
    for (auto& p : doc["points"]) add(std::move(p));
  } else if (!std::filesystem::exists(sidecar)) {
    throw std::runtime_error("cannot resume from " + path.string() + ": neither it nor " + sidecar.string() +
                             " exists");
  }
  if (std::filesystem::exists(sidecar)) {
    PartialContents partial = read_partial(sidecar);
    if (device && device->is_null() && partial.header.contains("device")) *device = partial.header["device"];
    for (auto& p : partial.points) add(std::move(p));
  }
  std::vector<json> out;
  for (const auto& id : order) out.push_back(std::move(by_id[id]));
  return out;
}

}  // namespace decode_bench::sweeps
