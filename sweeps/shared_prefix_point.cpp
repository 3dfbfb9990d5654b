#include "sweeps/shared_prefix_point.hpp"

#include "backends/decode_bench_support.hpp"
#include "sweeps/point_kernel.hpp"

namespace decode_bench::sweeps {

std::optional<std::string> shared_prefix_request_unsupported(const nlohmann::json& p) {
  const std::string kernel = p.value("kernel", std::string());
  if (p.value("prefix_len", std::int64_t{0}) < 1)
    return kernel + " with prefix_len 0: a shared-prefix batch needs prefix_len > 0";
  if (const std::string layout = p.value("layout", std::string("contiguous")); layout != "paged")
    return "layout " + layout + ": the sequences of a shared-prefix batch share pages, so it needs layout paged";
  if (const std::string dist = p.value("length_dist", std::string("fixed")); dist != "fixed")
    return "length_dist " + dist + ": a shared-prefix batch has fixed lengths (prefix_len + group_prefix_len + suffix_len)";
  if (p.value("end_to_end", false)) return std::string("end_to_end: shared-prefix points time the kernels only");
  if (auto r = parse_shared_prefix_point(p).spec.invalid_reason(); !r.empty()) return r;
  return std::nullopt;
}

std::optional<std::string> shared_prefix_point_unsupported(const nlohmann::json& p) {
  if (auto reason = shared_prefix_request_unsupported(p)) return reason;
  const DecodePoint d = parse_shared_prefix_point(p).decode;
  return decode_bench_unsupported(kernel_of(p).value_or(KernelKind::shared_prefix), d.shape, d.dtype, d.variant);
}

SharedPrefixPoint parse_shared_prefix_point(const nlohmann::json& p) {
  SharedPrefixPoint s;
  s.decode = parse_decode_point(p);
  s.spec.batch = p.value("batch", 1);
  s.spec.prefix_len = p.value("prefix_len", std::int64_t{0});
  s.spec.group_prefix_len = p.value("group_prefix_len", std::int64_t{0});
  s.spec.groups = p.value("groups", 1);
  s.spec.suffix_len = p.value("suffix_len", std::int64_t{128});
  s.overlap = p.value("prefix_overlap", true);
  s.decode.lengths.assign(s.spec.batch, static_cast<std::int32_t>(s.spec.length()));
  return s;
}

}  // namespace decode_bench::sweeps
