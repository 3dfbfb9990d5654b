#include "sweeps/window_release.hpp"

#include "backends/registry.hpp"
#include "sweeps/point_kernel.hpp"

namespace decode_bench::sweeps {

using nlohmann::json;

bool window_release_applies(const json& p) {
  const auto kernel = kernel_of(p);
  return p.value("layout", std::string()) == "paged" && p.value("window", std::int64_t{0}) > 0 && kernel &&
         kernel_is_timed(*kernel) && kernel_uses_backend(*kernel) && p.value("attention", std::string("mha")) == "mha" &&
         p.value("prefix_len", std::int64_t{0}) == 0;
}

std::optional<std::string> window_release_backend_refusal(const json& p) {
  const std::string backend = p.value("backend", std::string(kDefaultBackend));
  if (backend == kDefaultBackend) return std::nullopt;
  if (backend.rfind("flashinfer", 0) == 0)
    return "backend " + backend +
           " keeps the full pool: FlashInfer's kernels take each sequence's pages from its first block-table entry "
           "(kv_indptr, kv_indices), and its CUDA-core decode loads the tokens before the window and masks them, so "
           "a released entry (-1) would be read out of bounds";
  return "backend " + backend +
         " keeps the full pool: released entries (-1) go to decode-bench's own kernels only, which start at the "
         "window; another backend's kernels may read a sequence's pages from its first entry";
}

bool window_release_relevant(const json& p) { return window_release_applies(p) && !window_release_backend_refusal(p); }

WindowReleasePlan window_release_plan(const json& p) {
  WindowReleasePlan plan;
  json flat = p;
  flat["prefix_len"] = 0;
  plan.applies = window_release_applies(flat);  // a shared-prefix batch records why it keeps every page
  if (!plan.applies) return plan;
  if (p.value("prefix_len", std::int64_t{0}) > 0) {
    plan.reason = "a shared-prefix batch keeps the full pool: its prefix pages are shared by every sequence (forked), "
                  "and only a plain batch's pages are released behind the window";
    return plan;
  }
  if (auto why = window_release_backend_refusal(p)) {
    plan.reason = *why;
    return plan;
  }
  plan.release = p.value("window_release", true);
  if (!plan.release) plan.reason = "window_release false: every page kept, as before the axis existed";
  return plan;
}

namespace {

// What keeps a point that window_release_applies refuses from releasing: its first such parameter.
std::string why_not_applicable(const json& p) {
  if (p.value("layout", std::string()) != "paged") return "layout " + p.value("layout", std::string("contiguous"));
  if (p.value("window", std::int64_t{0}) <= 0) return "window 0 (full attention reads every page)";
  if (p.value("attention", std::string("mha")) != "mha") return "attention " + p.value("attention", std::string());
  if (p.value("prefix_len", std::int64_t{0}) > 0) return "prefix_len > 0 (a shared-prefix batch shares its pages)";
  return "kernel " + p.value("kernel", std::string("?"));
}

}  // namespace

std::optional<std::pair<std::string, std::string>> window_release_problem(const json& full,
                                                                          const std::map<std::string, std::string>& source) {
  const auto given = source.find("window_release");
  if (given == source.end() || !full.value("window_release", true)) return std::nullopt;
  if (!window_release_applies(full))
    return std::make_pair(given->second, "window_release true with " + why_not_applicable(full) +
                                             ": pages are released behind the window of paged decode points only "
                                             "(layout paged, window > 0, a timed kernel, attention mha, prefix_len 0); "
                                             "set it where those are, or false");
  if (auto why = window_release_backend_refusal(full))
    return std::make_pair(given->second, "window_release true cannot be honoured: " + *why + "; set it false");
  return std::nullopt;
}

json window_pool_json(const WindowReleasePlan& plan, int page_size, std::int64_t pages, std::int64_t pages_released,
                      std::uint64_t page_bytes_kv) {
  json out = {{"layout", "paged"},
              {"page_size", page_size},
              {"pages", pages},
              {"pages_released", pages_released},
              {"pages_held", pages - pages_released},
              {"bytes_held", static_cast<std::uint64_t>(pages - pages_released) * page_bytes_kv},
              {"window_release", plan.release}};
  if (!plan.release) out["reason"] = plan.reason;
  return out;
}

}  // namespace decode_bench::sweeps
