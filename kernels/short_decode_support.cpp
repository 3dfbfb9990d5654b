// Host rules of the short-sequence decode path (DecodePath::short_seq): which problems it runs,
// when the planner takes it, and how a block's share of the GQA group is chosen.
// The kernel and its launch: kernels/short_decode.cuh, kernels/short_decode_launch.cuh.
#include <algorithm>
#include <string>

#include "kernels/decode_launch.hpp"

namespace decode_bench {

std::optional<std::string> decode_short_unsupported_reason(const DecodeProblem& p, const DecodeOptions& options) {
  if (auto why = decode_unsupported_reason(p)) return why;
  const std::string path = "the short-sequence path (path short_seq)";
  if (!p.variant.plain())
    return path + " computes plain decode only (one query token, full attention, no soft-cap, no sinks); the "
                  "attention variants run on the split-K paths";
  if (p.kv_dtype == DType::fp32)
    return path + " takes FP16, BF16 and FP8 storage (an FP32 row of d 256 is 64 16-byte chunks, more than a warp "
                  "has lanes); dtype fp32 runs on the CUDA-core split-K path";
  if (p.max_len > kShortMaxLen)
    return path + " stages every sequence's whole K and V in shared memory: max_len " + std::to_string(p.max_len) +
           " is above its " + std::to_string(kShortMaxLen) + " tokens";
  const int group = p.shape.group();
  if (!((group >= 1 && group <= 16) || (p.shape.heads_kv == 1 && p.shape.heads_q <= 128)))
    return path + " takes GQA groups 1-16 and MQA up to 128 query heads (those of the tensor-core path), not group " +
           std::to_string(group);
  if (options.splits > 1)
    return path + " runs one block per sequence and KV head and never splits a sequence: splits " +
           std::to_string(options.splits) + " cannot be honoured";
  if (options.heads_per_block > 1)
    return path + " reads one KV head a block: heads_per_block " + std::to_string(options.heads_per_block) +
           " cannot be honoured";
  return std::nullopt;
}

bool decode_prefers_short(const DecodeProblem& p, const DecodeOptions& options) {
  // Pinned splits, heads per block, the separate merge kernel or a pinned tiling of the other paths
  // (DECODE_BENCH_FD_TILING, DECODE_BENCH_ROW_TILING) ask for those kernels (tuning probes, tests);
  // the policy's off keeps the older paths for side-by-side runs.
  const TuningPolicy& t = options.tuning;
  if (!t.fd_short_seq || options.splits > 0 || options.heads_per_block > 0 || !options.fused_merge) return false;
  if (t.fd_tiling != TilingOverride::automatic || t.row_tiling != RowAttentionTiling::automatic) return false;
  return !decode_short_unsupported_reason(p, options).has_value();
}

int short_decode_heads_per_block(int group, std::int64_t items, int sms) {
  group = std::max(group, 1);
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  // Fewest and most blocks a (sequence, KV head) pair may take: at most kShortMaxBlockHeads heads
  // a block; at least one head for each of the block's warps (but the last block's): each block
  // stages the pair's K/V again, and one of fewer heads leaves warps idle in the softmax.
  const std::int64_t fewest = ceil_div(group, kShortMaxBlockHeads);
  const std::int64_t most = std::max<std::int64_t>(fewest, group / kShortWarps);
  const std::int64_t wanted = ceil_div(std::int64_t{kShortTargetBlocksPerSm} * std::max(sms, 1), std::max<std::int64_t>(items, 1));
  const std::int64_t parts = std::clamp(wanted, fewest, most);
  return static_cast<int>(ceil_div(group, parts));
}

}  // namespace decode_bench
