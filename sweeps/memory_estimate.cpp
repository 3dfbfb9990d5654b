#include "sweeps/memory_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/dtype.hpp"
#include "pools/shared_prefix_batch.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/mla_axes.hpp"
#include "sweeps/mla_point.hpp"
#include "sweeps/point_kernel.hpp"
#include "sweeps/trace_point.hpp"

namespace decode_bench::sweeps {

std::uint64_t estimate_device_bytes(const nlohmann::json& p) {
  const auto kernel = kernel_of(p);
  if (kernel == KernelKind::cpu_reference) return 0;
  if (kernel == KernelKind::capacity) return p.value("budget_bytes", std::uint64_t{0});
  if (kernel == KernelKind::trace) return trace_device_bytes(p);
  if (is_mla_point(p)) return estimate_mla_device_bytes(p);

  const std::uint64_t dtype_bytes = decode_bench::dtype_bytes(parse_dtype(p.value("dtype", "fp16")).value_or(DType::fp16));
  const std::uint64_t heads_kv = p.value("heads_kv", 1), heads_q = p.value("heads_q", 1);
  const std::uint64_t head_dim = p.value("head_dim", 128), batch = p.value("batch", 1);
  const std::uint64_t T = p.value("T", 1);
  const std::uint64_t prefix = p.value("prefix_len", 0);
  const bool variable = p.value("length_dist", "fixed") != "fixed";
  // Zipf: the support's top, which a draw may reach (far above 2T - 1 for heavy tails).
  const bool zipf = p.value("length_dist", "fixed") == "zipf";
  std::uint64_t max_len = variable ? 2 * T - 1 : T;
  if (zipf) {
    try {
      max_len = static_cast<std::uint64_t>(zipf_lengths_of(p).hi);
    } catch (const std::invalid_argument&) {
      // out of reach: decode_lengths_unsupported skips the point with the reason
    }
  }
  const std::uint64_t token_bytes = 2 * heads_kv * head_dim * dtype_bytes;  // one K row + one V row

  std::uint64_t kv_tokens = 0, table_bytes = 0;
  if (p.value("layout", "contiguous") == "paged") {
    const std::uint64_t page = p.value("page_size", 16);
    const auto pages_for = [&](std::uint64_t len) { return (len + page - 1) / page + (variable ? 1 : 0); };
    // A shared prefix is stored once (group prefixes once per group); each sequence owns its suffix
    // pages and a copy of a partial boundary page (pools/shared_prefix_batch.hpp counts them).
    SharedPrefixSpec spec;
    spec.batch = static_cast<int>(batch);
    spec.prefix_len = static_cast<std::int64_t>(prefix);
    spec.group_prefix_len = p.value("group_prefix_len", std::int64_t{0});
    spec.groups = p.value("groups", 1);
    spec.suffix_len = static_cast<std::int64_t>(T) - spec.prefix_len - spec.group_prefix_len;
    const std::uint64_t pages = prefix > 0 ? static_cast<std::uint64_t>(shared_prefix_pages(spec, static_cast<int>(page)))
                                           : batch * pages_for(T);
    kv_tokens = pages * page;
    table_bytes = 4 * (batch * pages_for(T) + batch + 1);  // page indices + indptr
  } else {
    const double fragmentation = p.value("fragmentation", 1.0);
    kv_tokens = batch * static_cast<std::uint64_t>(std::ceil(static_cast<double>(max_len) * fragmentation));
  }
  // q_len query rows per sequence (the attention variants; 1: plain decode).
  const std::uint64_t q_len = static_cast<std::uint64_t>(std::max(1, p.value("q_len", 1)));
  std::uint64_t q_and_o = 2 * batch * q_len * heads_q * head_dim * 4;
  // shared_prefix: level states (at most two levels per sequence) and the merge's inputs.
  if (kernel == KernelKind::shared_prefix) q_and_o += 2 * batch * heads_q * (head_dim + 1) * 4;
  // layers > 1: one cache, q, o and lse per layer (sweeps/layer_step.hpp).
  const std::uint64_t layers = p.value("layers", std::uint64_t{1});
  return layers * (kv_tokens * token_bytes + table_bytes + q_and_o);
}

}  // namespace decode_bench::sweeps
