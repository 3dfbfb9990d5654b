#pragma once
// `decode-bench compare FILE --backends A,B`: two backends of one results file (the `backend`
// axis) compared as two files are. The file's points are split by backend (parameters.backend,
// sweeps/backend_table.hpp's point_backend) into two documents that keep the file's meta, device
// and ceilings, each point's id replaced by its shape (the id without its "backend=NAME"
// component, backend_table.hpp's shape_of: the key `show --by-backend` pairs rows by). Then
// compare_results matches A's and B's points of one shape, and the report (ratios, intervals,
// geometric means, regressions, every format) is the two-file one.
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "sweeps/compare/compare_results.hpp"

namespace decode_bench::compare {

// "A,B" -> {A, B}. Throws std::invalid_argument naming --backends and the value unless it is two
// non-empty, different names separated by one comma.
std::pair<std::string, std::string> parse_backend_pair(const std::string& text);

struct BackendDocuments {
  nlohmann::json a, b;  // results documents of backend A's and backend B's points, ids = shapes
};

// Throws std::invalid_argument naming --backends for a backend with no point in `document` (the
// message lists the backends it has), for the same backend twice, and for two points of one
// backend with one shape (which would otherwise be paired arbitrarily). `document` must be
// schema-valid (validate_results).
BackendDocuments split_by_backend(const nlohmann::json& document, const std::string& a, const std::string& b);

// compare_results over split_by_backend's documents, with report.backend_a and backend_b set.
CompareReport compare_backends(const nlohmann::json& document, const std::string& a, const std::string& b,
                               const CompareOptions& options);

}  // namespace decode_bench::compare
