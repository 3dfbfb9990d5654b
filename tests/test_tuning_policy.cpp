// The planners' tuning policy (kernels/tuning_policy.hpp), host-side: every knob parsed from its
// accepted texts, every bad value and unknown knob name refused naming the variable and the
// accepted values, the defaults, the listing generated from the table, and the sweep refusing a
// bad environment before it runs anything (exit 2).
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/tuning_policy.hpp"
#include "tests/cli_runner.hpp"
#include "tests/scoped_env.hpp"

namespace decode_bench {
namespace {

using Env = std::map<std::string, std::string>;

// The problems of the TuningPolicyError `environment` must raise (a failure when it parses).
std::vector<std::string> refusal(const Env& environment) {
  try {
    (void)parse_tuning_policy(environment);
  } catch (const TuningPolicyError& e) {
    return e.problems();
  }
  ADD_FAILURE() << "accepted " << environment.begin()->first << "=" << environment.begin()->second;
  return {};
}

const TuningKnob& knob(std::string_view name) {
  for (const TuningKnob& k : tuning_knobs())
    if (k.name == name) return k;
  throw std::out_of_range(std::string(name));
}

TEST(TuningPolicy, EmptyEnvironmentAndEmptyValuesGiveTheDefaults) {
  EXPECT_EQ(parse_tuning_policy({}), TuningPolicy{});
  Env empty_values;
  for (const TuningKnob& k : tuning_knobs()) empty_values[std::string(k.name)] = "";
  EXPECT_EQ(parse_tuning_policy(empty_values), TuningPolicy{});
  // Other DECODE_BENCH_* variables (the plot command's, the block timeline's) are none of its business.
  EXPECT_EQ(parse_tuning_policy({{"DECODE_BENCH_PYTHON", "python3"}, {"DECODE_BENCH_BLOCK_TIMELINE", "1"}}),
            TuningPolicy{});
}

// Each knob's default text parses to the default policy, so "unset" and "set to the default" plan
// alike; the table names each knob once.
TEST(TuningPolicy, EveryKnobAtItsDefaultTextGivesTheDefaultPolicy) {
  std::set<std::string_view> names;
  Env defaults;
  for (const TuningKnob& k : tuning_knobs()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_TRUE(k.name.starts_with("DECODE_BENCH_")) << k.name;
    EXPECT_FALSE(k.accepted.empty() || k.default_text.empty() || k.meaning.empty()) << k.name;
    EXPECT_EQ(parse_tuning_policy({{std::string(k.name), std::string(k.default_text)}}), TuningPolicy{}) << k.name;
    defaults[std::string(k.name)] = std::string(k.default_text);
  }
  EXPECT_EQ(parse_tuning_policy(defaults), TuningPolicy{});
  EXPECT_EQ(names.size(), 27u);
}

TEST(TuningPolicy, EveryKnobParsesEachAcceptedValue) {
  const auto parsed = [](const char* name, const char* value) { return parse_tuning_policy({{name, value}}); };
  EXPECT_EQ(parsed("DECODE_BENCH_FD_SPLIT_SCALE", "0.25").fd_split_scale, 0.25);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_SPLIT_SCALE", "64").fd_split_scale, 64.0);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_TILING", "standard").fd_tiling, TilingOverride::standard);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_TILING", "short").fd_tiling, TilingOverride::short_batch);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_TILING", "deep").fd_tiling, TilingOverride::deep);
  EXPECT_FALSE(parsed("DECODE_BENCH_FD_BALANCE", "0").fd_balance);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_WORK_CHUNKS", "tiles").fd_work_chunks, WorkChunksOverride::tiles);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_WORK_CHUNKS", "ranges").fd_work_chunks, WorkChunksOverride::ranges);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_SHORT_HEADS", "2").fd_short_heads, 2);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_SHORT_HEADS", "4").fd_short_heads, 4);
  EXPECT_FALSE(parsed("DECODE_BENCH_FD_SHORT_SEQ", "off").fd_short_seq);
  EXPECT_TRUE(parsed("DECODE_BENCH_FD_SHORT_SEQ", "auto").fd_short_seq);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_SHORT_MAX_LEN", "64").fd_short_max_len, 64);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_SHORT_MAX_LEN", "128").fd_short_max_len, 128);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_SHORT_MAX_LEN", "auto").fd_short_max_len, 0);
  EXPECT_EQ(parsed("DECODE_BENCH_FD_VARIANT_PATH", "tensor_core").fd_variant_path, VariantPathOverride::tensor_core);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_TILING", "narrow").row_tiling, RowAttentionTiling::narrow);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_TILING", "wide").row_tiling, RowAttentionTiling::wide);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_TILING", "wgmma").row_tiling, RowAttentionTiling::wgmma);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_WGMMA_ROWS", "64").row_wgmma_rows, 64);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_WGMMA_ROWS", "128").row_wgmma_rows, 128);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_WGMMA_TILE", "64").row_wgmma_tile, 64);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_WGMMA_TILE", "128").row_wgmma_tile, 128);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_WGMMA_TILE", "auto").row_wgmma_tile, 0);
  EXPECT_FALSE(parsed("DECODE_BENCH_ROW_HOST_LENGTH", "off").row_host_length);
  EXPECT_TRUE(parsed("DECODE_BENCH_ROW_HOST_LENGTH", "auto").row_host_length);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_STREAM", "auto").row_stream, 0);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_STREAM", "off").row_stream, -1);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_STREAM", "1").row_stream, 1);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_STREAM", "4096").row_stream, 4096);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_DECODE_SPLITS", "sms").row_decode_splits, RowDecodeSplits::sms);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_DECODE_SPLITS", "slots").row_decode_splits, RowDecodeSplits::slots);
  EXPECT_FALSE(parsed("DECODE_BENCH_ROW_PACKED_SPLIT", "off").row_packed_split);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_STEAL", "off").row_steal, 0.0);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_STEAL", "0.125").row_steal, 0.125);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_STEAL", "1").row_steal, 1.0);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_MERGE", "fused").row_merge, RowMergeMode::fused);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_MERGE", "separate").row_merge, RowMergeMode::separate);
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_MERGE", "auto").row_merge, RowMergeMode::automatic);
  EXPECT_FALSE(parsed("DECODE_BENCH_ROW_CLUSTER_MERGE", "off").row_cluster_merge);
  EXPECT_TRUE(parsed("DECODE_BENCH_ROW_CLUSTER_MERGE", "auto").row_cluster_merge);
  EXPECT_EQ(parsed("DECODE_BENCH_SP_PREFIX_SHARE", "0.35").sp_prefix_share, 0.35);
  EXPECT_EQ(parsed("DECODE_BENCH_SP_PREFIX_SHARE", "1").sp_prefix_share, 1.0);
  EXPECT_EQ(parsed("DECODE_BENCH_SP_SHARE_DRAM", "measured").sp_share_dram, ShareDramRate::measured);
  EXPECT_TRUE(parsed("DECODE_BENCH_CARVEOUT", "max").carveout_max_shared);
  EXPECT_EQ(parsed("DECODE_BENCH_MLA_TILE", "32").mla_tile, 32);
  EXPECT_EQ(parsed("DECODE_BENCH_MLA_TILE", "64").mla_tile, 64);
  EXPECT_EQ(parsed("DECODE_BENCH_MLA_TILE", "auto").mla_tile, 0);
  EXPECT_EQ(parsed("DECODE_BENCH_MLA_KERNEL", "wgmma").mla_kernel, MlaKernel::wgmma);
  EXPECT_EQ(parsed("DECODE_BENCH_MLA_KERNEL", "mma_narrow").mla_kernel, MlaKernel::mma_narrow);
  EXPECT_EQ(parsed("DECODE_BENCH_MLA_KERNEL", "mma").mla_kernel, MlaKernel::mma);
  EXPECT_EQ(parsed("DECODE_BENCH_MLA_KERNEL", "auto").mla_kernel, std::nullopt);
  EXPECT_FALSE(parsed("DECODE_BENCH_MERGE_PDL", "off").merge_pdl);
  EXPECT_TRUE(parsed("DECODE_BENCH_MERGE_PDL", "auto").merge_pdl);
  EXPECT_FALSE(parsed("DECODE_BENCH_MLA_FUSED_MERGE", "off").mla_fused_merge);
  EXPECT_TRUE(parsed("DECODE_BENCH_MLA_FUSED_MERGE", "on").mla_fused_merge);
  EXPECT_FALSE(parsed("DECODE_BENCH_MLA_CLUSTER_MERGE", "off").mla_cluster_merge);
  EXPECT_TRUE(parsed("DECODE_BENCH_MLA_CLUSTER_MERGE", "auto").mla_cluster_merge);
  EXPECT_FALSE(parsed("DECODE_BENCH_MLA_SPREAD_MERGE", "off").mla_spread_merge);
  EXPECT_TRUE(parsed("DECODE_BENCH_MLA_SPREAD_MERGE", "auto").mla_spread_merge);
  // Nothing but the knob named moves.
  TuningPolicy only_tiling;
  only_tiling.row_tiling = RowAttentionTiling::wide;
  EXPECT_EQ(parsed("DECODE_BENCH_ROW_TILING", "wide"), only_tiling);
}

TEST(TuningPolicy, BadValuesAreRefusedNamingTheVariableAndTheAcceptedValues) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
      {"DECODE_BENCH_FD_SPLIT_SCALE", {"abc", "0", "-1", "0.5x", "inf", "nan", "100"}},
      {"DECODE_BENCH_FD_TILING", {"tiny", "Short", "automatic", "Deep", "deeper"}},
      {"DECODE_BENCH_FD_BALANCE", {"yes", "2", "true"}},
      {"DECODE_BENCH_FD_WORK_CHUNKS", {"pages", "tile"}},
      {"DECODE_BENCH_FD_SHORT_HEADS", {"3", "8", "0"}},
      {"DECODE_BENCH_FD_SHORT_SEQ", {"on", "all", "1"}},
      {"DECODE_BENCH_FD_SHORT_MAX_LEN", {"0", "96", "256", "long", "Auto"}},
      {"DECODE_BENCH_FD_VARIANT_PATH", {"cuda_core", "rows", "Tensor_core"}},
      {"DECODE_BENCH_ROW_TILING", {"wider", "WIDE"}},
      {"DECODE_BENCH_ROW_WGMMA_ROWS", {"32", "256", "0"}},
      {"DECODE_BENCH_ROW_WGMMA_TILE", {"32", "256", "0", "96", "128 "}},
      {"DECODE_BENCH_ROW_HOST_LENGTH", {"on", "1", "Off", "uniform"}},
      {"DECODE_BENCH_ROW_STREAM", {"on", "0", "-1", "2.5", "4097", "Off"}},
      {"DECODE_BENCH_ROW_DECODE_SPLITS", {"blocks", "sm"}},
      {"DECODE_BENCH_ROW_PACKED_SPLIT", {"on", "1"}},
      {"DECODE_BENCH_ROW_STEAL", {"0", "1.5", "-0.25", "on", "quarter"}},
      {"DECODE_BENCH_ROW_MERGE", {"fuse", "Separate", "kernel", "1"}},
      {"DECODE_BENCH_ROW_CLUSTER_MERGE", {"on", "cluster", "Off", "0"}},
      {"DECODE_BENCH_SP_PREFIX_SHARE", {"0", "1.01", "half"}},
      {"DECODE_BENCH_SP_SHARE_DRAM", {"ceiling", "Measured"}},
      {"DECODE_BENCH_CARVEOUT", {"100", "unset", "Max"}},
      {"DECODE_BENCH_MLA_TILE", {"16", "128", "0", "48", "Auto", "32 ", "tile32"}},
      {"DECODE_BENCH_MLA_KERNEL", {"narrow", "wgmma ", "WGMMA", "mla_decode_wgmma", "0"}},
      {"DECODE_BENCH_MERGE_PDL", {"on", "1", "0", "Off", "false"}},
      {"DECODE_BENCH_MLA_FUSED_MERGE", {"auto", "fused", "On", "1"}},
      {"DECODE_BENCH_MLA_CLUSTER_MERGE", {"on", "cluster", "Off", "0"}},
      {"DECODE_BENCH_MLA_SPREAD_MERGE", {"on", "spread", "Auto", "1"}}};
  for (const auto& [name, values] : bad)
    for (const std::string& value : values) {
      const std::vector<std::string> problems = refusal({{name, value}});
      ASSERT_EQ(problems.size(), 1u) << name << "=" << value;
      EXPECT_EQ(problems[0], name + "='" + value + "': accepted: " + std::string(knob(name).accepted));
    }
  // Every bad variable at once, in the table's order, and the exception's message lists them.
  try {
    (void)parse_tuning_policy({{"DECODE_BENCH_FD_TILING", "tiny"}, {"DECODE_BENCH_CARVEOUT", "100"}});
    ADD_FAILURE() << "accepted two bad knobs";
  } catch (const TuningPolicyError& e) {
    ASSERT_EQ(e.problems().size(), 2u);
    EXPECT_EQ(std::string(e.what()), e.problems()[0] + "\n" + e.problems()[1]);
    EXPECT_NE(e.problems()[0].find("DECODE_BENCH_FD_TILING='tiny'"), std::string::npos);
    EXPECT_NE(e.problems()[1].find("DECODE_BENCH_CARVEOUT='100'"), std::string::npos);
  }
}

// A misspelt knob would leave the run at the default it meant to change: names under the knobs'
// prefixes that are no knob are refused; other DECODE_BENCH_* names are not the policy's.
TEST(TuningPolicy, UnknownNamesUnderTheKnobPrefixesAreRefused) {
  for (const char* name :
       {"DECODE_BENCH_FD_TILNG", "DECODE_BENCH_ROW_WGMMA", "DECODE_BENCH_SP_SHARE", "DECODE_BENCH_MLA_TILES",
        "DECODE_BENCH_MERGE_PLD"}) {
    const std::vector<std::string> problems = refusal({{name, "1"}});
    ASSERT_EQ(problems.size(), 1u) << name;
    EXPECT_EQ(problems[0], std::string(name) + ": not a planner knob (`decode-bench list knobs` names them)");
  }
  EXPECT_NO_THROW((void)parse_tuning_policy({{"DECODE_BENCH_CARVEOUTS", "max"}}));  // no knob family
}

TEST(TuningPolicy, FromTheEnvironmentReadsTheProcessVariables) {
  testing::ScopedEnv tiling("DECODE_BENCH_FD_TILING", "short"), steal("DECODE_BENCH_ROW_STEAL", "off");
  const TuningPolicy policy = tuning_policy_from_environment();
  EXPECT_EQ(policy.fd_tiling, TilingOverride::short_batch);
  EXPECT_EQ(policy.row_steal, 0.0);
  testing::ScopedEnv bad("DECODE_BENCH_ROW_WGMMA_ROWS", "96");
  EXPECT_THROW((void)tuning_policy_from_environment(), TuningPolicyError);
}

// The listing is the table: a line pair per knob in text, a row per knob in markdown (the `|` of
// the values escaped, so each row keeps four cells).
TEST(TuningPolicy, ListingIsGeneratedFromTheTable) {
  const std::string text = format_tuning_knobs(false);
  const std::string markdown = format_tuning_knobs(true);
  std::string want_text, want_markdown = "| variable | values | default | what it sets |\n| --- | --- | --- | --- |\n";
  for (const TuningKnob& k : tuning_knobs()) {
    want_text += std::string(k.name) + "  " + std::string(k.accepted) + "; default " + std::string(k.default_text) +
                 "\n  " + std::string(k.meaning) + "\n";
    std::string accepted(k.accepted);
    std::string escaped;
    for (char c : accepted) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
    want_markdown += "| `" + std::string(k.name) + "` | " + escaped + " | " + std::string(k.default_text) + " | " +
                     std::string(k.meaning) + " |\n";
  }
  EXPECT_EQ(text, want_text);
  EXPECT_EQ(markdown, want_markdown);
  EXPECT_NE(markdown.find("| `DECODE_BENCH_ROW_TILING` | auto \\| narrow \\| wide \\| wgmma | auto |"),
            std::string::npos);
  EXPECT_NE(markdown.find("| `DECODE_BENCH_CARVEOUT` | default \\| max | default |"), std::string::npos);
}

TEST(TuningPolicy, ScaledSplitsRoundAndKeepAtLeastOne) {
  EXPECT_EQ(scaled_splits(132, 1.0), 132);
  EXPECT_EQ(scaled_splits(132, 0.25), 33);
  EXPECT_EQ(scaled_splits(3, 0.1), 1);
  EXPECT_EQ(scaled_splits(10, 2.0), 20);
}

// `decode-bench list knobs` prints the table; --format belongs to it alone.
TEST(TuningPolicy, ListKnobsPrintsTheTable) {
  auto r = testing::run_decode_bench("list knobs");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, format_tuning_knobs(false));
  r = testing::run_decode_bench("list knobs --format markdown");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, format_tuning_knobs(true));
  r = testing::run_decode_bench("list presets");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quick ("), std::string::npos) << r.output;
  r = testing::run_decode_bench("list --format markdown");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--format applies to `list knobs` only"), std::string::npos) << r.output;
  EXPECT_EQ(testing::run_decode_bench("list knobs --format csv").exit_code, 2);
  EXPECT_EQ(testing::run_decode_bench("list axes").exit_code, 2);
}

// A sweep parses the knobs once, at start: a bad value or a misspelt knob ends it with exit 2
// before anything runs, each named (a dry run needs no GPU); good ones let it go on.
TEST(TuningPolicy, SweepRefusesABadEnvironmentWithExitTwo) {
  {
    testing::ScopedEnv tiling("DECODE_BENCH_FD_TILING", "tiny"), typo("DECODE_BENCH_ROW_STEEL", "off");
    const auto r = testing::run_decode_bench("sweep --preset ci-smoke --dry-run");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("invalid sweep configuration (2 problems; nothing was run)"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("environment: DECODE_BENCH_FD_TILING='tiny': accepted: auto | standard | short"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("environment: DECODE_BENCH_ROW_STEEL: not a planner knob"), std::string::npos)
        << r.output;
  }
  testing::ScopedEnv good("DECODE_BENCH_FD_TILING", "short");
  const auto r = testing::run_decode_bench("sweep --preset ci-smoke --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace decode_bench
