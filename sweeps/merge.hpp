#pragma once
// Joining shard files (`decode-bench merge`): points are united by id and ordered by their index in
// the full expansion. Files from different devices are refused unless allowed, since a mixed file
// would compare one GPU's numbers against another's ceilings.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

struct NamedDocument {
  std::string name;  // file name, for messages and meta.merged_from
  nlohmann::json document;
};

// Throws std::invalid_argument naming both files when devices differ (and !allow_mixed_devices) or
// when one id carries different parameters in two files. When one id appears twice, the better
// status wins (ok > verification_failed > skipped > error), the earlier file on a tie.
nlohmann::json merge_documents(const std::vector<NamedDocument>& docs, bool allow_mixed_devices,
                               const std::vector<std::string>& argv);

}  // namespace decode_bench::sweeps
