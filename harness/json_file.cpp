#include "harness/json_file.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace decode_bench {

void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& doc) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  const std::string text = doc.dump(2) + "\n";
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot open " + tmp.string() + " for writing");
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                    ::fsync(::fileno(f)) == 0;
    std::fclose(f);
    if (!ok) {
      std::filesystem::remove(tmp);
      throw std::runtime_error("failed writing " + tmp.string());
    }
  }
  std::filesystem::rename(tmp, path);
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(path.string() + " is not valid JSON: " + e.what());
  }
}

}  // namespace decode_bench
