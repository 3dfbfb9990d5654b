#include "kernels/tuning_policy.hpp"

#include <unistd.h>  // environ

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <utility>

namespace decode_bench {
namespace {

// `text` among `choices`: sets `out` and returns true, or returns false.
template <class T>
bool choose(std::string_view text, std::initializer_list<std::pair<std::string_view, T>> choices, T& out) {
  for (const auto& [choice, value] : choices)
    if (text == choice) return out = value, true;
  return false;
}

// A number in (0, max], the whole text (strtod's syntax), or nullopt.
std::optional<double> number_in(std::string_view text, double max) {
  const std::string s(text);
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(value) || !(value > 0) || value > max) return std::nullopt;
  return value;
}

const std::array<TuningKnob, 27> kKnobs{{
    {"DECODE_BENCH_FD_SPLIT_SCALE", "a number in (0, 64]", "1",
     "multiplies the CUDA-core flash-decode planner's own split count (at least 1; an explicit blocks is not "
     "scaled); below 1: a deliberately slowed run",
     [](TuningPolicy& p, std::string_view t) {
       const auto v = number_in(t, 64);
       return v ? (p.fd_split_scale = *v, true) : false;
     }},
    {"DECODE_BENCH_FD_TILING", "auto | standard | short | deep", "auto",
     "pins the CUDA-core tiling at GQA group 1 (deep: FP16 and BF16 at head dims 80-128 only) and group 2 "
     "(short: FP16 and BF16 plain decodes at head dims 80-128 only), the groups that compile more than standard; "
     "other groups, storage types and head dims keep standard",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t,
                     {std::pair{std::string_view("auto"), TilingOverride::automatic},
                      std::pair{std::string_view("standard"), TilingOverride::standard},
                      std::pair{std::string_view("short"), TilingOverride::short_batch},
                      std::pair{std::string_view("deep"), TilingOverride::deep}},
                     p.fd_tiling);
     }},
    {"DECODE_BENCH_FD_BALANCE", "1 | 0", "1",
     "0 plans ragged batches like uniform ones (no work list on either path: every sequence split alike by the "
     "longest)",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("1"), true}, std::pair{std::string_view("0"), false}}, p.fd_balance);
     }},
    {"DECODE_BENCH_FD_WORK_CHUNKS", "auto | tiles | ranges", "auto",
     "how the splits of a CUDA-core work-list sequence share it: tile by tile (auto), or one contiguous range of "
     "the chunk bound each",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t,
                     {std::pair{std::string_view("auto"), WorkChunksOverride::automatic},
                      std::pair{std::string_view("tiles"), WorkChunksOverride::tiles},
                      std::pair{std::string_view("ranges"), WorkChunksOverride::ranges}},
                     p.fd_work_chunks);
     }},
    {"DECODE_BENCH_FD_SHORT_HEADS", "1 | 2 | 4", "1",
     "KV heads per block of the short CUDA-core tiling (its 4 warps in that many groups), where it divides H_kv",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("1"), 1}, std::pair{std::string_view("2"), 2}, std::pair{std::string_view("4"), 4}},
                     p.fd_short_heads);
     }},
    {"DECODE_BENCH_FD_SHORT_SEQ", "auto | off", "auto",
     "off keeps every decode the short-sequence kernel would take (at most 128 tokens a sequence, or a one-token "
     "window of at most 128) on the split-K / row-attention paths instead (docs/kernels/short_decode.md), for "
     "side-by-side runs",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), true}, std::pair{std::string_view("off"), false}},
                     p.fd_short_seq);
     }},
    {"DECODE_BENCH_FD_SHORT_MAX_LEN", "auto | 64 | 128", "auto",
     "the longest batch (max_len, or a one-token window's tokens) that decodes take the short-sequence kernel for: "
     "64 keeps 65-128 tokens on the split-K / row-attention paths, 128 takes the kernel wherever it runs them; auto: "
     "128 for plain decodes the row-attention path would take, paged at one block an SM or fewer, up to 96 tokens "
     "at one to two, any beyond two, and for every variant decode the row twins would take "
     "(docs/kernels/short_decode.md)",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), 0}, std::pair{std::string_view("64"), 64},
                         std::pair{std::string_view("128"), 128}},
                     p.fd_short_max_len);
     }},
    {"DECODE_BENCH_FD_VARIANT_PATH", "auto | tensor_core", "auto",
     "tensor_core sends every attention-variant point to the tensor-core row family, as before the CUDA-core "
     "variant kernels (auto: one query token at GQA groups 1-2, FP16/BF16, head dims 80-128, stays on CUDA cores)",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t,
                     {std::pair{std::string_view("auto"), VariantPathOverride::automatic},
                      std::pair{std::string_view("tensor_core"), VariantPathOverride::tensor_core}},
                     p.fd_variant_path);
     }},
    {"DECODE_BENCH_ROW_TILING", "auto | narrow | wide | wgmma", "auto",
     "pins the tensor-core row attention's tiling: narrow (4 warps x 1 row tile) everywhere, wide (8 x 2) for "
     "items of more than 16 rows, wgmma for every item where that kernel runs",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t,
                     {std::pair{std::string_view("auto"), RowAttentionTiling::automatic},
                      std::pair{std::string_view("narrow"), RowAttentionTiling::narrow},
                      std::pair{std::string_view("wide"), RowAttentionTiling::wide},
                      std::pair{std::string_view("wgmma"), RowAttentionTiling::wgmma}},
                     p.row_tiling);
     }},
    {"DECODE_BENCH_ROW_WGMMA_ROWS", "auto | 64 | 128", "auto",
     "rows of an FP16 warpgroup-MMA block (64: one warpgroup, 128: two); auto: 64 for items of up to 64 rows, "
     "else 128. BF16 blocks are one warpgroup of 32 rows, so a pin leaves BF16 on mma.sync",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), 0}, std::pair{std::string_view("64"), 64}, std::pair{std::string_view("128"), 128}},
                     p.row_wgmma_rows);
     }},
    {"DECODE_BENCH_ROW_WGMMA_TILE", "auto | 64 | 128", "auto",
     "tokens per tile of the warpgroup-MMA kernel's d 64 blocks of two warpgroups (MQA's many query heads on one "
     "KV head, Falcon-7B's 71); every other warpgroup-MMA block takes 64; auto: 128 for decode items over paged K/V "
     "where an SM's share of the tokens is at least three 128-token tiles, else 64 (kernels/row_attention.hpp, "
     "wgmma_d64_auto_tile)",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), 0}, std::pair{std::string_view("64"), 64}, std::pair{std::string_view("128"), 128}},
                     p.row_wgmma_tile);
     }},
    {"DECODE_BENCH_ROW_HOST_LENGTH", "auto | off", "auto",
     "the warpgroup-MMA kernel's blocks over a uniform grid of decode items whose host lengths are equal (MQA's "
     "d 64 blocks of two warpgroups, the grouped decodes' blocks of one): the length as a kernel argument (the "
     "kernel's twin that reads no seq_lens); off: the length read from seq_lens by every block",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), true}, std::pair{std::string_view("off"), false}},
                     p.row_host_length);
     }},
    {"DECODE_BENCH_ROW_STREAM", "auto | off | items a block (an integer 1-4096)", "auto",
     "the warpgroup-MMA kernel's streamed grid for unsplit grouped decodes at d 128 of one host length over more "
     "than 128 tokens: fewer blocks than items, each block's copies running from one item's tiles into the next's; "
     "auto: one wave of the resident blocks where the items outnumber them (kernels/row_attention.hpp, "
     "stream_grid_blocks); n: ceil(items / n) blocks; off: one block an item",
     [](TuningPolicy& p, std::string_view t) {
       if (choose(t, {std::pair{std::string_view("auto"), 0}, std::pair{std::string_view("off"), -1}}, p.row_stream))
         return true;
       const auto v = number_in(t, 4096);
       if (!v || *v != std::floor(*v)) return false;
       return p.row_stream = static_cast<int>(*v), true;
     }},
    {"DECODE_BENCH_ROW_DECODE_SPLITS", "auto | sms | slots", "auto",
     "how a tensor-core grouped decode splits its items: about one block per SM, or the every-slot makespan rule; "
     "auto: sms where measured faster (on the warpgroup-MMA kernel, there about two blocks an SM for BF16 at d 64 "
     "and over paged K/V on a GPU whose bus gives an SM at least 30 GB/s by its memory clock, such as an H200; "
     "on mma.sync FP16 and packed BF16 over contiguous K/V at d 128), else slots; sms pins one block an SM",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t,
                     {std::pair{std::string_view("auto"), RowDecodeSplits::automatic},
                      std::pair{std::string_view("sms"), RowDecodeSplits::sms},
                      std::pair{std::string_view("slots"), RowDecodeSplits::slots}},
                     p.row_decode_splits);
     }},
    {"DECODE_BENCH_ROW_PACKED_SPLIT", "auto | off", "auto",
     "off keeps BF16 / FP8 row-attention blocks of at most 8 rows at d 128 on the two-mma kernel instead of the "
     "packed-split one",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), true}, std::pair{std::string_view("off"), false}},
                     p.row_packed_split);
     }},
    {"DECODE_BENCH_ROW_STEAL", "auto | off | a number in (0, 1]", "auto",
     "the share of each split item's tiles the tensor-core uniform grid's splits steal from a counter (FP16 / BF16, "
     "d 128); auto: 0.25 for grouped decodes over paged K/V, none elsewhere",
     [](TuningPolicy& p, std::string_view t) {
       if (t == "auto") return p.row_steal.reset(), true;
       if (t == "off") return p.row_steal = 0.0, true;
       const auto v = number_in(t, 1);
       return v ? (p.row_steal = *v, true) : false;
     }},
    {"DECODE_BENCH_ROW_MERGE", "auto | fused | separate", "auto",
     "where a tensor-core grouped decode's split partials merge: in the last split block of each row block "
     "(fused) or in a second kernel of one block per row (separate); auto: in a cluster where the warpgroup-MMA "
     "kernel's clusters fit (DECODE_BENCH_ROW_CLUSTER_MERGE), else by the round-trip model of "
     "kernels/row_merge_model.hpp; shared-prefix items always fused",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t,
                     {std::pair{std::string_view("auto"), RowMergeMode::automatic},
                      std::pair{std::string_view("fused"), RowMergeMode::fused},
                      std::pair{std::string_view("separate"), RowMergeMode::separate}},
                     p.row_merge);
     }},
    {"DECODE_BENCH_ROW_CLUSTER_MERGE", "auto | off", "auto",
     "the warpgroup-MMA row kernel's uniform grid of 2-8 splits: each item's splits as one thread-block cluster "
     "that merges them through shared memory (kernels/row_cluster_merge.cuh); auto: on compute capability 9.0 "
     "unless DECODE_BENCH_ROW_MERGE pins a merge; off: the merge DECODE_BENCH_ROW_MERGE chooses",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), true}, std::pair{std::string_view("off"), false}},
                     p.row_cluster_merge);
     }},
    {"DECODE_BENCH_SP_PREFIX_SHARE", "auto | a number in (0, 1]", "auto",
     "the share of the SMs an overlapped shared-prefix phase is planned for; auto: 1, 0.75 or 0.5 by the rule of "
     "kernels/shared_prefix_share.hpp",
     [](TuningPolicy& p, std::string_view t) {
       if (t == "auto") return p.sp_prefix_share = 0, true;
       const auto v = number_in(t, 1);
       return v ? (p.sp_prefix_share = *v, true) : false;
     }},
    {"DECODE_BENCH_SP_SHARE_DRAM", "clock | measured", "clock",
     "the DRAM rate that rule divides by: 2 x memory clock x bus width, or the run's measured dram_read ceiling "
     "(the clock's where none was measured); plan.prefix.share_dram says which",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t,
                     {std::pair{std::string_view("clock"), ShareDramRate::clock},
                      std::pair{std::string_view("measured"), ShareDramRate::measured}},
                     p.sp_share_dram);
     }},
    {"DECODE_BENCH_MLA_TILE", "auto | 64 | 32", "auto",
     "the warpgroup-MMA MLA kernel's tiling: 64-token tiles in 2 stages, or 32-token tiles in 4 (three tiles in "
     "flight ahead of the one computed; docs/kernels/mla.md); auto: 64",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), 0}, std::pair{std::string_view("64"), 64},
                         std::pair{std::string_view("32"), 32}},
                     p.mla_tile);
     }},
    {"DECODE_BENCH_MLA_KERNEL", "auto | wgmma | mma_narrow | mma", "auto",
     "the MLA kernel every MLA point runs on: the warpgroup-MMA kernel, the narrow mma.sync kernel (up to 32 "
     "rows) or the 64-row mma.sync one; a point the pinned kernel cannot compute fails with the reason; auto: "
     "the dispatch of docs/kernels/mla.md",
     [](TuningPolicy& p, std::string_view t) {
       using Pin = std::optional<MlaKernel>;
       return choose(t,
                     {std::pair{std::string_view("auto"), Pin()},
                      std::pair{std::string_view("wgmma"), Pin(MlaKernel::wgmma)},
                      std::pair{std::string_view("mma_narrow"), Pin(MlaKernel::mma_narrow)},
                      std::pair{std::string_view("mma"), Pin(MlaKernel::mma)}},
                     p.mla_kernel);
     }},
    {"DECODE_BENCH_MERGE_PDL", "auto | off", "auto",
     "the second kernel of a split plan (the MLA split merge, the row attention's separate merge) as a "
     "programmatic dependent launch of the attention kernel, its launch overlapped with that kernel's tail "
     "(kernels/dependent_launch.cuh); auto: on compute capability 9.0 and later; off: stream-ordered",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), true}, std::pair{std::string_view("off"), false}},
                     p.merge_pdl);
     }},
    {"DECODE_BENCH_MLA_FUSED_MERGE", "off | on", "off",
     "on folds the warpgroup-MMA MLA kernel's split merge into it at 2 to 8 splits (each row block's last "
     "split merges them, kernels/mla/mla_fused_merge.cuh) in place of the merge kernel (an experiment: "
     "docs/decisions/mla-fused-merge.md)",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("off"), false}, std::pair{std::string_view("on"), true}},
                     p.mla_fused_merge);
     }},
    {"DECODE_BENCH_MLA_CLUSTER_MERGE", "auto | off", "auto",
     "the warpgroup-MMA MLA kernel's 2 to 8 splits of each row block as one thread-block cluster that merges "
     "them through shared memory (kernels/row_cluster_merge.cuh) in place of the merge kernel; auto: where "
     "every cluster is resident at once and the merge is not fused (DECODE_BENCH_MLA_FUSED_MERGE); off: the "
     "merge kernel",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), true}, std::pair{std::string_view("off"), false}},
                     p.mla_cluster_merge);
     }},
    {"DECODE_BENCH_MLA_SPREAD_MERGE", "auto | off", "auto",
     "the warpgroup-MMA MLA kernel's 2 to 8 splits of each row block merged in the kernel, every split block "
     "folding a share of the row block's partials once all have written them (the grid launched "
     "cooperatively, kernels/mla/mla_fused_merge.cuh) in place of the merge kernel; auto: where the plan has "
     "neither a cluster (DECODE_BENCH_MLA_CLUSTER_MERGE) nor a fused merge (DECODE_BENCH_MLA_FUSED_MERGE) and "
     "every block of the grid is resident at once; off: the merge kernel",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("auto"), true}, std::pair{std::string_view("off"), false}},
                     p.mla_spread_merge);
     }},
    {"DECODE_BENCH_CARVEOUT", "default | max", "default",
     "max sets the preferred shared-memory carveout of the row-attention and flash-decode kernels to the most "
     "shared memory (an experiment on co-residency)",
     [](TuningPolicy& p, std::string_view t) {
       return choose(t, {std::pair{std::string_view("default"), false}, std::pair{std::string_view("max"), true}},
                     p.carveout_max_shared);
     }},
}};

// The families of knob names: a variable under one of them that is no knob is refused.
constexpr std::array<std::string_view, 5> kKnobPrefixes{"DECODE_BENCH_FD_", "DECODE_BENCH_ROW_", "DECODE_BENCH_SP_",
                                                       "DECODE_BENCH_MLA_", "DECODE_BENCH_MERGE_"};

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += (out.empty() ? "" : "\n") + line;
  return out;
}

}  // namespace

std::span<const TuningKnob> tuning_knobs() { return kKnobs; }

TuningPolicyError::TuningPolicyError(std::vector<std::string> problems)
    : std::invalid_argument(join_lines(problems)), problems_(std::move(problems)) {}

TuningPolicy parse_tuning_policy(const std::map<std::string, std::string>& environment) {
  TuningPolicy policy;
  std::vector<std::string> problems;
  for (const TuningKnob& knob : kKnobs) {
    const auto it = environment.find(std::string(knob.name));
    if (it == environment.end() || it->second.empty()) continue;
    if (!knob.apply(policy, it->second))
      problems.push_back(std::string(knob.name) + "='" + it->second + "': accepted: " + std::string(knob.accepted));
  }
  for (const auto& [name, value] : environment) {
    const bool in_family = std::any_of(kKnobPrefixes.begin(), kKnobPrefixes.end(),
                                       [&](std::string_view prefix) { return name.starts_with(prefix); });
    const bool known = std::any_of(kKnobs.begin(), kKnobs.end(), [&](const TuningKnob& k) { return k.name == name; });
    if (in_family && !known)
      problems.push_back(name + ": not a planner knob (`decode-bench list knobs` names them)");
  }
  if (!problems.empty()) throw TuningPolicyError(std::move(problems));
  return policy;
}

TuningPolicy tuning_policy_from_environment() {
  std::map<std::string, std::string> environment;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (entry.starts_with("DECODE_BENCH_") && eq != std::string_view::npos)
      environment.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return parse_tuning_policy(environment);
}

std::string format_tuning_knobs(bool markdown) {
  std::string out;
  if (markdown) {
    out = "| variable | values | default | what it sets |\n| --- | --- | --- | --- |\n";
    for (const TuningKnob& k : kKnobs) {
      std::string accepted(k.accepted);
      // A `|` inside a cell would end it: the values' separator is escaped.
      for (std::size_t at = accepted.find('|'); at != std::string::npos; at = accepted.find('|', at + 2))
        accepted.replace(at, 1, "\\|");
      out += "| `" + std::string(k.name) + "` | " + accepted + " | " + std::string(k.default_text) + " | " +
             std::string(k.meaning) + " |\n";
    }
    return out;
  }
  for (const TuningKnob& k : kKnobs)
    out += std::string(k.name) + "  " + std::string(k.accepted) + "; default " + std::string(k.default_text) + "\n  " +
           std::string(k.meaning) + "\n";
  return out;
}

int scaled_splits(int splits, double scale) { return std::max(1, static_cast<int>(std::lround(splits * scale))); }

}  // namespace decode_bench
