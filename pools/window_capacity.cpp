#include "pools/window_capacity.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "pools/pool_error.hpp"
#include "pools/windowed_pages.hpp"

namespace decode_bench {

std::vector<WindowModel> sliding_window_models() {
  return {
      {"gpt-oss-120b",
       "openai/gpt-oss-120b config.json: num_key_value_heads 8, head_dim 64, sliding_window 128, num_hidden_layers 36, "
       "layer_types alternating sliding_attention and full_attention, torch_dtype bfloat16",
       {8, 64, DType::bf16}, 18, 18, 128},
      {"gpt-oss-20b",
       "openai/gpt-oss-20b config.json: num_key_value_heads 8, head_dim 64, sliding_window 128, num_hidden_layers 24, "
       "layer_types alternating sliding_attention and full_attention, torch_dtype bfloat16",
       {8, 64, DType::bf16}, 12, 12, 128},
      {"Gemma-3-27B",
       "google/gemma-3-27b-it config.json (text_config): num_key_value_heads 16, head_dim 128, sliding_window 1024, "
       "sliding_window_pattern 6, num_hidden_layers 62 (52 local, 10 global), torch_dtype bfloat16",
       {16, 128, DType::bf16}, 52, 10, 1024},
  };
}

std::string WindowCapacityQuery::invalid_reason() const {
  if (auto r = model.layer.invalid_reason(); !r.empty()) return model.name + ": " + r;
  if (model.window_layers < 0 || model.full_layers < 0 || model.window_layers + model.full_layers < 1)
    return model.name + ": layers must be >= 0 and at least one in all (got " + std::to_string(model.window_layers) +
           " windowed, " + std::to_string(model.full_layers) + " full)";
  if (model.window_layers > 0 && model.window < 1)
    return model.name + ": window must be >= 1 for windowed layers (got " + std::to_string(model.window) + ")";
  if (context < 1) return "context must be >= 1 (got " + std::to_string(context) + ")";
  if (page_size < 1) return "page_size must be >= 1 (got " + std::to_string(page_size) + ")";
  if ((context + page_size - 1) / page_size >= (std::int64_t{1} << 31))
    return "context " + std::to_string(context) + " at page_size " + std::to_string(page_size) + " needs 2^31 pages or more";
  if (budget_bytes == 0) return "budget must be > 0";
  return {};
}

WindowCapacityResult measure_window_capacity(const WindowCapacityQuery& q) {
  if (auto r = q.invalid_reason(); !r.empty()) throw PoolError(PoolErrorKind::InvalidArgument, "window capacity: " + r);
  WindowCapacityResult r;
  const std::int64_t ps = q.page_size;
  r.page_bytes = q.model.layer.token_kv_bytes() * static_cast<std::uint64_t>(ps);
  r.full_layer_pages = (q.context + ps - 1) / ps;

  // One windowed layer, one sequence, grown token by token in the real pool.
  PagedPoolConfig c;
  c.layout = q.model.layer;
  c.page_size = q.page_size;
  c.num_pages = static_cast<std::int32_t>(r.full_layer_pages);
  c.max_seq_len = q.context;
  c.max_seqs = 1;
  PagedPool pool(c, make_accounting_backend());
  const SequenceHandle h = pool.admit(nullptr, nullptr, 0);
  const std::int64_t window = q.model.window_layers > 0 ? q.model.window : 0;
  for (std::int64_t len = 1; len <= q.context; ++len) {
    pool.extend(h, 1);
    r.window_layer_pages_released += release_behind_window(pool, h, window);
    r.window_layer_pages_peak = std::max<std::int64_t>(r.window_layer_pages_peak, pool.pages().used_count());
  }
  r.window_layer_pages_held = pool.pages().used_count();

  const auto wl = static_cast<std::uint64_t>(q.model.window_layers), fl = static_cast<std::uint64_t>(q.model.full_layers);
  const auto full = static_cast<std::uint64_t>(r.full_layer_pages), peak = static_cast<std::uint64_t>(r.window_layer_pages_peak);
  r.bytes_full_layers = fl * full * r.page_bytes;
  r.bytes_window_layers_kept = wl * full * r.page_bytes;
  r.bytes_window_layers_released = wl * peak * r.page_bytes;
  r.budget_pages = static_cast<std::int64_t>(q.budget_bytes / r.page_bytes);
  const auto budget_pages = static_cast<std::uint64_t>(r.budget_pages);
  r.sequences_kept = static_cast<std::int64_t>(budget_pages / ((wl + fl) * full));
  r.sequences_released = static_cast<std::int64_t>(budget_pages / (wl * peak + fl * full));
  return r;
}

nlohmann::json WindowCapacityResult::to_json() const {
  return {{"page_bytes", page_bytes},
          {"full_layer_pages", full_layer_pages},
          {"window_layer_pages_held", window_layer_pages_held},
          {"window_layer_pages_peak", window_layer_pages_peak},
          {"window_layer_pages_released", window_layer_pages_released},
          {"bytes_full_layers", bytes_full_layers},
          {"bytes_window_layers_kept", bytes_window_layers_kept},
          {"bytes_window_layers_released", bytes_window_layers_released},
          {"budget_pages", budget_pages},
          {"sequences_kept", sequences_kept},
          {"sequences_released", sequences_released}};
}

}  // namespace decode_bench
