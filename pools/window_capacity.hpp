#pragma once
// What a sliding-window model saves in KV memory: a sequence's bytes in its windowed layers with
// the pages behind the window released (pools/windowed_pages.hpp) against the same layers holding
// every page, and how many sequences a budget admits either way (`decode-bench capacity --preset
// sliding-window`; docs/pools.md, "Sliding-window layers").
//
// Pages are one layer's page_size tokens (K and V), every layer's pages drawn from one budget:
//   full layer:      ceil(context / page) pages a sequence
//   windowed layer:  the most pages held while the sequence grows to `context` with release
//                    (window_peak_pages once context >= window + page - 1), measured on a PagedPool
//   sequences:       floor(floor(budget / page_bytes) / pages a sequence)
// The windowed peak, not the pages held at `context`, is what admission must count for a sequence
// to reach `context` without a refusal.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pools/kv_layout.hpp"

namespace decode_bench {

// A model's attention as KV memory sees it: layers of one KV shape, some windowed.
struct WindowModel {
  std::string name;        // "gpt-oss-120b"
  std::string source;      // the published config it comes from, keys named
  KVLayout layer;          // one layer's KV heads, head dim and storage type
  int window_layers = 0;   // layers with a sliding window
  int full_layers = 0;     // layers attending to every position
  std::int64_t window = 0; // the windowed layers' window (Hugging Face's sliding_window)
};

// gpt-oss-120b, gpt-oss-20b and Gemma-3-27B, as configs/models.json cites them.
std::vector<WindowModel> sliding_window_models();

struct WindowCapacityQuery {
  WindowModel model;
  std::int64_t context = 32768;  // tokens a sequence reaches
  int page_size = 16;
  std::uint64_t budget_bytes = std::uint64_t{16} << 30;
  std::string invalid_reason() const;  // empty when valid
};

struct WindowCapacityResult {
  std::uint64_t page_bytes = 0;                 // K + V of one layer's page
  std::int64_t full_layer_pages = 0;            // one layer holding every page at `context`
  std::int64_t window_layer_pages_held = 0;     // one windowed layer at `context`, released behind
  std::int64_t window_layer_pages_peak = 0;     // the most it held while growing to `context`
  std::int64_t window_layer_pages_released = 0; // pages it gave back on the way
  std::uint64_t bytes_full_layers = 0;          // a sequence, all full layers
  std::uint64_t bytes_window_layers_kept = 0;   // a sequence, the windowed layers holding every page
  std::uint64_t bytes_window_layers_released = 0; // a sequence, the windowed layers at their peak
  std::int64_t budget_pages = 0;                // floor(budget / page_bytes)
  std::int64_t sequences_kept = 0;              // admitted with every page held
  std::int64_t sequences_released = 0;          // admitted with the windowed layers released behind

  nlohmann::json to_json() const;
};

// Grows one sequence token by token to `context` in a PagedPool on the accounting backend,
// releasing behind the window after each token, and counts what the budget admits. Throws
// PoolError(InvalidArgument) for an invalid query.
WindowCapacityResult measure_window_capacity(const WindowCapacityQuery& query);

}  // namespace decode_bench
