#pragma once
// Presets compiled into the binary from configs/*.json (cmake/EmbedConfigs.cmake), so the default
// sweep runs with no files on disk.
#include <optional>
#include <string_view>
#include <vector>

namespace decode_bench {

struct EmbeddedPreset {
  std::string_view name;  // file stem: configs/<name>.json
  std::string_view json;  // the file's text
};

const std::vector<EmbeddedPreset>& embedded_presets();

inline std::optional<EmbeddedPreset> find_embedded_preset(std::string_view name) {
  for (const auto& p : embedded_presets())
    if (p.name == name) return p;
  return std::nullopt;
}

}  // namespace decode_bench
