#pragma once
// Paged decode points with a sliding window run on a pool released behind the window: once the pool
// is filled, every sequence's pages wholly before the first position its query tokens see
// (pools/windowed_pages.hpp, window_first_kept) go back to the free list and their block-table
// entries become PagedPool::kReleasedPage (-1), as a serving engine's windowed layer holds them. The
// point then shows that the kernels never read a page behind the window (a read of entry -1 would be
// out of bounds: compute-sanitizer's memcheck reports it) and records the pool it held.
//
// The axis `window_release` (default true) exists on the points it applies to: paged, a window,
// a timed decode kernel of decode-bench's own backend, MHA without a shared prefix. Other backends
// keep the full pool (FlashInfer takes a sequence's pages from its first entry and its decode loads
// the tokens before the window and masks them), as do shared-prefix batches (their prefix pages are
// shared by every sequence), and their points say so in pool.window_release and pool.reason.
// docs/pools.md, "Sliding-window layers".
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

// A paged point with a window (> 0) of a timed decode kernel, MHA, no shared prefix: a point whose
// pool could hold only its windows.
bool window_release_applies(const nlohmann::json& params);
// Why the point's backend cannot take released pages (any backend but decode-bench's own), or nullopt.
std::optional<std::string> window_release_backend_refusal(const nlohmann::json& params);
// The axis's relevance: it applies and the backend takes released pages.
bool window_release_relevant(const nlohmann::json& params);

// What a point's pool does: whether it releases, and the reason when a windowed paged point does not.
struct WindowReleasePlan {
  bool applies = false;  // window_release_applies, shared-prefix batches too: the point records a pool block
  bool release = false;
  std::string reason;    // applies && !release: why
};
WindowReleasePlan window_release_plan(const nlohmann::json& params);

// An expanded point's refusal: window_release true given (source names it) where nothing can be
// released (not a paged windowed decode point of decode-bench's own kernels); `full` are the point's
// parameters before irrelevant axes are dropped. The (path, message), or nullopt.
std::optional<std::pair<std::string, std::string>> window_release_problem(
    const nlohmann::json& full, const std::map<std::string, std::string>& source);

// The point's pool block: {layout, page_size, pages, pages_released, pages_held, bytes_held,
// window_release, reason?}. pages: every sequence's pages filled; bytes_held: K + V of the pages
// held after the release.
nlohmann::json window_pool_json(const WindowReleasePlan& plan, int page_size, std::int64_t pages,
                                std::int64_t pages_released, std::uint64_t page_bytes_kv);

}  // namespace decode_bench::sweeps
