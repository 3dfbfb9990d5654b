#pragma once
// A shared-prefix point's parameters (prefix_len > 0): the decode parameters plus the batch's
// sharing structure (pools/shared_prefix_batch.hpp). Read by kernel=shared_prefix and by
// kernel=batch_decode when prefix_len > 0 (the plain decode over the same forked pages).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pools/shared_prefix_batch.hpp"
#include "sweeps/decode_point.hpp"

namespace decode_bench::sweeps {

struct SharedPrefixPoint {
  DecodePoint decode;     // shape, dtype, page size and order, blocks, timing, seed
  SharedPrefixSpec spec;  // N, P, Pg, groups, S
  bool overlap = true;    // shared_prefix: prefix and suffix phases on two streams
};

// Why no backend can measure this point as a shared-prefix batch (naming the parameter), or nullopt.
std::optional<std::string> shared_prefix_request_unsupported(const nlohmann::json& params);
// The same, then why decode-bench's own kernels cannot (backends/decode_bench_support.hpp), or nullopt.
std::optional<std::string> shared_prefix_point_unsupported(const nlohmann::json& params);
SharedPrefixPoint parse_shared_prefix_point(const nlohmann::json& params);

}  // namespace decode_bench::sweeps
