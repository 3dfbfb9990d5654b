#pragma once
// The sidecar that makes a sweep crash-proof: <output>.partial.jsonl, one JSON object per line,
// appended and flushed (fsync) as each point finishes. Line 1 is a header
// {"decode_bench_partial": 1, "meta": ..., "device": ...}; every other line is one point.
// A line cut short by a crash is ignored on reading.
#include <cstdio>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

std::filesystem::path partial_path_for(const std::filesystem::path& output);

class PartialWriter {
 public:
  // Starts the file afresh (atomically) with the header and `carried` points, then keeps it open
  // for appends.
  PartialWriter(std::filesystem::path path, const nlohmann::json& header, const std::vector<nlohmann::json>& carried);
  ~PartialWriter();
  PartialWriter(const PartialWriter&) = delete;
  PartialWriter& operator=(const PartialWriter&) = delete;

  void append(const nlohmann::json& point);  // one line, flushed to disk before returning
  void close_and_remove();                   // after the final document is safely written
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

struct PartialContents {
  nlohmann::json header;             // null when the file has none
  std::vector<nlohmann::json> points;
  std::size_t unreadable_lines = 0;  // e.g. the last line of a crashed run
};
PartialContents read_partial(const std::filesystem::path& path);

// The points already recorded for a sweep: `path` may be a final results document (its sidecar
// is read too when present), a .partial.jsonl, or a results path whose document was never
// written but whose sidecar exists. `device` receives the recorded device block when known.
std::vector<nlohmann::json> load_recorded_points(const std::filesystem::path& path, nlohmann::json* device = nullptr);

}  // namespace decode_bench::sweeps
