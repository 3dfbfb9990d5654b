#pragma once
// Joining shard files (`decode-bench merge`): points are united by id and ordered by their index in
// the full expansion. Files from different devices are refused unless allowed, since a mixed file
// would compare one GPU's numbers against another's ceilings. Shards never share an id, so an id
// in two inputs is refused unless the caller says which one to keep: dropping one silently would
// lose a measurement.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

struct NamedDocument {
  std::string name;  // file name, for messages and meta.merged_from
  nlohmann::json document;
};

// What to do with an id that more than one input holds (`--on-duplicate`).
enum class OnDuplicate { refuse, first, last };
// "first" or "last"; nullopt for anything else. The name of `refuse` in meta.merge is "error".
std::optional<OnDuplicate> parse_on_duplicate(std::string_view text);
std::string on_duplicate_name(OnDuplicate policy);

// Throws std::invalid_argument naming both files when devices differ (and !allow_mixed_devices),
// when one id carries different parameters in two files, and (OnDuplicate::refuse) when an id is
// in two inputs: then the message names every pair of files that share ids with the first ids and
// their count. first / last keep the point of the earliest / latest input holding the id;
// meta.merge records the policy and how many duplicates were dropped, meta.merged_from[i]
// how many of that file's points were dropped.
nlohmann::json merge_documents(const std::vector<NamedDocument>& docs, bool allow_mixed_devices,
                               const std::vector<std::string>& argv,
                               OnDuplicate on_duplicate = OnDuplicate::refuse);

}  // namespace decode_bench::sweeps
