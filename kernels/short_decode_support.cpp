// Host rules of the short-sequence decode path (DecodePath::short_seq): which problems it runs,
// when the planner takes it, and how a block's share of the GQA group is chosen.
// The kernel and its launch: kernels/short_decode.cuh, kernels/short_decode_launch.cuh.
#include <algorithm>
#include <string>

#include "kernels/decode_launch.hpp"
#include "kernels/short_decode_variant.hpp"

namespace decode_bench {

std::optional<std::string> decode_short_unsupported_reason(const DecodeProblem& p, const DecodeOptions& options) {
  if (auto why = decode_unsupported_reason(p)) return why;
  const std::string path = "the short-sequence path (path short_seq)";
  // The variants: one query token, FP16 / BF16 (the only variant kernels compiled for it,
  // kernels/instantiate/short_decode_variant_*.cu); decode_unsupported_reason above has taken the
  // head dims the row twins take.
  if (!p.variant.plain() && p.variant.q_len != 1)
    return path + " takes one query token a sequence: q_len " + std::to_string(p.variant.q_len) +
           " runs on the tensor-core row path";
  if (!p.variant.plain() && p.kv_dtype != DType::fp16 && p.kv_dtype != DType::bf16)
    return path + " compiles its attention-variant kernels for FP16 and BF16 storage only: dtype " +
           std::string(dtype_name(p.kv_dtype)) + " with a window, sinks or a soft-cap runs on the tensor-core row path";
  if (p.kv_dtype == DType::fp32)
    return path + " takes FP16, BF16 and FP8 storage (an FP32 row of d 256 is 64 16-byte chunks, more than a warp "
                  "has lanes); dtype fp32 runs on the CUDA-core split-K path";
  // A window stages only its tokens (short_decode_tokens): min(max_len, window).
  const std::int64_t tokens = short_decode_tokens(p);
  const std::string windowed =
      tokens < p.max_len ? " (window " + std::to_string(p.variant.window) + ": " + std::to_string(tokens) + " tokens)" : "";
  if (tokens > kShortMaxLen)
    return path + " stages every sequence's whole K and V in shared memory: max_len " + std::to_string(p.max_len) +
           windowed + " is above its " + std::to_string(kShortMaxLen) + " tokens";
  const int row_bytes = p.shape.head_dim * static_cast<int>(dtype_bytes(p.kv_dtype));
  if (tokens > kShortFirstStageLen && row_bytes > kShortLongMaxRowBytes)
    return path + " stages rows of at most " + std::to_string(kShortLongMaxRowBytes) + " bytes beyond " +
           std::to_string(kShortFirstStageLen) + " tokens: max_len " + std::to_string(p.max_len) + windowed + " at head_dim " +
           std::to_string(p.shape.head_dim) + " in " + std::string(dtype_name(p.kv_dtype)) + " is " +
           std::to_string(row_bytes) + "-byte rows";
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

namespace {

// The long stage's blocks over a batch: (sequences x KV heads) pairs x the group's parts.
std::int64_t short_decode_long_blocks(const DecodeProblem& p, int sms) {
  const std::int64_t items = static_cast<std::int64_t>(p.num_seqs) * p.shape.heads_kv;
  const int heads = short_decode_long_heads_per_block(p.shape.group(), items, sms);
  return items * ((p.shape.group() + heads - 1) / heads);
}

}  // namespace

bool decode_prefers_short(const DecodeProblem& p, const DecodeOptions& options, bool paged, int sms) {
  // Pinned splits, heads per block, the separate merge kernel or a pinned tiling of the other paths
  // (DECODE_BENCH_FD_TILING, DECODE_BENCH_ROW_TILING) ask for those kernels (tuning probes, tests);
  // the policy's off keeps the older paths for side-by-side runs.
  const TuningPolicy& t = options.tuning;
  if (!t.fd_short_seq || options.splits > 0 || options.heads_per_block > 0 || !options.fused_merge) return false;
  if (t.fd_tiling != TilingOverride::automatic || t.row_tiling != RowAttentionTiling::automatic) return false;
  if (decode_short_unsupported_reason(p, options)) return false;
  const std::int64_t tokens = short_decode_tokens(p);  // a window's tokens, else max_len
  if (tokens <= kShortFirstStageLen) return true;
  // 65-128 tokens (the long stage): DECODE_BENCH_FD_SHORT_MAX_LEN 64 never, 128 wherever it runs.
  if (t.fd_short_max_len != 0) return tokens <= t.fd_short_max_len;
  // auto, attention variants: wherever the tensor-core row twins would run the point (the CUDA-core
  // twins at groups 1-2 keep it, as plain MHA keeps the split-K kernel), at any batch and any heads
  // a block. gpt-oss's sliding layers (d 64, group 8, BF16) ran faster there than on the row twins
  // at every batch from 1 to 128 on both layouts, whole groups of 8 a block included, once BF16 ran
  // on tensor cores (docs/kernels/short_decode.md, "Measured: the variants").
  if (!p.variant.plain()) return decode_prefers_tensor_core(p, t);
  // auto: only where the row-attention path would run the batch otherwise (MHA and groups 1-2, and
  // FP8 at the CUDA-core groups, keep their paths until measured against it), and there where the
  // long stage measured faster than the row kernel (H100, 32 / 8 heads, d 128, FP16 and BF16,
  // decode-row-probe and the sweep at acc01d7; docs/kernels/short_decode.md, "Measured: the long
  // stage"): blocks that fit one an SM over paged K/V (contiguous: level); more blocks than two an
  // SM on either layout; between one and two an SM, up to 96 tokens (at 128 the row kernel's one
  // wave of two blocks an SM was ahead).
  if (!decode_prefers_tensor_core(p)) return false;
  const std::int64_t blocks = short_decode_long_blocks(p, sms);
  const std::int64_t slots = std::max(sms, 1);
  if (blocks <= slots) return paged;
  if (blocks > 2 * slots) return true;
  return tokens <= kShortLongAutoMaxLenAtTwoPerSm;
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

int short_decode_long_heads_per_block(int group, std::int64_t items, int sms) {
  group = std::max(group, 1);
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  // A long-stage block stages up to 70 KB (d 128, 2 bytes): at most 3 fit an SM, and where the
  // pairs alone give a block an SM, another part would stage the pair again only to queue on a busy
  // SM. So parts only spread a pair over SMs the pairs leave idle.
  const std::int64_t fewest = ceil_div(group, kShortMaxBlockHeads);
  const std::int64_t most = std::max<std::int64_t>(fewest, group / kShortWarps);
  const std::int64_t fit = std::max<std::int64_t>(1, std::max(sms, 1) / std::max<std::int64_t>(items, 1));
  const std::int64_t parts = std::clamp(fit, fewest, most);
  return static_cast<int>(ceil_div(group, parts));
}

int short_decode_block_heads(const DecodeProblem& p, int sms) {
  const std::int64_t items = static_cast<std::int64_t>(p.num_seqs) * p.shape.heads_kv;
  return short_decode_tokens(p) > kShortFirstStageLen ? short_decode_long_heads_per_block(p.shape.group(), items, sms)
                                         : short_decode_heads_per_block(p.shape.group(), items, sms);
}

}  // namespace decode_bench
