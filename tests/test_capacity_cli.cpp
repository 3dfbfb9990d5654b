// `decode-bench capacity` as a user meets it: the default prints Figure 5 and the extensions;
// a custom grid writes JSON; bad flags exit 2 naming the flag and value.
#include <filesystem>

#include <unistd.h>

#include <gtest/gtest.h>

#include "harness/json_file.hpp"
#include "tests/cli_runner.hpp"

namespace decode_bench {
namespace {

using testing::run_decode_bench;

TEST(CapacityCli, DefaultPrintsFigure5AndExtensions) {
  const auto r = run_decode_bench("capacity --backend host");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* section : {"[figure5]", "[zipf]", "[model-32x8x128-fp16]", "[shared-prefix]", "[model-shared-prefix]"})
    EXPECT_NE(r.output.find(section), std::string::npos) << section << "\n" << r.output;
  EXPECT_NE(r.output.find("contiguous     4096     - -            1024"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("paged          4096    16 -            8192"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("paged           512    16 fork        32765"), std::string::npos) << r.output;
}

TEST(CapacityCli, CustomGridWritesJson) {
  const auto path = std::filesystem::temp_directory_path() / ("capacity_cli_" + std::to_string(::getpid()) + ".json");
  const auto r = run_decode_bench("capacity --backend host --budget 1GiB --max-seq-len 256,1024 --page-size 16,64 "
                                  "--lengths fixed:200 --output " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = read_json_file(path);
  std::filesystem::remove(path);
  ASSERT_EQ(doc["rows"].size(), 6u);  // per max_seq_len: contiguous + paged at two page sizes
  // 1 GiB / (256 tokens * 1 KiB) = 4096 slabs; pages of 16: 200 -> 13 pages of 16 KiB -> 5041.
  EXPECT_EQ(doc["rows"][0]["pool"], "contiguous");
  EXPECT_EQ(doc["rows"][0]["host"]["sequences"], 4096);
  EXPECT_EQ(doc["rows"][1]["page_size"], 16);
  EXPECT_EQ(doc["rows"][1]["host"]["sequences"], 65536 / 13);
  EXPECT_EQ(doc["rows"][2]["host"]["sequences"], 4096);  // page 64: 200 -> 4 pages of 64 KiB
  EXPECT_EQ(doc["rows"][3]["host"]["sequences"], 1024);
  EXPECT_NEAR(doc["rows"][3]["host"]["fragmentation"].get<double>(), 1.0 - 200.0 / 1024.0, 1e-12);
}

// FP8 halves the bytes per token: the same 1 GiB grid as above holds twice the FP16 sequences.
TEST(CapacityCli, Fp8HoldsTwiceTheFp16Sequences) {
  const auto path = std::filesystem::temp_directory_path() / ("capacity_fp8_" + std::to_string(::getpid()) + ".json");
  const auto count = [&](const char* dtype) {
    const auto r = run_decode_bench(std::string("capacity --backend host --budget 1GiB --max-seq-len 256 --page-size 16 "
                                                "--lengths fixed:200 --dtype ") + dtype + " --output " + path.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto doc = read_json_file(path);
    std::filesystem::remove(path);
    EXPECT_EQ(doc["rows"].size(), 2u) << dtype;
    return std::pair<long, long>{doc["rows"][0]["host"]["sequences"].get<long>(), doc["rows"][1]["host"]["sequences"].get<long>()};
  };
  const auto fp16 = count("fp16"), fp8 = count("fp8_e4m3");
  // 1 GiB / (256 tokens * 2 * 128 * 2 B) = 8192 FP16 slabs (one KV head); FP8 16384.
  EXPECT_EQ(fp16.first, 8192);
  EXPECT_EQ(fp8.first, 2 * fp16.first);
  EXPECT_EQ(fp8.second, 2 * fp16.second);
}

// MLA: one latent row of 512 + 64 BF16 values per token and layer, 61 layers (DeepSeek-V3): a
// 32,000-token sequence is 2,248,704,000 bytes (the 2.10 GiB at 32K that KV-cache calculators
// quote); that budget holds exactly one, contiguous or in pages of 64.
TEST(CapacityCli, MlaCountsTheLatentRowOncePerTokenAndLayer) {
  const auto path = std::filesystem::temp_directory_path() / ("capacity_mla_" + std::to_string(::getpid()) + ".json");
  const auto r = run_decode_bench("capacity --backend host --attention mla --dtype bf16 --layers 61 --budget 2248704000 "
                                  "--lengths fixed:32000 --max-seq-len 32000 --page-size 64 --output " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[custom-mla]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("61 layer(s) x MLA latent row of 576 bf16 (70272 B per token)"), std::string::npos) << r.output;
  const auto doc = read_json_file(path);
  std::filesystem::remove(path);
  ASSERT_EQ(doc["rows"].size(), 2u);
  for (const auto& row : doc["rows"]) {
    EXPECT_EQ(row["attention"], "mla");
    EXPECT_EQ(row["latent_row"], 576);
    EXPECT_EQ(row["bytes_per_token"], 70272);
    EXPECT_EQ(row["host"]["sequences"], 1) << row.dump();
    EXPECT_FALSE(row.contains("heads_kv"));
  }
}

TEST(CapacityCli, BadInputExitsTwoNamingTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"capacity --budget 4XB", "--budget '4XB'"},
      {"capacity --lengths zipf:mean=0", "--lengths 'zipf:mean=0'"},
      {"capacity --dtype fp8", "--dtype 'fp8'"},
      {"capacity --page-size 0", "page_size must be >= 1 (got 0)"},
      {"capacity --prefix 600 --max-seq-len 512", "prefix must be in [0, max_seq_len)"},
      {"capacity --preset nope", "--preset 'nope'"},
      {"capacity --preset figure5 --budget 1GiB", "cannot be combined"},
      {"capacity --backend tpu", "--backend 'tpu'"},
      {"capacity --page-order random", "--page-order 'random'"},
      {"capacity --attention gqa", "--attention 'gqa'"},
      {"capacity --attention mla --heads-kv 8", "--attention mla takes no --heads-kv or --head-dim"},
      {"capacity --attention mla --dtype fp32", "the MLA latent cache is fp16, bf16 or fp8_e4m3"},
      {"capacity --attention mla --dtype bf16 --rope-dim 63", "must be even"}};
  for (const auto& [args, needle] : cases) {
    const auto r = run_decode_bench(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << ": " << r.output;
  }
}

}  // namespace
}  // namespace decode_bench
