#pragma once
// JSON files on disk. Writes are atomic (write a sibling temporary file, fsync, rename) so a
// reader or a crash never sees half a results file.
#include <filesystem>

#include <nlohmann/json.hpp>

namespace decode_bench {

void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& doc);
// Throws std::runtime_error naming the file on I/O or parse errors.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace decode_bench
