#include "harness/results_schema.hpp"

#include <chrono>
#include <cstdio>
#include <span>
#include <ctime>
#include <initializer_list>

#include <unistd.h>  // environ

#include "build_info.hpp"
#include "harness/json_file.hpp"

namespace decode_bench {
namespace {

using nlohmann::json;

enum class Kind { string, number, boolean, object, array };

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::string: return "a string";
    case Kind::number: return "a number";
    case Kind::boolean: return "a boolean";
    case Kind::object: return "an object";
    case Kind::array: return "an array";
  }
  return "?";
}

bool has_kind(const json& v, Kind k) {
  switch (k) {
    case Kind::string: return v.is_string();
    case Kind::number: return v.is_number();
    case Kind::boolean: return v.is_boolean();
    case Kind::object: return v.is_object();
    case Kind::array: return v.is_array();
  }
  return false;
}

struct Field {
  std::string_view path;  // dotted, relative to the object being checked
  Kind kind;
};

// The required fields, as data: docs/results.schema.json states the same lists
// (tests/test_results_schema.cpp checks that the two agree).
constexpr Field kTopFields[] = {{"schema_version", Kind::string}, {"meta", Kind::object},
                                {"device", Kind::object},        {"ceilings", Kind::object},
                                {"points", Kind::array}};
constexpr Field kMetaFields[] = {{"tool_version", Kind::string}, {"git.sha", Kind::string},
                                 {"git.dirty", Kind::boolean},   {"argv", Kind::array},
                                 {"timestamp", Kind::string},    {"preset", Kind::string}};
constexpr Field kDeviceFields[] = {{"name", Kind::string},           {"compute_capability", Kind::string},
                                   {"sm_count", Kind::number},       {"l2_bytes", Kind::number},
                                   {"memory_bytes", Kind::number},   {"sm_clock_khz", Kind::number},
                                   {"memory_clock_khz", Kind::number}, {"driver_version", Kind::number},
                                   {"runtime_version", Kind::number}};
constexpr Field kPointFields[] = {{"id", Kind::string}, {"parameters", Kind::object}, {"status", Kind::string}};
constexpr Field kVerificationFields[] = {{"verification.passed", Kind::boolean},
                                         {"verification.max_abs_error", Kind::number},
                                         {"verification.max_rel_error", Kind::number},
                                         {"verification.tolerance", Kind::number}};
constexpr Field kTimedFields[] = {{"timing.median_us", Kind::number}, {"timing.repetitions", Kind::number},
                                  {"model.bytes", Kind::number},      {"model.flops", Kind::number}};
// Provenance (optional, so files written before these fields stay valid; typed when present): how the commit
// was found, the build, and the GPU's state at the start and end of the run (harness/gpu_state.hpp).
constexpr Field kGitSourceField[] = {{"git.source", Kind::string}};
constexpr Field kBuildFields[] = {{"build.type", Kind::string}, {"build.cuda_architectures", Kind::string}};
constexpr Field kGpuStateFields[] = {{"gpu_state.start", Kind::object}, {"gpu_state.end", Kind::object}};
constexpr Field kGpuSnapshotFields[] = {{"source", Kind::string}, {"time", Kind::string}};
constexpr Field kReasonFields[] = {{"reason", Kind::string}};
// What computed a point (harness/backend.hpp): optional (points of older files, and of runners
// without a backend, have none), typed when present.
constexpr Field kBackendFields[] = {{"backend.name", Kind::string}, {"backend.version", Kind::string}};
// A paged decode point with a window records its pool (sweeps/window_release.hpp): optional (other
// points, and older files, have none), typed when present.
constexpr Field kPoolFields[] = {{"pool.pages", Kind::number},
                                 {"pool.pages_released", Kind::number},
                                 {"pool.pages_held", Kind::number},
                                 {"pool.window_release", Kind::boolean}};
// A trace (kernel = trace) times its steps: per-step arrays and a summary instead of one timing.
constexpr Field kTraceFields[] = {{"trace", Kind::object},
                                  {"trace.steps", Kind::object},
                                  {"trace.summary.steps", Kind::number},
                                  {"trace.summary.tokens_per_s", Kind::number},
                                  {"trace.summary.p99_step_us", Kind::number},
                                  {"trace.summary.peak_running", Kind::number}};
// A capacity count (kernel = capacity) launches nothing: its result is this object, not a timing.
constexpr Field kCapacityFields[] = {{"capacity", Kind::object},
                                     {"capacity.sequences", Kind::number},
                                     {"capacity.bytes_reserved", Kind::number},
                                     {"capacity.bytes_used", Kind::number},
                                     {"capacity.fragmentation", Kind::number}};

void require(const json& obj, const std::string& prefix, std::span<const Field> fields) {
  for (const Field& f : fields) {
    const json* cur = &obj;
    std::string path = prefix;
    std::string_view rest = f.path;
    while (true) {
      const auto dot = rest.find('.');
      const std::string key(rest.substr(0, dot));
      path += (path.empty() ? "" : ".") + key;
      if (!cur->is_object() || !cur->contains(key)) throw SchemaError(path, "missing required field");
      cur = &(*cur)[key];
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    if (!has_kind(*cur, f.kind)) throw SchemaError(path, "must be " + std::string(kind_name(f.kind)));
  }
}

void check_version(const json& doc) {
  const std::string v = doc.at("schema_version").get<std::string>();
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2)
    throw SchemaError("schema_version", "'" + v + "' is not of the form MAJOR.MINOR");
  if (major > kResultsSchemaMajor)
    throw SchemaError("schema_version", "major version " + std::to_string(major) +
                                            " is newer than this reader understands (" +
                                            std::to_string(kResultsSchemaMajor) + "); upgrade decode-bench");
  if (major < 1) throw SchemaError("schema_version", "unknown major version " + std::to_string(major));
}

void validate_provenance(const json& meta) {
  if (meta.at("git").contains("source")) require(meta, "meta", kGitSourceField);
  if (meta.contains("build")) require(meta, "meta", kBuildFields);
  if (meta.contains("gpu_state")) {
    require(meta, "meta", kGpuStateFields);
    for (const char* when : {"start", "end"})
      require(meta["gpu_state"][when], std::string("meta.gpu_state.") + when, kGpuSnapshotFields);
  }
}

}  // namespace

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json decode_bench_environment() {
  json env = json::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (entry.rfind("DECODE_BENCH_", 0) == 0 && eq != std::string_view::npos)
      env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  return env;
}

json build_provenance() {
  return {{"type", build_info::kBuildType},
          {"cuda_architectures", build_info::kCudaArchitectures},
          {"cuda_compiler_version", build_info::kCudaCompilerVersion},
          {"cxx_compiler", build_info::kCxxCompiler}};
}

std::string results_schema_version() {
  return std::to_string(kResultsSchemaMajor) + "." + std::to_string(kResultsSchemaMinor);
}

json make_meta(const std::vector<std::string>& argv, std::string_view preset) {
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  return {{"tool", "decode-bench"},
          {"tool_version", build_info::kToolVersion},
          {"git", {{"sha", build_info::kGitSha}, {"dirty", build_info::kGitDirty}, {"source", build_info::kGitSource}}},
          {"build", build_provenance()},
          {"environment", decode_bench_environment()},
          {"argv", argv},
          {"command", command},
          {"timestamp", utc_timestamp()},
          {"preset", preset},
          {"cuda_architectures", build_info::kCudaArchitectures}};
}

json make_results_document(json meta, json device) {
  return {{"schema_version", results_schema_version()},
          {"meta", std::move(meta)},
          {"device", std::move(device)},
          {"ceilings", json::object()},
          {"points", json::array()}};
}

void validate_results(const json& doc) {
  if (!doc.is_object()) throw SchemaError("$", "a results document must be a JSON object");
  require(doc, "", std::span<const Field>(kTopFields, 1));
  check_version(doc);  // before other fields: a newer major may have renamed them
  require(doc, "", kTopFields);
  require(doc.at("meta"), "meta", kMetaFields);
  validate_provenance(doc.at("meta"));
  require(doc.at("device"), "device", kDeviceFields);
  const json& points = doc.at("points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string p = "points[" + std::to_string(i) + "]";
    const json& pt = points[i];
    require(pt, p, kPointFields);
    if (pt.contains("backend")) require(pt, p, kBackendFields);
    if (pt.contains("pool")) require(pt, p, kPoolFields);
    const std::string status = pt.at("status").get<std::string>();
    if (status == kStatusOk && pt.contains("capacity")) {
      require(pt, p, kCapacityFields);
      if (pt.contains("timing")) throw SchemaError(p + ".timing", "a capacity point reports no timing");
    } else if (status == kStatusOk && pt.contains("trace")) {
      require(pt, p, kVerificationFields);
      require(pt, p, kTraceFields);
      if (!pt.at("verification").at("passed").get<bool>())
        throw SchemaError(p + ".verification.passed", "an 'ok' point must have passed verification");
    } else if (status == kStatusOk) {
      require(pt, p, kVerificationFields);
      require(pt, p, kTimedFields);
      if (!pt.at("verification").at("passed").get<bool>())
        throw SchemaError(p + ".verification.passed", "an 'ok' point must have passed verification");
    } else if (status == kStatusVerificationFailed) {
      require(pt, p, kVerificationFields);
      require(pt, p, kReasonFields);
      if (pt.contains("timing"))
        throw SchemaError(p + ".timing", "a point that failed verification reports no timing");
    } else if (status == kStatusSkipped || status == kStatusError) {
      require(pt, p, kReasonFields);
    } else {
      throw SchemaError(p + ".status", "unknown status '" + status + "'");
    }
  }
}

void write_results(const std::filesystem::path& path, const json& doc) {
  validate_results(doc);
  write_json_atomic(path, doc);
}

json read_results(const std::filesystem::path& path) {
  json doc = read_json_file(path);
  try {
    validate_results(doc);
  } catch (const SchemaError& e) {
    throw SchemaError(e.path(), e.reason() + " (in " + path.string() + ")");
  }
  return doc;
}

}  // namespace decode_bench
