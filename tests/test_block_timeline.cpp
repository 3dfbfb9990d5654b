// The per-block timeline (kernels/block_timeline.hpp): the host bookkeeping of slices (no GPU),
// and on a GPU every block of real decode launches recorded once, in order of its marks, on an SM
// that exists, written to CSV with times relative to the point's first start.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include "harness/device_buffer.hpp"
#include "kernels/block_timeline.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/row_attention.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

// Clears the process-wide timeline whatever a test leaves.
struct TimelineGuard {
  ~TimelineGuard() { set_block_timeline(nullptr, 0); }
};

TEST(BlockTimeline, SlicesAreTakenInOrderUntilTheCapacityIsUsed) {
  TimelineGuard guard;
  EXPECT_EQ(take_block_timeline(4, "off"), nullptr);  // never set: off
  std::vector<BlockEvent> host(10);  // never dereferenced by the bookkeeping
  set_block_timeline(host.data(), 10);
  EXPECT_EQ(take_block_timeline(4, "a"), host.data());
  EXPECT_EQ(take_block_timeline(6, "b"), host.data() + 4);
  EXPECT_EQ(take_block_timeline(1, "c"), nullptr);  // full: that launch runs without
  EXPECT_EQ(take_block_timeline(0, "d"), nullptr);
  const auto& launches = block_timeline_launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].kernel, "a");
  EXPECT_EQ(launches[0].first, 0);
  EXPECT_EQ(launches[1].kernel, "b");
  EXPECT_EQ(launches[1].first, 4);
  EXPECT_EQ(launches[1].blocks, 6);
  set_block_timeline(nullptr, 0);
  EXPECT_TRUE(block_timeline_launches().empty());
  EXPECT_EQ(take_block_timeline(1, "e"), nullptr);
}

// A file that cannot be opened is refused by name (nothing taken: no device copy needed).
// The row kernels' launches are named by the kernel the plan runs, so a timeline of a Falcon-7B
// point (warpgroup MMA on Hopper) does not read as the mma.sync kernel's.
TEST(BlockTimeline, RowKernelsAreNamedByThePlansKernel) {
  RowAttentionPlan plan;
  plan.path = RowAttentionPath::simt;
  EXPECT_STREQ(row_attention_timeline_name(plan), "row_simt");
  plan.path = RowAttentionPath::tensor_core;
  EXPECT_STREQ(row_attention_timeline_name(plan), "row_mma");
  plan.wgmma = true;
  EXPECT_STREQ(row_attention_timeline_name(plan), "row_wgmma");
}

TEST(BlockTimeline, UnwritableFileIsRefusedByName) {
  TimelineGuard guard;
  std::string error;
  const std::string path = "/nonexistent-dir/timeline.csv";
  EXPECT_NE(write_block_timeline_csv(path, "p", &error), cudaSuccess);
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

struct Row {
  int launch = 0;
  std::string kernel;
  long long block = 0, smid = 0, start = -1, first_tile = -1, loop_end = -1, end = -1;
};

std::vector<Row> read_rows(const std::string& path, const std::string& point) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "point,launch,kernel,block,smid,start_ns,first_tile_ns,loop_end_ns,end_ns");
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    if (line.back() == ',') f.push_back("");
    EXPECT_EQ(f.size(), 9u) << line;
    if (f.size() != 9 || f[0] != point) continue;
    const auto num = [](const std::string& s) { return s.empty() ? -1LL : std::stoll(s); };
    rows.push_back({std::stoi(f[1]), f[2], num(f[3]), num(f[4]), num(f[5]), num(f[6]), num(f[7]), num(f[8])});
  }
  return rows;
}

// A grouped decode on a tensor-core row kernel (split: the last block, or the cluster, merges; the
// warpgroup-MMA kernel where it runs, else mma.sync) and an MHA decode on the CUDA-core flash
// decode, both timed into one point.
TEST(BlockTimelineGpu, EveryBlockOfRealLaunchesIsRecordedInOrder) {
  DB_REQUIRE_GPU();
  TimelineGuard guard;
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const int seqs = 2, len = 1000;
  DeviceBuffer<BlockEvent> events(4096);
  ASSERT_EQ(cudaMemset(events.get(), 0, events.size() * sizeof(BlockEvent)), cudaSuccess);
  set_block_timeline(events.get(), static_cast<std::int64_t>(events.size()));
  std::vector<std::int64_t> launch_blocks;
  std::vector<std::string> want_kernels;
  for (const DecodeShape shape : {DecodeShape{32, 8, 128}, DecodeShape{8, 8, 128}}) {
    const std::size_t elems = static_cast<std::size_t>(seqs) * shape.heads_kv * len * shape.head_dim;
    DeviceBuffer<__half> k(std::vector<__half>(elems, __float2half(0.25f))), v(std::vector<__half>(elems, __float2half(-0.5f)));
    DeviceBuffer<float> q(std::vector<float>(static_cast<std::size_t>(seqs) * shape.heads_q * 128, 0.1f));
    DeviceBuffer<float> o(q.size()), lse(static_cast<std::size_t>(seqs) * shape.heads_q);
    DeviceBuffer<std::int32_t> lens(std::vector<std::int32_t>(seqs, len));
    const DecodeProblem p{shape, DType::fp16, seqs, len, lens.get(), q.get(), o.get(), lse.get()};
    DecodeOptions options;
    options.splits = 3;  // a merge in both kernels
    DecodePlan plan;
    using KV = ContiguousKV<__half>;
    ASSERT_EQ(plan_decode<KV>(DecodeKernel::flash_decode, p, options, &plan), cudaSuccess);
    DeviceBuffer<std::uint8_t> ws(std::max<std::size_t>(plan.workspace_bytes, 1));
    ASSERT_EQ(init_decode_workspace(plan, ws.get(), nullptr), cudaSuccess);
    const std::size_t before = block_timeline_launches().size();
    ASSERT_EQ(run_decode<KV>(KV::make(k.get(), v.get(), shape.heads_kv, len, shape.head_dim), p, plan, ws.get(), nullptr),
              cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(block_timeline_launches().size(), before + 1);  // one kernel, merge fused
    want_kernels.push_back(plan.path == DecodePath::tensor_core ? (plan.rows.wgmma ? "row_wgmma" : "row_mma")
                                                                 : "flash_decode");
  }
  const std::string path = ::testing::TempDir() + "block_timeline_test.csv";
  std::remove(path.c_str());
  std::string error;
  ASSERT_EQ(write_block_timeline_csv(path, "grouped, then mha", &error), cudaSuccess) << error;
  const std::vector<Row> rows = read_rows(path, "grouped; then mha");
  const auto& launches = block_timeline_launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].kernel, want_kernels[0]);
  EXPECT_NE(launches[0].kernel, "flash_decode");  // the grouped decode runs on a row kernel
  EXPECT_EQ(launches[1].kernel, "flash_decode");
  long long earliest = -1;
  for (std::size_t l = 0; l < launches.size(); ++l) {
    std::set<long long> blocks;
    for (const Row& r : rows) {
      if (r.launch != static_cast<int>(l)) continue;
      EXPECT_EQ(r.kernel, launches[l].kernel);
      EXPECT_TRUE(blocks.insert(r.block).second) << "block " << r.block << " twice";
      EXPECT_GE(r.smid, 0);
      EXPECT_LT(r.smid, sms);
      EXPECT_GE(r.start, 0);
      EXPECT_GE(r.end, r.start) << "block " << r.block;
      if (r.first_tile >= 0) {
        EXPECT_GE(r.first_tile, r.start);
      }
      if (r.loop_end >= 0) {
        EXPECT_GE(r.loop_end, r.first_tile >= 0 ? r.first_tile : r.start);
        EXPECT_LE(r.loop_end, r.end);
      }
      if (l == 0) {
        EXPECT_GE(r.first_tile, 0) << "the row kernel marks its first tile";
      }
      earliest = earliest < 0 ? r.start : std::min(earliest, r.start);
    }
    // Every block of the grid, indices 0 .. blocks - 1.
    EXPECT_EQ(static_cast<std::int64_t>(blocks.size()), launches[l].blocks) << launches[l].kernel;
    if (!blocks.empty()) {
      EXPECT_EQ(*blocks.rbegin(), launches[l].blocks - 1);
    }
  }
  EXPECT_EQ(earliest, 0);  // times are relative to the point's first start
  std::remove(path.c_str());
}

}  // namespace
}  // namespace decode_bench
