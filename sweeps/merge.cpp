#include "sweeps/merge.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/results_schema.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

int status_rank(const json& p) {
  const std::string s = p.value("status", "");
  if (s == kStatusOk) return 0;
  if (s == kStatusVerificationFailed) return 1;
  if (s == kStatusSkipped) return 2;
  return 3;
}

std::string info_key(const json& d) { return d.value("name", "") + " (cc " + d.value("compute_capability", "") + ")"; }
std::string device_key(const json& doc) { return info_key(doc.at("device")); }

// A file from `sweep --devices` names every GPU that measured its points: all must match too.
std::vector<std::string> device_keys(const json& doc) {
  std::vector<std::string> keys = {device_key(doc)};
  for (const json& d : doc.value("devices", json::array()))
    if (d.contains("info") && d["info"].is_object()) keys.push_back(info_key(d["info"]));
  return keys;
}

}  // namespace

json merge_documents(const std::vector<NamedDocument>& docs, bool allow_mixed_devices, const std::vector<std::string>& argv) {
  if (docs.empty()) throw std::invalid_argument("nothing to merge");
  const NamedDocument& first = docs.front();
  json merged_from = json::array();
  std::map<std::string, json> by_id;
  std::map<std::string, std::string> source_of;
  double wall = 0, overhead = 0;
  bool complete = true;
  for (const NamedDocument& d : docs) {
    for (const std::string& key : device_keys(d.document))
      if (!allow_mixed_devices && key != device_key(first.document))
        throw std::invalid_argument(d.name + " was measured on " + key + " but " + first.name + " on " +
                                    device_key(first.document) + " (pass --allow-mixed-devices to merge anyway)");
    const json& sweep = d.document["meta"].value("sweep", json::object());
    merged_from.push_back({{"file", d.name},
                           {"device", d.document["device"].value("name", "")},
                           {"timestamp", d.document["meta"].value("timestamp", "")},
                           {"git_sha", d.document["meta"]["git"].value("sha", "")},
                           {"shard", sweep.value("shard", "")}});
    if (d.document.contains("devices")) merged_from.back()["devices"] = d.document["devices"];
    wall += sweep.value("wall_seconds", 0.0);
    overhead += sweep.value("overhead_seconds", 0.0);
    complete = complete && sweep.value("complete", true);
    for (const json& p : d.document["points"]) {
      const std::string id = p["id"];
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        by_id[id] = p;
        source_of[id] = d.name;
        continue;
      }
      if (it->second["parameters"] != p["parameters"])
        throw std::invalid_argument("point " + id + " has different parameters in " + source_of[id] + " and " + d.name);
      if (status_rank(p) < status_rank(it->second)) {
        it->second = p;
        source_of[id] = d.name;
      }
    }
  }
  // Shards of one split ("i/n", same n) that were not given make the merged set incomplete.
  std::set<std::size_t> shard_indices;
  std::set<std::size_t> shard_counts;
  for (const auto& m : merged_from) {
    std::size_t i = 0, n = 0;
    if (std::sscanf(m.value("shard", "").c_str(), "%zu/%zu", &i, &n) == 2) {
      shard_indices.insert(i);
      shard_counts.insert(n);
    }
  }
  json missing_shards = json::array();
  if (shard_counts.size() == 1)
    for (std::size_t i = 0; i < *shard_counts.begin(); ++i)
      if (!shard_indices.count(i)) missing_shards.push_back(std::to_string(i) + "/" + std::to_string(*shard_counts.begin()));

  std::vector<json> points;
  for (auto& [_, p] : by_id) points.push_back(std::move(p));
  std::stable_sort(points.begin(), points.end(), [](const json& a, const json& b) {
    return a.value("index", SIZE_MAX) < b.value("index", SIZE_MAX);
  });

  json meta = first.document["meta"];
  meta["argv"] = argv;
  meta["merged_from"] = merged_from;
  if (meta.contains("sweep")) {
    meta["sweep"]["shard"] = "merged";
    meta["sweep"]["planned_points"] = points.size();
    meta["sweep"]["wall_seconds"] = wall;  // machine time summed over the shards
    meta["sweep"]["overhead_seconds"] = overhead;
    meta["sweep"]["complete"] = complete && missing_shards.empty();
    meta["sweep"]["missing_shards"] = missing_shards;
  }
  json doc = make_results_document(meta, first.document["device"]);
  doc["ceilings"] = first.document["ceilings"];
  doc["points"] = points;
  return doc;
}

}  // namespace decode_bench::sweeps
