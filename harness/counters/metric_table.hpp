#pragma once
// The hardware counters decode-bench collects, as data: one MetricTrait per line, so adding a
// metric is adding a line. Names are Nsight Compute / CUPTI Perfworks metric names, so the same
// list can be passed to `ncu --metrics` for a cross-check (docs/counters.md).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace decode_bench::counters {

struct MetricTrait {
  std::string_view metric;       // Perfworks name, e.g. "dram__bytes_read.sum"
  std::string_view short_name;   // key used in tables and plots, e.g. "dram_read_bytes"
  std::string_view unit;         // "byte", "inst", "ns", "cycle/s"
  std::string_view description;  // one line, what it counts
};

// The default set: everything derive_counters() needs (bytes per memory level, FP32/FP16
// instruction counts, duration, SM clock).
std::span<const MetricTrait> default_metric_table();

// The trait for a Perfworks name, if it is in the default table.
std::optional<MetricTrait> find_metric_trait(std::string_view metric);

// Default metric names followed by the user's extra ones (comma-separated, e.g. from
// `--metrics a,b` or a config), in order, without duplicates. Throws std::invalid_argument
// naming the offending entry for an empty entry or one that is not a plausible metric name
// (Perfworks names look like unit__counter.rollup: lowercase, digits, '_' and '.').
std::vector<std::string> metric_names_with_extras(std::string_view extra_csv);

}  // namespace decode_bench::counters
