#pragma once
// The results document: the only interface between measuring and plotting/comparing.
// Layout (docs/results.md, docs/results.schema.json):
//   { schema_version: "MAJOR.MINOR", meta: {...}, device: {...}, ceilings: {...}, points: [...] }
// A reader accepts any minor version of its own major and older majors it knows; a newer major
// or a missing required field is rejected with the field's JSON path in the message.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench {

inline constexpr int kResultsSchemaMajor = 1;
// 1.1: an "ok" point may carry a `capacity` object instead of verification/timing/model.
inline constexpr int kResultsSchemaMinor = 2;  // 1.2: trace points
std::string results_schema_version();  // "1.2"
// Now, UTC, as meta.timestamp and gpu_state times write it: "2026-11-23T02:39:47Z".
std::string utc_timestamp();

// Point status values. Only "ok" points carry timing (or, for capacity counts, a `capacity`
// object); the others carry `reason`.
inline constexpr std::string_view kStatusOk = "ok";
inline constexpr std::string_view kStatusVerificationFailed = "verification_failed";
inline constexpr std::string_view kStatusSkipped = "skipped";
inline constexpr std::string_view kStatusError = "error";

class SchemaError : public std::runtime_error {
 public:
  SchemaError(std::string path, std::string reason)
      : std::runtime_error(path + ": " + reason), path_(std::move(path)), reason_(std::move(reason)) {}
  const std::string& path() const { return path_; }  // JSON path of the offending field
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

// meta.environment: every DECODE_BENCH_* variable of this process (tuning knobs such as
// DECODE_BENCH_FD_SPLIT_SCALE change what is measured; compare lists the ones that differ).
nlohmann::json decode_bench_environment();

// meta.build: build type, CUDA architectures, CUDA compiler and C++ compiler versions.
nlohmann::json build_provenance();

// meta block for a run started now: tool version, git {sha, dirty, source}, build, argv, UTC
// timestamp. (A sweep adds meta.gpu_state {start, end} from harness/gpu_state.hpp.)
nlohmann::json make_meta(const std::vector<std::string>& argv, std::string_view preset);

// A document with empty device/ceilings/points, ready to be filled.
nlohmann::json make_results_document(nlohmann::json meta, nlohmann::json device);

// Throws SchemaError for a newer major version, a missing required field or a wrong type.
void validate_results(const nlohmann::json& doc);

void write_results(const std::filesystem::path& path, const nlohmann::json& doc);  // validates, atomic
nlohmann::json read_results(const std::filesystem::path& path);                    // reads, validates

}  // namespace decode_bench
