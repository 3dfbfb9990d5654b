#pragma once
// `decode-bench show --by-backend`: a results file whose points ran through several backends (the
// `backend` axis) read side by side, one row per shape. Pure functions over the results JSON
// (docs/results.md); the point selection is results_table.hpp's.
//
// A point's backend is parameters.backend (kDefaultBackend, "decode-bench", when absent); its shape is its id with
// the "backend=NAME" component removed, so the backends' points of one shape share a row. Columns,
// backends in a fixed order (decode-bench first, then the others by name):
//   shape                 the shape without its "<experiment>/" prefix (csv and json: the full shape)
//   <backend> (us)        the backend's timing.median_us when its point is ok; else its status
//                         ("skipped", "failed" for verification_failed, "error"); "-" when the
//                         backend has no point of this shape
//   <backend> / fastest   its median over the fastest ok backend's ("1.00" for the fastest); "-"
//                         unless the point is ok
//   fastest               the fastest ok backend; "-" for a shape with no ok point
// Text and markdown add a line under an experiment's table where its backends' ok points read q and
// wrote o in different types (backend.io_dtype: the pipeline converts outside timing, but each
// kernel's time holds its own q and o traffic), naming each backend's.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweeps/results_table.hpp"

namespace decode_bench::sweeps {

// One backend's point of one shape.
struct BackendCell {
  std::string status;               // "ok", "skipped", "failed", "error"; empty: no point
  std::optional<double> median_us;  // ok points only
  std::optional<double> over_fastest;
  std::string io_dtype;             // ok points only: backend.io_dtype, empty when the point has none
};

struct BackendRow {
  std::string experiment;
  std::string shape;  // the id without its backend component
  std::vector<BackendCell> cells;  // one per BackendTable::backends, in that order
  std::string fastest;             // empty when no backend is ok
};

struct BackendTable {
  std::vector<std::string> backends;  // decode-bench first (when present), then by name
  std::vector<BackendRow> rows;       // grouped by experiment (order of first appearance), shapes in file order
};

// A point's parameters.backend; kDefaultBackend (backends/registry.hpp) when it has none.
std::string point_backend(const nlohmann::json& point);
std::string shape_of(const nlohmann::json& point);

BackendTable backend_table(const std::vector<nlohmann::json>& points);

// The io line of one experiment's rows: "" when its backends' ok points share one io dtype (or
// record none), else "q and o: decode-bench fp32; flashinfer_mla bf16; ..." (a backend with several
// lists them joined by '/'), in the table's backend order.
std::string io_dtype_note(const BackendTable& t, const std::vector<const BackendRow*>& rows);

// The table in `format`: text and markdown tables grouped by experiment as results_table's, csv
// (shape, experiment, then <backend>_median_us, <backend>_status, <backend>_over_fastest per
// backend, fastest), json (an array of objects with the csv's fields; null for an empty value).
std::string format_backend_table(const std::vector<nlohmann::json>& points, TableFormat format);

}  // namespace decode_bench::sweeps
