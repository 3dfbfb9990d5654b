#include "sweeps/cli/window_capacity_table.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "harness/json_file.hpp"
#include "pools/capacity.hpp"
#include "pools/window_capacity.hpp"
#include "sweeps/cli/command.hpp"

namespace decode_bench::cli {

int run_window_capacity(std::uint64_t budget_bytes, const std::string& output, const std::vector<std::string>& argv) {
  nlohmann::json rows = nlohmann::json::array();
  std::printf("decode-bench capacity: sliding-window layers releasing the pages behind the window (host simulation)\n");
  std::printf("budget %s of K + V, page 16; bytes a sequence; windowed: the most held while growing to the context\n",
              format_bytes(budget_bytes).c_str());
  std::printf("\n  %-13s %-6s %6s %8s %12s %14s %14s %10s %10s\n", "model", "layers", "window", "context", "full layers",
              "windowed kept", "windowed rel.", "seqs kept", "seqs rel.");
  for (const WindowModel& m : sliding_window_models())
    for (std::int64_t context : {std::int64_t{32768}, std::int64_t{131072}}) {
      WindowCapacityQuery q;
      q.model = m;
      q.context = context;
      q.budget_bytes = budget_bytes;
      const WindowCapacityResult r = measure_window_capacity(q);
      const std::string layers = std::to_string(m.window_layers) + "/" + std::to_string(m.full_layers);
      std::printf("  %-13s %-6s %6lld %8lld %12s %14s %14s %10lld %10lld\n", m.name.c_str(), layers.c_str(),
                  static_cast<long long>(m.window), static_cast<long long>(context), format_bytes(r.bytes_full_layers).c_str(),
                  format_bytes(r.bytes_window_layers_kept).c_str(), format_bytes(r.bytes_window_layers_released).c_str(),
                  static_cast<long long>(r.sequences_kept), static_cast<long long>(r.sequences_released));
      nlohmann::json row = r.to_json();
      row["model"] = m.name;
      row["source"] = m.source;
      row["heads_kv"] = m.layer.heads_kv;
      row["head_dim"] = m.layer.head_dim;
      row["dtype"] = dtype_name(m.layer.dtype);
      row["window_layers"] = m.window_layers;
      row["full_layers"] = m.full_layers;
      row["window"] = m.window;
      row["context"] = context;
      row["page_size"] = q.page_size;
      row["budget_bytes"] = budget_bytes;
      rows.push_back(std::move(row));
    }
  std::printf("  (layers: windowed/full; seqs: sequences of that context the budget admits with the windowed layers\n"
              "   holding every page (kept) or releasing the pages behind the window (rel.))\n");
  if (!output.empty()) {
    write_json_atomic(output, {{"tool", "decode-bench capacity"}, {"argv", argv}, {"preset", "sliding-window"}, {"rows", rows}});
    std::printf("\nwrote %s\n", output.c_str());
  }
  return kExitOk;
}

}  // namespace decode_bench::cli
