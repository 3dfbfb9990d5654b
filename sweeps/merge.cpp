#include "sweeps/merge.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "harness/results_schema.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

std::string info_key(const json& d) { return d.value("name", "") + " (cc " + d.value("compute_capability", "") + ")"; }
std::string device_key(const json& doc) { return info_key(doc.at("device")); }

// A file from `sweep --devices` names every GPU that measured its points: all must match too.
std::vector<std::string> device_keys(const json& doc) {
  std::vector<std::string> keys = {device_key(doc)};
  for (const json& d : doc.value("devices", json::array()))
    if (d.contains("info") && d["info"].is_object()) keys.push_back(info_key(d["info"]));
  return keys;
}

constexpr std::size_t kIdsNamed = 5;  // per pair of files in the refusal; the rest are counted

// "later.json repeats 58 points of earlier.json: id, id, id, id, id and 53 more"
std::string repeats_line(const std::string& earlier, const std::string& later, const std::vector<std::string>& ids) {
  std::string line = later + " repeats " + std::to_string(ids.size()) + " point" + (ids.size() == 1 ? "" : "s") +
                     " of " + earlier + ": ";
  for (std::size_t i = 0; i < ids.size() && i < kIdsNamed; ++i) line += (i == 0 ? "" : ", ") + ids[i];
  if (ids.size() > kIdsNamed) line += " and " + std::to_string(ids.size() - kIdsNamed) + " more";
  return line;
}

}  // namespace

std::optional<OnDuplicate> parse_on_duplicate(std::string_view text) {
  if (text == "first") return OnDuplicate::first;
  if (text == "last") return OnDuplicate::last;
  return std::nullopt;
}

std::string on_duplicate_name(OnDuplicate policy) {
  switch (policy) {
    case OnDuplicate::first: return "first";
    case OnDuplicate::last: return "last";
    case OnDuplicate::refuse: break;
  }
  return "error";
}

json merge_documents(const std::vector<NamedDocument>& docs, bool allow_mixed_devices, const std::vector<std::string>& argv,
                     OnDuplicate on_duplicate) {
  if (docs.empty()) throw std::invalid_argument("nothing to merge");
  const NamedDocument& first = docs.front();
  json merged_from = json::array();
  std::map<std::string, json> by_id;
  std::map<std::string, std::size_t> kept_from;   // input holding the point kept so far
  std::map<std::string, std::size_t> first_from;  // input that held the id first, for messages
  // Ids of the later input of each pair (first holder, later input) that share them, in input order.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::string>> repeats;
  std::vector<std::size_t> dropped(docs.size(), 0);
  std::size_t dropped_points = 0;
  std::set<std::string> repeated_ids;
  double wall = 0, overhead = 0;
  bool complete = true;
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const NamedDocument& d = docs[k];
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
        kept_from[id] = first_from[id] = k;
        continue;
      }
      if (it->second["parameters"] != p["parameters"])
        throw std::invalid_argument("point " + id + " has different parameters in " + docs[kept_from[id]].name +
                                    " and " + d.name);
      repeats[{first_from[id], k}].push_back(id);
      repeated_ids.insert(id);
      ++dropped_points;
      if (on_duplicate == OnDuplicate::last) {
        ++dropped[kept_from[id]];
        it->second = p;
        kept_from[id] = k;
      } else {
        ++dropped[k];
      }
    }
  }
  if (on_duplicate == OnDuplicate::refuse && dropped_points > 0) {
    const std::size_t n = repeated_ids.size();
    std::string what = std::to_string(n) + " point id" + (n == 1 ? " is" : "s are") +
                       " in more than one file (the shards of one sweep never share an id):";
    for (const auto& [pair, ids] : repeats) what += "\n  " + repeats_line(docs[pair.first].name, docs[pair.second].name, ids);
    what += "\npass --on-duplicate first to keep the earlier file's point or --on-duplicate last to keep the later one's";
    throw std::invalid_argument(what);
  }
  for (std::size_t k = 0; k < docs.size(); ++k) merged_from[k]["duplicates_dropped"] = dropped[k];
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
  meta["merge"] = {{"on_duplicate", on_duplicate_name(on_duplicate)}, {"dropped_points", dropped_points}};
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
