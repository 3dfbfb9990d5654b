#include "sweeps/point_problem.hpp"

#include "backends/registry.hpp"
#include "pools/shared_prefix_batch.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/layer_step.hpp"
#include "sweeps/mla_axes.hpp"
#include "sweeps/mla_point.hpp"
#include "sweeps/shared_prefix_point.hpp"

namespace decode_bench::sweeps {

bool is_shared_prefix_batch(KernelKind kernel, const nlohmann::json& p) {
  return kernel == KernelKind::shared_prefix ||
         (kernel == KernelKind::batch_decode && p.value("prefix_len", std::int64_t{0}) > 0);
}

std::optional<std::string> request_unsupported(KernelKind kernel, const nlohmann::json& p) {
  if (is_mla_point(p)) return mla_request_unsupported(p);
  if (auto why = layers_request_unsupported(p.value("layers", 1), p.value("end_to_end", false))) return why;
  return is_shared_prefix_batch(kernel, p) ? shared_prefix_request_unsupported(p) : decode_request_unsupported(p);
}

AttentionProblem describe_point(KernelKind kernel, const nlohmann::json& params) {
  if (is_mla_point(params)) return describe_mla_point(kernel, params);
  const bool shared = is_shared_prefix_batch(kernel, params);
  const SharedPrefixPoint sp = shared ? parse_shared_prefix_point(params) : SharedPrefixPoint{};
  const DecodePoint d = shared ? sp.decode : parse_decode_point(params);
  AttentionProblem p;
  p.kernel = kernel;
  p.shape = d.shape;
  p.batch = static_cast<int>(d.lengths.size());
  p.kv_dtype = d.dtype;
  p.layout = d.paged ? KvLayoutKind::paged : KvLayoutKind::contiguous;
  p.host_seq_lens = d.lengths;
  p.max_len = d.max_len();
  p.contiguous.head_dim = d.shape.head_dim;
  if (d.paged) {
    p.paged.page_size = d.page_size;
    p.paged.heads_kv = d.shape.heads_kv;
    p.paged.head_dim = d.shape.head_dim;
    p.host_indptr.assign(1, 0);
    for (const std::int32_t len : d.lengths) {
      p.host_indptr.push_back(p.host_indptr.back() + (len + d.page_size - 1) / d.page_size);
      p.host_last_page_len.push_back(len == 0 ? 0 : (len - 1) % d.page_size + 1);
    }
  }
  if (shared) p.prefix = shared_prefix_layout(sp.spec, d.page_size);
  p.splits = d.blocks;
  p.variant = d.variant;
  p.prefix_overlap = shared ? sp.overlap : true;
  return p;
}

MeasureRequest measure_request(const Point& point) {
  const DecodePoint d = parse_decode_point(point.parameters);
  return {point.id, parse_timing_mode(d.timing), d.end_to_end, d.counters, point.parameters.value("layers", 1)};
}

std::string backend_of(const nlohmann::json& params) {
  return params.value("backend", std::string(kDefaultBackend));
}

}  // namespace decode_bench::sweeps
