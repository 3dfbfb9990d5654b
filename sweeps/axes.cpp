#include "sweeps/axes.hpp"

#include <cmath>
#include <sstream>

#include "backends/registry.hpp"
#include "kernels/attention_variant.hpp"
#include "sweeps/point_kernel.hpp"
#include "sweeps/text_split.hpp"
#include "sweeps/window_release.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

bool is_paged(const json& p) { return p.value("layout", "") == "paged"; }
bool is_contiguous(const json& p) { return p.value("layout", "") == "contiguous"; }
bool has_prefix(const json& p) { return p.value("prefix_len", 0) > 0; }
// Capacity points count one shared level (prefix_len); the group level belongs to the decode runners.
bool may_group(const json& p) { return has_prefix(p) && !kernel_is(p, KernelKind::capacity); }
bool has_group_prefix(const json& p) { return may_group(p) && p.value("group_prefix_len", 0) > 0; }
bool is_shared_prefix(const json& p) { return kernel_is(p, KernelKind::shared_prefix); }
bool is_capacity(const json& p) { return kernel_is(p, KernelKind::capacity); }
bool is_mla(const json& p) { return p.value("attention", "mha") == "mla"; }
bool is_mha(const json& p) { return !is_mla(p); }
bool is_trace(const json& p) { return kernel_is(p, KernelKind::trace); }
bool not_trace(const json& p) { return !is_trace(p); }
bool is_lognormal_trace(const json& p) { return is_trace(p) && p.value("trace_lengths", "") == "lognormal"; }
bool zipf_lengths(const json& p) {
  return is_trace(p) ? p.value("trace_lengths", "") == "zipf" : p.value("length_dist", "") == "zipf";
}
bool has_budget(const json& p) { return is_capacity(p) || is_trace(p); }
// Capacity points of either layout sweep max_seq_len (Figure 5 draws the paged line across it).
bool sizes_a_slab(const json& p) { return is_contiguous(p) || is_capacity(p); }
bool times_a_kernel(const json& p) {
  const auto k = kernel_of(p);
  return !k || kernel_is_timed(*k);
}
// The GPU kernels are computed by a backend; the reference and capacity runners are their own.
bool uses_backend(const json& p) {
  const auto k = kernel_of(p);
  return k && kernel_uses_backend(*k);
}
// The CPU reference and the 3-kernel baseline have no split-K; capacity launches nothing.
bool splits_k(const json& p) {
  const auto k = kernel_of(p);
  return !k || kernel_splits_k(*k);
}

constexpr double kMaxTokens = 1 << 30;

// One line per axis. Order = expansion order (first varies slowest) = key order in point ids.
std::vector<AxisDef>& static_table() {
  static std::vector<AxisDef> axes = {
      // The values are the kernel table's (harness/kernel_kind.hpp), which also registers their runners.
      {"kernel", AxisType::string, kernel_names(), 0, 0, std::string(kernel_name(KernelKind::flash_decode)),
       "decode variant: cpu_reference (float64 host), baseline (3 kernels), flash_decode (split-K), "
       "batch_decode, shared_prefix; capacity = count sequences fitting budget_bytes, no kernel; trace = "
       "continuous batching over a serving trace in a pool of budget_bytes",
       true},
      // The values are the backend registry's (backends/registry.cpp), plugins loaded with
      // --backend-lib included (table() below follows it). Not in ids at its default, so points of
      // the project's own kernels keep the ids they had before the axis existed.
      {"backend", AxisType::string, backend_names(), 0, 0, std::string(kDefaultBackend),
       "what computes the kernel: decode-bench (this project's own kernels), flashinfer and flashinfer_tc "
       "(FlashInfer's CUDA-core and tensor-core decode, compiled in), or a plugin's backend (--backend-lib "
       "FILE.so); docs/backends.md", false, uses_backend},
      {"layout", AxisType::string, {"contiguous", "paged"}, 0, 0, "contiguous",
       "KV pool: contiguous (max_seq_len slab per sequence) or paged (fixed-size pages + block table)", true},
      {"dtype", AxisType::string, {"fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"}, 0, 0, "fp16",
       "storage type of K and V (q, o and accumulation are fp32); fp8_* with one K and one V scale per KV head",
       true},
      // MLA's rules (what it takes and refuses by name) are in sweeps/mla_axes.cpp.
      {"attention", AxisType::string, {"mha", "mla"}, 0, 0, "mha",
       "mha: per-KV-head K and V (MHA, GQA, MQA); mla: multi-head latent attention, one shared latent row of "
       "kv_lora_rank + rope_dim per token (DeepSeek-V3, Kimi K2)"},
      {"kv_lora_rank", AxisType::integer, {}, 1, 4096, 512,
       "MLA latent rank: the value width and the first part of the key (attention = mla)", false, is_mla},
      {"rope_dim", AxisType::integer, {}, 0, 1024, 64, "MLA rotary key columns after the latent (attention = mla)",
       false, is_mla},
      {"heads_q", AxisType::integer, {}, 1, 1024, 1, "query heads (must be a multiple of heads_kv)"},
      {"heads_kv", AxisType::integer, {}, 1, 1024, 1, "KV heads (grouped-query attention when < heads_q)", false,
       is_mha},
      {"head_dim", AxisType::integer, {}, 1, 1024, 128,
       "head dimension D; GPU kernels take multiples of 16 up to 256 (compiled for 64, 128 and 256; a "
       "smaller one runs on the next one up, tail masked) and skip others with the reason; cpu_reference: any",
       false, is_mha},
      {"batch", AxisType::integer, {}, 1, 1 << 20, 1, "sequences decoded together"},
      {"T", AxisType::integer, {}, 1, kMaxTokens, 4096,
       "tokens per sequence (the mean under uniform/zipf lengths); derived as prefix_len + "
       "group_prefix_len + suffix_len when prefix_len > 0",
       true, not_trace},
      {"length_dist", AxisType::string, {"fixed", "uniform", "zipf"}, 0, 0, "fixed",
       "sequence lengths in a batch: all T, uniform on [1, 2T-1], or zipf with mean T"},
      {"zipf_alpha", AxisType::number, {}, 1.01, 10, 1.5, "zipf exponent (length_dist or trace_lengths = zipf)",
       false, zipf_lengths},
      {"prefix_len", AxisType::integer, {}, 0, kMaxTokens, 0,
       "tokens of a prefix shared by every sequence of the batch (0: none)"},
      {"group_prefix_len", AxisType::integer, {}, 0, kMaxTokens, 0,
       "tokens of a second prefix after prefix_len, shared within each of `groups` groups of sequences "
       "(prefix_len > 0, decode kernels; 0: one level)",
       false, may_group},
      {"groups", AxisType::integer, {}, 1, 1 << 20, 1,
       "groups sharing a group prefix; sizes differ by at most one when batch % groups != 0 "
       "(group_prefix_len > 0)",
       false, has_group_prefix},
      {"suffix_len", AxisType::integer, {}, 1, kMaxTokens, 128,
       "unique tokens per sequence after the shared prefix (prefix_len > 0)", false, has_prefix},
      {"prefix_overlap", AxisType::boolean, {}, 0, 0, true,
       "shared_prefix: run the prefix phase on a second stream concurrently with the suffix phase "
       "(false: one stream, phases in order)",
       false, is_shared_prefix},
      // The attention variants (kernels/attention_variant.hpp; docs/sweeps.md, "Attention variants").
      {"q_len", AxisType::integer, {}, 1, kMaxQueryLen, 1,
       "query tokens per sequence (speculative decoding, multi-token prediction): the last q_len positions of "
       "the cache, causal among themselves; 1: plain decode",
       false, times_a_kernel},
      {"window", AxisType::integer, {}, 0, kMaxTokens, 0,
       "sliding window: each query token sees the last `window` positions up to and including its own "
       "(FlashInfer's window_left + 1); 0 or >= T: full attention",
       false, times_a_kernel},
      {"sinks", AxisType::boolean, {}, 0, 0, false,
       "attention sinks: one learned logit per query head (drawn from the seed) added to the softmax "
       "denominator, as gpt-oss does",
       false, times_a_kernel},
      {"logits_soft_cap", AxisType::number, {}, 0, 1e9, 0.0,
       "logit soft-capping: cap * tanh(logit / cap) after the 1/sqrt(head_dim) scale, as Gemma 2 does; 0: off",
       false, times_a_kernel},
      {"window_release", AxisType::boolean, {}, 0, 0, true,
       "paged points with a window (decode-bench's kernels): once filled, each sequence's pages wholly before its "
       "first query token's window go back to the pool (block-table entries -1) and the kernels run on that; "
       "false keeps every page",
       false, window_release_relevant},
      {"blocks", AxisType::integer_or_auto, {}, 1, 65535, "auto",
       "split-K block count, or auto (the kernel's own choice)", false, splits_k},
      {"page_size", AxisType::integer, {}, 1, 1 << 20, 16, "tokens per page (paged layout)", true, is_paged},
      {"page_order", AxisType::string, {"sequential", "shuffled", "churned"}, 0, 0, "sequential",
       "physical page placement: in order, randomly permuted, or after allocate/free churn (paged)", false,
       is_paged},
      {"fragmentation", AxisType::number, {}, 1, 1024, 1.0,
       "max_seq_len over actual length: of a contiguous slab (4 = 75% of the slab unused), and of any "
       "pool for capacity points",
       false, sizes_a_slab},
      {"budget_bytes", AxisType::integer, {}, 1, 1LL << 50, 4LL << 30,
       "KV memory budget the capacity count fills (kernel = capacity), or a trace's pool holds (kernel = trace)",
       false, has_budget},
      {"timing", AxisType::string, {"cold", "hot", "cold_write"}, 0, 0, "cold",
       "cold: L2 flushed (by a read) before every timed launch; hot: back-to-back launches; cold_write: "
       "flushed by a write, whose dirty lines' write-back lands in the measured launch",
       false, times_a_kernel},
      {"end_to_end", AxisType::boolean, {}, 0, 0, false,
       "also time host-to-device copy of K, V, q and the copy of o back (the seed paper's E2E; contiguous layout)", false,
       times_a_kernel},
      {"counters", AxisType::boolean, {}, 0, 0, true,
       "collect hardware counters in a separate profiled pass (one kernel replay per metric pass; "
       "false or --no-counters skips it)",
       false, times_a_kernel, true},
      {"layers", AxisType::integer, {}, 1, 1024, 1,
       "decode layers per step: L > 1 also allocates L caches of the point's shape (one per layer), plans "
       "once, captures the step's L launches in a CUDA graph and times its replay (cold: L2 flushed before "
       "the replay, not between layers) beside the single launch",
       false, uses_backend},
      // A serving trace (kernel = trace; sweeps/trace_point.hpp).
      {"requests", AxisType::integer, {}, 1, 1 << 20, 256, "trace: requests in the trace", false, is_trace},
      {"arrival_rate", AxisType::number, {}, 0, 1e6, 0.0,
       "trace: Poisson arrivals per decode step; 0 = every request arrives at step 0", false, is_trace},
      {"trace_lengths", AxisType::string, {"fixed", "uniform", "zipf", "lognormal"}, 0, 0, "fixed",
       "trace: distribution of prompt and output lengths around their means: fixed, uniform on [1, 2 x mean - 1], "
       "zipf (exponent zipf_alpha), lognormal (sd of the log length_sigma)",
       false, is_trace},
      {"prompt_len", AxisType::integer, {}, 1, 1 << 24, 256, "trace: mean prompt tokens of a request", false, is_trace},
      {"output_len", AxisType::integer, {}, 1, 1 << 24, 128, "trace: mean output tokens (decode steps) of a request",
       false, is_trace},
      {"length_sigma", AxisType::number, {}, 0.01, 4, 0.5, "trace: sd of the log of lognormal lengths", false,
       is_lognormal_trace},
      {"system_prompt_len", AxisType::integer, {}, 0, 1 << 20, 0,
       "trace: tokens of a system prompt every request's prompt starts with (0 = none); a paged pool shares its "
       "whole pages through the radix prefix cache, a contiguous slab holds its own copy",
       false, is_trace},
      {"system_prompts", AxisType::integer, {}, 1, 4096, 1,
       "trace: distinct system prompts the requests draw from (uniformly)", false, is_trace},
      {"steps", AxisType::integer, {}, 1, 1 << 24, 2000,
       "trace: decode steps at most (fewer when every request finished or was rejected)", false, is_trace},
      {"verify_every", AxisType::integer, {}, 1, 1 << 24, 100,
       "trace: the decode output is verified against the float64 reference at the first step, every N-th and the last",
       false, is_trace},
      {"host_overlap", AxisType::boolean, {}, 0, 0, false,
       "trace: each step's host work (scheduling, batch view, plan) runs while the previous step's decode is on the "
       "GPU, one step in flight, as a serving loop does (false: every step waits for its decode first)",
       false, is_trace},
      {"seed", AxisType::integer, {}, 0, 9007199254740992.0, 0,
       "seed of the random KV data, sequence lengths and page shuffles"},
  };
  return axes;
}

// The table with the backend axis's values brought up to the registry, which grows when plugins
// are loaded (before any sweep runs: the registry only grows, so a size check suffices).
const std::vector<AxisDef>& table() {
  std::vector<AxisDef>& axes = static_table();
  for (AxisDef& a : axes)
    if (a.name == "backend" && a.allowed.size() != registered_backends().size()) a.allowed = backend_names();
  return axes;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<long long>(v));
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}

}  // namespace

std::string_view axis_type_name(AxisType t) {
  switch (t) {
    case AxisType::integer: return "integer";
    case AxisType::number: return "number";
    case AxisType::string: return "string";
    case AxisType::boolean: return "boolean";
    case AxisType::integer_or_auto: return "integer or \"auto\"";
  }
  return "?";
}

std::span<const AxisDef> axis_table() { return table(); }

const AxisDef* find_axis(std::string_view name) {
  for (const AxisDef& a : table())
    if (a.name == name) return &a;
  return nullptr;
}

std::string timed_launch_id(std::string_view id) {
  std::string out;
  bool first = true;  // the experiment, never an axis
  for (const std::string_view part : split_at(id, '/')) {
    const std::size_t eq = part.find('=');
    const AxisDef* axis = first || eq == std::string_view::npos ? nullptr : find_axis(part.substr(0, eq));
    if (!(axis && axis->beside_timing)) out += (first ? "" : "/") + std::string(part);
    first = false;
  }
  return out;
}

std::string axis_domain_text(const AxisDef& axis) {
  switch (axis.type) {
    case AxisType::string: {
      std::string s = "one of: ";
      for (std::size_t i = 0; i < axis.allowed.size(); ++i) s += (i ? ", " : "") + std::string(axis.allowed[i]);
      return s;
    }
    case AxisType::boolean: return "true or false";
    case AxisType::integer:
      return "integer in [" + number_text(axis.min) + ", " + number_text(axis.max) + "]";
    case AxisType::integer_or_auto:
      return "integer in [" + number_text(axis.min) + ", " + number_text(axis.max) + "] or \"auto\"";
    case AxisType::number:
      return "number in [" + number_text(axis.min) + ", " + number_text(axis.max) + "]";
  }
  return "?";
}

std::string axis_value_error(const AxisDef& axis, const nlohmann::json& value) {
  const auto out_of_range = [&](double v) {
    return v < axis.min || v > axis.max ? "out of range: " + axis_domain_text(axis) + ", got " + value.dump()
                                        : std::string();
  };
  switch (axis.type) {
    case AxisType::string: {
      if (!value.is_string()) return "must be a string (" + axis_domain_text(axis) + "), got " + value.dump();
      for (auto a : axis.allowed)
        if (a == value.get<std::string>()) return {};
      return "unknown value " + value.dump() + " (" + axis_domain_text(axis) + ")";
    }
    case AxisType::boolean:
      return value.is_boolean() ? std::string() : "must be true or false, got " + value.dump();
    case AxisType::integer_or_auto:
      if (value.is_string() && value.get<std::string>() == "auto") return {};
      [[fallthrough]];
    case AxisType::integer:
      if (!value.is_number_integer()) return "must be an " + axis_domain_text(axis) + ", got " + value.dump();
      return out_of_range(value.get<double>());
    case AxisType::number:
      if (!value.is_number()) return "must be a " + axis_domain_text(axis) + ", got " + value.dump();
      if (!std::isfinite(value.get<double>())) return "must be finite, got " + value.dump();
      return out_of_range(value.get<double>());
  }
  return "unsupported axis type";
}

nlohmann::json normalize_axis_value(const AxisDef& axis, const nlohmann::json& value) {
  if (axis.type == AxisType::number && value.is_number()) return value.get<double>();
  return value;
}

std::string axis_value_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return number_text(value.get<double>());
  return value.dump();
}

}  // namespace decode_bench::sweeps
