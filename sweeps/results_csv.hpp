#pragma once
// A run as CSV: one row per point, for spreadsheets and data frames. Fields are quoted as RFC 4180
// says (a field holding a comma, a double quote or a line break is enclosed in double quotes, and
// its double quotes doubled); rows end with "\n". A value the point does not have is an empty field.
//
// Columns, in this order:
//   id, experiment, status, reason
//   every parameter any of the points has (the union, sorted by name); a parameter whose name is
//     one of the fixed columns is written as "parameters.<name>"
//   median_us, gbps, tflops, fraction_of_dram_read, fraction_of_read_floor   (timing, achieved)
//   model_bytes, model_flops                                                 (model)
//   verified (true / false), max_abs_error                                   (verification)
//   capacity_sequences, capacity_backend                                     (capacity points)
//   device_index (sweep --devices), device_name
// Numbers are written as JSON writes them (the shortest text that reads back to the same double).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

// One field as RFC 4180 writes it.
std::string csv_field(std::string_view text);

// `points` (of `document`, whose "device" and "devices" name each point's GPU) as CSV, header first.
std::string results_csv(const nlohmann::json& document, const std::vector<nlohmann::json>& points);

}  // namespace decode_bench::sweeps
