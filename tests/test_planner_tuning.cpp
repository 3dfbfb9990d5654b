// The planners under their tuning policy (kernels/tuning_policy.hpp): the shared-prefix share
// rule (host), the knobs recorded in meta.environment, and on a GPU each planner honouring the
// policy it is handed (DecodeOptions / RowAttentionOptions ::tuning), and planning alike with no
// policy and with every knob set to its default text.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "harness/device_buffer.hpp"

#include "gpu_test_support.hpp"
#include "kernels/dtype_dispatch.hpp"
#include "harness/results_schema.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/device_attribute_cache.hpp"  // clock_dram_bytes_per_s
#include "kernels/plan_json.hpp"
#include "kernels/row_attention_balance.hpp"  // nonempty_chunks
#include "kernels/shared_prefix.hpp"
#include "kernels/row_attention_wgmma.hpp"
#include "kernels/shared_prefix_share.hpp"
#include "kernels/tuning_policy.hpp"
#include "pools/shared_prefix_batch.hpp"
#include "tests/scoped_env.hpp"

namespace decode_bench {
namespace {

using testing::ScopedEnv;

// The overlapped prefix phase's share of the SMs (kernels/shared_prefix_share.hpp) at the six
// H100 points it was fitted on (FP16, 32 heads, d 128, S 128, 3.35 TB/s by the device's memory
// clock), and its thresholds.
TEST(PlannerTuning, SharedPrefixAutoShareAtTheFittedPoints) {
  const double dram = 3.35e12;
  const auto share = [&](int n, int p) {
    const double suffix_bytes = 2.0 * n * 128 * 32 * 128 * 2;
    const double prefix_flops = 4.0 * p * n * 32 * 128;
    return shared_prefix_auto_share(suffix_bytes, prefix_flops, dram, n);
  };
  EXPECT_EQ(share(64, 1024), 0.5);
  EXPECT_EQ(share(64, 8192), 0.75);
  EXPECT_EQ(share(64, 32768), 1.0);
  EXPECT_EQ(share(256, 1024), 0.5);
  EXPECT_EQ(share(256, 8192), 0.75);
  EXPECT_EQ(share(256, 32768), 1.0);
  // ratio = (suffix s) / (prefix s): 1 byte / 1 B/s over 128e12 FLOP / 128e12 FLOP/s = 1.
  EXPECT_EQ(shared_prefix_auto_share(0.39, kPrefixPhaseFlopRate, 1.0, 64), 1.0);
  EXPECT_EQ(shared_prefix_auto_share(0.4, kPrefixPhaseFlopRate, 1.0, 64), 0.75);
  EXPECT_EQ(shared_prefix_auto_share(1.19, kPrefixPhaseFlopRate, 1.0, 256), 0.75);
  EXPECT_EQ(shared_prefix_auto_share(1.2, kPrefixPhaseFlopRate, 1.0, 256), 0.5);
  EXPECT_EQ(shared_prefix_auto_share(1.0, 0.0, 1.0, 64), 1.0);  // no prefix work: nothing to share
  // Outside the rows it was measured at (64-256), the whole GPU whatever the ratio.
  EXPECT_EQ(shared_prefix_auto_share(10.0, kPrefixPhaseFlopRate, 1.0, 63), 1.0);
  EXPECT_EQ(shared_prefix_auto_share(10.0, kPrefixPhaseFlopRate, 1.0, 257), 1.0);
  EXPECT_EQ(shared_prefix_auto_share(10.0, kPrefixPhaseFlopRate, 1.0, 256), 0.5);
}

// The warpgroup-MMA prefix kernel's rule (kernels/shared_prefix_share.hpp) at its six fitted H100
// points (prefix time the larger of its K/V bytes and FLOPs), its threshold and its limits.
TEST(PlannerTuning, SharedPrefixWgmmaShareAtTheFittedPoints) {
  const double dram = 3.35e12;
  const auto share = [&](int n, int p) {
    const double suffix_bytes = 2.0 * n * 128 * 32 * 128 * 2;
    const double prefix_bytes = 2.0 * p * 32 * 128 * 2;
    const double prefix_flops = 4.0 * p * n * 32 * 128;
    return shared_prefix_auto_share_wgmma(suffix_bytes, prefix_bytes, prefix_flops, dram, n);
  };
  EXPECT_EQ(share(64, 1024), 0.5);    // ratio 8.0
  EXPECT_EQ(share(64, 8192), 1.0);    // 1.0: the prefix's bytes, not its FLOPs, set its time
  EXPECT_EQ(share(64, 32768), 1.0);   // 0.25
  EXPECT_EQ(share(256, 1024), 0.5);   // 13
  EXPECT_EQ(share(256, 8192), 0.5);   // 1.6
  EXPECT_EQ(share(256, 32768), 1.0);  // 0.41
  // ratio = 1.29 and 1.3, by bytes (1 B at 1 B/s) and by FLOPs (350e12 FLOP at 350 TFLOP/s).
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.29, 1.0, 1.0, 1.0, 64), 1.0);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.3, 1.0, 1.0, 1.0, 64), 0.5);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.29, 0.0, kWgmmaPrefixFlopRate, 1.0, 256), 1.0);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.3, 0.0, kWgmmaPrefixFlopRate, 1.0, 256), 0.5);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(10.0, 1.0, 0.0, 1.0, 64), 1.0);  // no prefix work
  EXPECT_EQ(shared_prefix_auto_share_wgmma(10.0, 1.0, 1.0, 1.0, 63), 1.0);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(10.0, 1.0, 1.0, 1.0, 257), 1.0);
}

// The clock estimate against a measured DRAM read ceiling (DECODE_BENCH_SP_SHARE_DRAM): the H100
// of results/reference/h100/ceilings.json (memory clock 2619 MHz, 5120-bit bus: 3352.32 GB/s by
// the clock; dram_read measured 3134.08 GB/s) puts the cascade preset's N 64, P 4K, S 128 point
// (FP16, 32 heads, d 128, 64 rows: the mma.sync prefix kernel) on either side of the rule's 1.2
// threshold. That is why the clock estimate the rule was fitted with stays the default.
TEST(PlannerTuning, MeasuredDramCanMoveTheH100CascadeN64P4KShare) {
  const double clock = 2.0 * 2619000 * 1e3 * 5120 / 8.0, measured = 3134.0829477546645e9;
  const double suffix_bytes = 2.0 * 64 * 128 * 32 * 128 * 2;
  const double prefix_flops = 4.0 * 4096 * 64 * 32 * 128;
  EXPECT_EQ(shared_prefix_auto_share(suffix_bytes, prefix_flops, clock, 64), 0.75);
  EXPECT_EQ(shared_prefix_auto_share(suffix_bytes, prefix_flops, measured, 64), 0.5);
}

// The d 64 two-warpgroup blocks' tile under auto (wgmma_d64_auto_tile) at the points it was
// measured on (Falcon-7B's decode items, 132 SMs: 496 tokens an SM at 16 x 4K, 64 x 1K and
// 128 x 512, 248 at 1 x 32K): 128 over paged K/V from three 128-token tiles an SM, 64 below, over
// contiguous K/V and for explicit items (not measured).
TEST(PlannerTuning, WgmmaD64AutoTileAtTheMeasuredPoints) {
  EXPECT_EQ(wgmma_d64_auto_tile(true, true, 16 * 4096 / 132), 128);
  EXPECT_EQ(wgmma_d64_auto_tile(true, true, 128 * 512 / 132), 128);
  EXPECT_EQ(wgmma_d64_auto_tile(true, true, 32768 / 132), 64);
  EXPECT_EQ(wgmma_d64_auto_tile(true, true, 3 * 128), 128);
  EXPECT_EQ(wgmma_d64_auto_tile(true, true, 3 * 128 - 1), 64);
  EXPECT_EQ(wgmma_d64_auto_tile(false, true, 16 * 4096 / 132), 64);
  EXPECT_EQ(wgmma_d64_auto_tile(false, true, 1 << 20), 64);
  EXPECT_EQ(wgmma_d64_auto_tile(true, false, 1 << 20), 64);
}

// The streamed grid's blocks (stream_grid_blocks): auto streams in one wave of the resident slots
// where the items outnumber them; block b takes items b, b + blocks, ..., so every item is taken
// once and no block takes more than a wave of one block an item would give a slot
// (ceil(items / slots)); a pin of n items a block gives ceil(items / n) blocks of at most n; off,
// no items and items of at most kRowStreamMinTiles - 1 tiles never stream.
TEST(PlannerTuning, StreamGridTakesItemsInTurnWithinTheWavesOfOneBlockAnItem) {
  for (const std::int64_t slots : {std::int64_t{114}, std::int64_t{132}, std::int64_t{264}})
    for (std::int64_t items = 1; items <= 4 * slots + 7; items += 5) {
      const std::int64_t blocks = stream_grid_blocks(items, 8, slots, 0);
      const std::string what = std::to_string(items) + " items, " + std::to_string(slots) + " slots";
      for (const int pinned : {1, 3, 7}) {
        const std::int64_t pinned_blocks = stream_grid_blocks(items, 8, slots, pinned);
        EXPECT_EQ(pinned_blocks, (items + pinned - 1) / pinned) << what << " pinned " << pinned;
        EXPECT_LE((items + pinned_blocks - 1) / pinned_blocks, pinned) << what << " pinned " << pinned;
      }
      if (items <= slots) {
        EXPECT_EQ(blocks, 0) << what;
        continue;
      }
      ASSERT_EQ(blocks, slots) << what;
      std::int64_t taken = 0, most = 0;
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t mine = (items - b + blocks - 1) / blocks;  // the kernel's items_here
        taken += mine;
        most = std::max(most, mine);
      }
      EXPECT_EQ(taken, items) << what;
      EXPECT_EQ(most, (items + slots - 1) / slots) << what;
    }
  // The models preset's grouped decodes on an H200 (264 slots): 64 x 1K at group 4 (512 items) and
  // 128 x 512 (1,024) stream; 64 x 1K at group 7 (256 items) does not.
  EXPECT_EQ(stream_grid_blocks(512, 16, 264, 0), 264);
  EXPECT_EQ(stream_grid_blocks(256, 16, 264, 0), 0);
  EXPECT_EQ(stream_grid_blocks(1024, 8, 264, 0), 264);
  EXPECT_EQ(stream_grid_blocks(1024, 8, 264, -1), 0);  // off
  EXPECT_EQ(stream_grid_blocks(1024, kRowStreamMinTiles - 1, 264, 0), 0);
  EXPECT_EQ(stream_grid_blocks(1024, kRowStreamMinTiles - 1, 264, 4), 0);
  EXPECT_EQ(stream_grid_blocks(1024, kRowStreamMinTiles, 264, 0), 264);
  EXPECT_EQ(stream_grid_blocks(0, 8, 264, 4), 0);
  EXPECT_EQ(stream_grid_blocks(1024, 8, 0, 0), 0);
}

// Blocks an SM of the grouped-decode split rule (grouped_decode_blocks_per_sm) from the two GPUs
// it was measured on, by their memory clocks and bus widths as the driver reports them: an H100
// (2,619 MHz, 5,120 bits, 132 SMs) plans one block an SM over paged K/V, an H200 (3,201 MHz, 6,016
// bits, 132 SMs) two; contiguous K/V one on both; BF16 at d 64 two on both; never more than fit;
// a bus that cannot be read (0) or no SMs count as narrow.
TEST(PlannerTuning, GroupedDecodeBlocksPerSmByTheBusShareOfAnSm) {
  const double h100 = 2.0 * 2619000 * 1e3 * 5120 / 8.0, h200 = 2.0 * 3201000 * 1e3 * 6016 / 8.0;
  EXPECT_FALSE(wide_bus_per_sm(h100, 132));
  EXPECT_TRUE(wide_bus_per_sm(h200, 132));
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, true, h100, 132, 2), 1);
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, true, h200, 132, 2), 2);
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, false, h100, 132, 2), 1);
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, false, h200, 132, 2), 1);
  EXPECT_EQ(grouped_decode_blocks_per_sm(true, false, h100, 132, 3), 2);
  EXPECT_EQ(grouped_decode_blocks_per_sm(true, true, h100, 132, 3), 2);
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, true, h200, 132, 1), 1);
  EXPECT_EQ(grouped_decode_blocks_per_sm(true, false, h200, 132, 1), 1);
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, true, 0.0, 132, 2), 1);
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, true, h200, 0, 2), 1);
  // The same bus over fewer SMs is a wider share each: an H100's bus over 100 SMs (33.5 GB/s).
  EXPECT_EQ(grouped_decode_blocks_per_sm(false, true, h100, 100, 2), 2);
}

// A warpgroup-MMA plan over a tile no kernel is compiled for (only 64, and 128 at d 64 in blocks
// of 128 rows) is refused with cudaErrorInvalidValue before anything is launched or read (the
// pointers are never dereferenced: no GPU needed).
TEST(PlannerTuning, RunRefusesAWgmmaPlanOfATileNotCompiled) {
  float host_value = 0.f;
  std::int32_t host_len = 1;
  RowAttentionProblem p;
  p.shape = DecodeShape{71, 1, 64};
  p.kv_dtype = DType::fp16;
  p.num_items = 1;
  p.num_rows = 71;
  p.max_item_rows = 71;
  p.max_item_tokens = 1;
  p.q = p.o = p.lse = &host_value;
  p.seq_lens = &host_len;
  for (const auto& [rows_per_block, tile] : {std::pair{128, 96}, std::pair{128, 256}, std::pair{64, 128}}) {
    RowAttentionPlan plan;
    plan.path = RowAttentionPath::tensor_core;
    plan.wgmma = true;
    plan.rows_per_block = rows_per_block;
    plan.row_blocks = rows_per_block == 64 ? 2 : 1;
    plan.tile_tokens = tile;
    plan.stages = 3;
    plan.splits = 1;
    EXPECT_EQ(run_row_attention<PagedKV<__half>>(PagedKV<__half>{}, p, plan, nullptr, nullptr), cudaErrorInvalidValue)
        << rows_per_block << " rows, tile " << tile;
  }
}

// A plan carrying a uniform length (RowAttentionPlan::uniform_len) runs only on a warpgroup-MMA
// kernel's host-length twin (FP16: d 64 in blocks of 128 rows, d 128 in blocks of 64) over implicit
// decode items, with a length in [0, max_item_tokens]: run_row_attention refuses anything else with
// cudaErrorInvalidValue before it launches or reads anything (no GPU needed).
TEST(PlannerTuning, RunRefusesAUniformLengthOffTheHostLengthTwin) {
  float host_value = 0.f;
  std::int32_t host_len = 64;
  RowAttentionItem host_item{};
  const auto problem = [&](DecodeShape shape) {
    RowAttentionProblem p;
    p.shape = shape;
    p.kv_dtype = DType::fp16;
    p.num_items = 1;
    p.num_rows = shape.heads_q;
    p.max_item_rows = shape.heads_q;
    p.max_item_tokens = 64;
    p.q = p.o = p.lse = &host_value;
    p.seq_lens = &host_len;
    return p;
  };
  const auto plan = [](int rows_per_block, bool wgmma, int uniform_len) {
    RowAttentionPlan out;
    out.path = RowAttentionPath::tensor_core;
    out.wgmma = wgmma;
    out.wide = !wgmma;
    out.rows_per_block = rows_per_block;
    out.row_blocks = 1;
    out.tile_tokens = 64;
    out.stages = wgmma ? 4 : 3;
    out.splits = 1;
    out.uniform_len = uniform_len;
    return out;
  };
  const RowAttentionProblem falcon = problem({71, 1, 64});
  EXPECT_EQ(run_row_attention<PagedKV<__half>>(PagedKV<__half>{}, falcon, plan(128, true, 65), nullptr, nullptr),
            cudaErrorInvalidValue);  // longer than max_item_tokens
  EXPECT_EQ(run_row_attention<PagedKV<__half>>(PagedKV<__half>{}, falcon, plan(128, true, -1), nullptr, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(run_row_attention<PagedKV<__half>>(PagedKV<__half>{}, falcon, plan(128, false, 64), nullptr, nullptr),
            cudaErrorInvalidValue);  // the wide mma.sync tiling
  RowAttentionProblem explicit_items = falcon;
  explicit_items.explicit_items = true;
  explicit_items.items = &host_item;
  EXPECT_EQ(run_row_attention<PagedKV<__half>>(PagedKV<__half>{}, explicit_items, plan(128, true, 64), nullptr, nullptr),
            cudaErrorInvalidValue);
  const RowAttentionProblem d128 = problem({128, 1, 128});
  EXPECT_EQ(run_row_attention<ContiguousKV<__half>>(ContiguousKV<__half>{}, d128, plan(128, true, 64), nullptr, nullptr),
            cudaErrorInvalidValue);  // no twin at d 128 in blocks of two warpgroups
  const RowAttentionProblem one_warpgroup = problem({48, 1, 64});
  EXPECT_EQ(run_row_attention<ContiguousKV<__half>>(ContiguousKV<__half>{}, one_warpgroup, plan(64, true, 64), nullptr,
                                                    nullptr),
            cudaErrorInvalidValue);  // no twin for blocks of one warpgroup at d 64
}

// A host-length twin is a kernel of its own with its plain kernel's launch shape.
void expect_twin_of(const WgmmaRowKernel& host, const WgmmaRowKernel& plain, const std::string& what) {
  EXPECT_NE(host.kernel, plain.kernel) << what;
  EXPECT_EQ(host.shared_bytes, plain.shared_bytes) << what;
  EXPECT_EQ(host.threads, plain.threads) << what;
  EXPECT_EQ(host.tile, plain.tile) << what;
  EXPECT_EQ(host.stages, plain.stages) << what;
}

// The warpgroup-MMA kernel table (wgmma_row_kernel; no GPU needed: it hands out pointers): where
// the build carries the kernels, blocks of 64 and 128 rows at d 64 and 128 over 64-token tiles,
// 128-token tiles only for d 64 blocks of 128 rows, and the host-length twins only for d 64 blocks
// of 128 rows at either tile and d 128 blocks of 64 rows (the grouped decodes) over 64-token tiles,
// each a kernel of its own with its plain kernel's launch shape; in a build without them, nothing.
template <class KV>
void expect_wgmma_kernel_table() {
  const bool compiled = wgmma_row_kernel<KV>(64, 64, 64).kernel != nullptr;
  const auto has = [](int rows, int d, int tile, bool twin) {
    return wgmma_row_kernel<KV>(rows, d, tile, twin).kernel != nullptr;
  };
  for (int d : {64, 128})
    for (int rows : {64, 128}) {
      EXPECT_EQ(has(rows, d, 64, false), compiled) << rows << " rows, d " << d;
      EXPECT_EQ(has(rows, d, 128, false), compiled && d == 64 && rows == 128) << rows << " rows, d " << d;
      for (int tile : {64, 128}) {
        const std::string what = std::to_string(rows) + " rows, d " + std::to_string(d) + ", tile " +
                                 std::to_string(tile) + ", twin";
        const bool twin = compiled && ((d == 64 && rows == 128) || (d == 128 && rows == 64 && tile == 64));
        EXPECT_EQ(has(rows, d, tile, true), twin) << what;
        if (!twin) continue;
        const WgmmaRowKernel plain = wgmma_row_kernel<KV>(rows, d, tile), host = wgmma_row_kernel<KV>(rows, d, tile, true);
        EXPECT_EQ(host.tile, tile) << what;
        expect_twin_of(host, plain, what);
      }
    }
  for (bool twin : {false, true}) {
    EXPECT_FALSE(has(128, 64, 96, twin));
    EXPECT_FALSE(has(32, 64, 64, twin));
    EXPECT_FALSE(has(128, 256, 64, twin));
  }
}

TEST(PlannerTuning, WgmmaKernelTableHoldsTheHostLengthTwinsAtD64In128RowBlocksAndD128In64) {
  expect_wgmma_kernel_table<ContiguousKV<__half>>();
  expect_wgmma_kernel_table<PagedKV<__half>>();
}

// BF16 (the packed split, kernels/row_attention_wgmma.cuh): blocks of one warpgroup of 32 rows at
// d 64 and 128 over 64-token tiles and their host-length twins (a kernel of its own, the plain
// kernel's launch shape), in a build that carries the FP16 kernels; no other block or tile.
template <class KV>
void expect_packed_wgmma_kernel_table() {
  const bool compiled = wgmma_row_kernel<ContiguousKV<__half>>(64, 64, 64).kernel != nullptr;
  EXPECT_EQ(wgmma_warpgroup_rows<__nv_bfloat16>(), 32);
  EXPECT_EQ(wgmma_warpgroup_rows<__half>(), 64);
  for (int d : {64, 128}) {
    const WgmmaRowKernel k = wgmma_row_kernel<KV>(32, d, 64);
    EXPECT_EQ(k.kernel != nullptr, compiled) << "d " << d;
    if (compiled) {
      EXPECT_EQ(k.threads, 128) << "d " << d;
      EXPECT_EQ(k.tile, 64) << "d " << d;
      EXPECT_EQ(k.stages, d == 64 ? 4 : 3) << "d " << d;  // the overlap's fourth stage at d 64 only
    }
    const WgmmaRowKernel twin = wgmma_row_kernel<KV>(32, d, 64, true);
    EXPECT_EQ(twin.kernel != nullptr, compiled) << "d " << d << " twin";
    if (compiled) expect_twin_of(twin, k, "d " + std::to_string(d) + " twin");
    for (bool twin : {false, true}) {
      for (int rows : {16, 64, 128}) EXPECT_EQ(wgmma_row_kernel<KV>(rows, d, 64, twin).kernel, nullptr) << rows << " rows";
      EXPECT_EQ(wgmma_row_kernel<KV>(32, d, 128, twin).kernel, nullptr) << "128-token tiles, d " << d;
    }
  }
  EXPECT_EQ(wgmma_row_kernel<KV>(32, 256, 64).kernel, nullptr);
}

TEST(PlannerTuning, WgmmaKernelTableHoldsBf16InOneWarpgroupBlocksOf32Rows) {
  expect_packed_wgmma_kernel_table<ContiguousKV<__nv_bfloat16>>();
  expect_packed_wgmma_kernel_table<PagedKV<__nv_bfloat16>>();
}

// The one-token variant twins: FP16 at d 128 in blocks of 64 rows, BF16 at d 64 in blocks of 32,
// one warpgroup over 64-token tiles with the plain kernel's stages, in a build that carries the
// wgmma kernels; no other storage type, head dim or block.
template <class KV>
void expect_variant_wgmma_kernel_table(int d, int rows) {
  const bool compiled = wgmma_row_kernel<ContiguousKV<__half>>(64, 64, 64).kernel != nullptr;
  const WgmmaRowKernel k = wgmma_row_variant_kernel<KV>(rows, d);
  EXPECT_EQ(k.kernel != nullptr, compiled) << "d " << d;
  if (compiled) {
    const WgmmaRowKernel plain = wgmma_row_kernel<KV>(rows, d, 64);
    EXPECT_NE(k.kernel, plain.kernel);
    EXPECT_EQ(k.threads, 128);
    EXPECT_EQ(k.tile, 64);
    EXPECT_EQ(k.stages, plain.stages);
    EXPECT_EQ(k.shared_bytes, plain.shared_bytes);
  }
  for (int other_d : {64, 128, 256}) {
    if (other_d != d) {
      EXPECT_EQ(wgmma_row_variant_kernel<KV>(rows, other_d).kernel, nullptr) << "d " << other_d;
    }
  }
  for (int other_rows : {16, 32, 64, 128}) {
    if (other_rows != rows) {
      EXPECT_EQ(wgmma_row_variant_kernel<KV>(other_rows, d).kernel, nullptr) << other_rows << " rows";
    }
  }
}

TEST(PlannerTuning, WgmmaVariantTwinsAreFp16AtD128AndBf16AtD64) {
  expect_variant_wgmma_kernel_table<ContiguousKV<__half>>(128, 64);
  expect_variant_wgmma_kernel_table<PagedKV<__half>>(128, 64);
  expect_variant_wgmma_kernel_table<ContiguousKV<__nv_bfloat16>>(64, 32);
  expect_variant_wgmma_kernel_table<PagedKV<__nv_bfloat16>>(64, 32);
}

TEST(PlannerTuning, KnobIsRecordedInMetaEnvironment) {
  ScopedEnv env("DECODE_BENCH_FD_SPLIT_SCALE", "0.5");
  const auto meta = make_meta({"decode-bench"}, "ci-smoke");
  EXPECT_EQ(meta["environment"]["DECODE_BENCH_FD_SPLIT_SCALE"], "0.5");
}

TEST(PlannerTuningGpu, PlannerScalesItsOwnSplitCountButNotAnExplicitOne) {
  DB_REQUIRE_GPU();
  DecodeProblem problem;
  problem.shape = DecodeShape{32, 32, 128};
  problem.max_len = 65536;  // long enough that the wave, not the length, sets the split count
  DecodePlan base, slowed, explicit_plan;
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, {}, &base), cudaSuccess);
  DecodeOptions scaled;
  scaled.tuning.fd_split_scale = 0.25;
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, scaled, &slowed), cudaSuccess);
  EXPECT_EQ(slowed.num_splits, scaled_splits(base.num_splits, 0.25));
  EXPECT_LT(slowed.num_splits, base.num_splits);
  scaled.splits = 8;
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, scaled, &explicit_plan),
            cudaSuccess);
  EXPECT_EQ(explicit_plan.num_splits, 8);
}

// Whether the current GPU's bus by the clock is wide per SM (wide_bus_per_sm), as the CUDA-core
// tiling rules read it.
bool current_device_has_wide_bus() {
  int dev = 0, sms = 0;
  double clock_dram = 0;
  EXPECT_EQ(cudaGetDevice(&dev), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  EXPECT_EQ(clock_dram_bytes_per_s(dev, &clock_dram), cudaSuccess);
  return wide_bus_per_sm(clock_dram, sms);
}

// The CUDA-core flash-decode's tiling as the planner plans `shape` over `seqs` sequences of `len`
// tokens in T storage (with a sliding window where `window` > 0), checked to be a CUDA-core plan.
template <class T>
DecodeTiling cuda_core_tiling(DecodeShape shape, int seqs, std::int64_t len, bool paged, std::int64_t window = 0) {
  DecodeProblem problem;
  problem.shape = shape;
  problem.num_seqs = seqs;
  problem.max_len = len;
  problem.kv_dtype = dtype_of<T>::value;
  problem.variant.window = window;
  DecodePlan plan;
  const cudaError_t e = paged ? plan_decode<PagedKV<T>>(DecodeKernel::flash_decode, problem, {}, &plan)
                              : plan_decode<ContiguousKV<T>>(DecodeKernel::flash_decode, problem, {}, &plan);
  EXPECT_EQ(e, cudaSuccess);
  EXPECT_EQ(plan.path, DecodePath::cuda_core);
  return plan.tiling;
}

// The CUDA-core tiling of a head dim below the compiled one (Phi-3-mini's 32 / 32 heads at d 96
// on the kernel of 128): on a GPU with a wide bus the short tiling up to eight standard tiles a
// block (choose_decode_tiling, kernels/decode_balance.hpp), contiguous and paged, and in a paged
// cache the deep one past them (FP16 and BF16 only, where it is compiled); the
// standard one on a narrower bus, at d 128, and contiguous past eight tiles.
TEST(PlannerTuningGpu, MaskedHeadDimTakesTheShortOrDeepTilingOnAWideBus) {
  DB_REQUIRE_GPU();
  const bool wide = current_device_has_wide_bus();
  SCOPED_TRACE(wide ? "a wide bus" : "a narrow bus");
  const auto tiling_as = []<class T>(T, int d, int seqs, std::int64_t len, bool paged) {
    return cuda_core_tiling<T>(DecodeShape{32, 32, d}, seqs, len, paged);
  };
  const auto tiling = [&](int d, int seqs, std::int64_t len, bool paged) {
    return tiling_as(__half{}, d, seqs, len, paged);
  };
  // 128 and 64 sequences x 32 heads: 4,096 and 2,048 blocks, more than a wave on any GPU tested.
  for (bool paged : {false, true}) {
    SCOPED_TRACE(paged ? "paged" : "contiguous");
    const DecodeTiling masked = wide ? DecodeTiling::short_batch : DecodeTiling::standard;
    const DecodeTiling deep = wide && paged ? DecodeTiling::deep : DecodeTiling::standard;
    EXPECT_EQ(tiling(96, 128, 512, paged), masked);
    EXPECT_EQ(tiling(96, 64, 1024, paged), masked);
    EXPECT_EQ(tiling(80, 64, 1024, paged), masked);
    EXPECT_EQ(tiling(96, 64, 1025, paged), deep);
    EXPECT_EQ(tiling(96, 16, 4096, paged), deep);
    EXPECT_EQ(tiling(112, 1, 32768, paged), deep);
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 96, 16, 4096, paged), deep);
    EXPECT_EQ(tiling_as(float{}, 96, 16, 4096, paged), DecodeTiling::standard);  // not compiled
    EXPECT_EQ(tiling(48, 16, 4096, paged), DecodeTiling::standard);               // the kernel of 64: not compiled
    EXPECT_EQ(tiling(128, 16, 4096, paged), DecodeTiling::standard);
    EXPECT_EQ(tiling(128, 64, 1024, paged), DecodeTiling::standard);
    EXPECT_EQ(tiling(128, 128, 512, paged), DecodeTiling::standard);
  }
}

// GQA group 2 (Gemma-3-27B's 32 / 16 heads) on the CUDA-core kernel: on a GPU with a wide bus the
// short tiling for uniform batches whose standard blocks fill a wave, up to eight standard tiles a
// block, FP16 and BF16 at d 128 and the head dims it masks (choose_decode_tiling,
// kernels/decode_balance.hpp), contiguous and paged; the standard one on a narrower bus, past eight
// tiles, below a wave, for the storage types and head dims it is not compiled for, and for the
// attention variants (their twins keep the standard tiling at group 2).
TEST(PlannerTuningGpu, GroupTwoTakesTheShortTilingOnAWideBus) {
  DB_REQUIRE_GPU();
  const bool wide = current_device_has_wide_bus();
  SCOPED_TRACE(wide ? "a wide bus" : "a narrow bus");
  const auto tiling_as = []<class T>(T, int d, int seqs, std::int64_t len, bool paged, std::int64_t window = 0) {
    return cuda_core_tiling<T>(DecodeShape{32, 16, d}, seqs, len, paged, window);
  };
  // 128 and 64 sequences x 16 KV heads: 2,048 and 1,024 blocks, more than a wave on any GPU tested.
  for (bool paged : {false, true}) {
    SCOPED_TRACE(paged ? "paged" : "contiguous");
    const DecodeTiling short_on_wide = wide ? DecodeTiling::short_batch : DecodeTiling::standard;
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 128, 128, 512, paged), short_on_wide);
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 128, 64, 1024, paged), short_on_wide);
    EXPECT_EQ(tiling_as(__half{}, 128, 64, 1024, paged), short_on_wide);
    EXPECT_EQ(tiling_as(__half{}, 96, 128, 512, paged), short_on_wide);
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 128, 64, 1025, paged), DecodeTiling::standard);  // a ninth tile
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 128, 16, 4096, paged), DecodeTiling::standard);
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 128, 1, 32768, paged), DecodeTiling::standard);
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 128, 4, 1024, paged), DecodeTiling::standard);   // 64 blocks: below a wave
    EXPECT_EQ(tiling_as(float{}, 128, 128, 512, paged), DecodeTiling::standard);          // not compiled
    EXPECT_EQ(tiling_as(__half{}, 64, 128, 512, paged), DecodeTiling::standard);          // the kernel of 64
    EXPECT_EQ(tiling_as(__nv_bfloat16{}, 128, 128, 4096, paged, 512), DecodeTiling::standard);  // a window: a twin
  }
}

// Where the warpgroup-MMA kernel does not run (no sm_90a in the build, or another GPU): a grouped
// FP16 (group <= 16) or packed BF16 (group <= 8) decode at d 128 over contiguous K/V plans about
// one block per SM (the fewest splits that fill the SMs); paged K/V, unpacked BF16, FP8 and
// DECODE_BENCH_ROW_DECODE_SPLITS=slots keep the every-slot rule, which takes more blocks than SMs
// at these shapes; =sms takes one block per SM for the others too. BF16 and FP8 at group 4 take the
// packed-split kernel unless DECODE_BENCH_ROW_PACKED_SPLIT=off; FP16 never does. Where it runs,
// FP16 and BF16 grouped decodes take it at every shape (RowAttentionWgmmaGpu.GroupedDecodes), one
// block per SM by default over contiguous K/V, over paged K/V as many as the GPU's bus asks
// (grouped_decode_blocks_per_sm), one under =sms, and the every-slot rule under =slots; FP8 is
// planned as elsewhere.
TEST(PlannerTuningGpu, GroupedDecodePlansAboutOneBlockPerSmWhereMeasuredFaster) {
  DB_REQUIRE_GPU();
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  const bool wgmma = wgmma_row_kernel_runs_on(dev);
  SCOPED_TRACE(wgmma ? "the wgmma kernel runs on this GPU" : "no wgmma kernel in this build or on this GPU");
  const auto blocks = [](const DecodePlan& plan, int items) {
    EXPECT_EQ(plan.path, DecodePath::tensor_core);
    return static_cast<std::int64_t>(plan.rows.splits) * items * plan.rows.row_blocks;
  };
  for (const auto& [seqs, len] : {std::pair{16, 4096}, std::pair{1, 65536}, std::pair{64, 1024}}) {
    SCOPED_TRACE(std::to_string(seqs) + " x " + std::to_string(len));
    DecodeProblem fp16;
    fp16.shape = DecodeShape{32, 8, 128};
    fp16.num_seqs = seqs;
    fp16.max_len = len;
    DecodeProblem bf16 = fp16, e4m3 = fp16, group16 = fp16;
    bf16.kv_dtype = DType::bf16;
    e4m3.kv_dtype = DType::fp8_e4m3;
    group16.shape = DecodeShape{128, 8, 128};
    const int items = seqs * 8;
    // The n-blocks-an-SM rule's grid: unsplit where the items alone fill n blocks an SM, else the
    // most splits that keep to n blocks an SM, at least three quarters of those slots busy.
    const auto expect_per_sm = [&](const DecodePlan& plan, std::int64_t n, const char* what) {
      const std::int64_t b = blocks(plan, items), target = n * sms;
      if (items >= target) {
        EXPECT_EQ(plan.rows.splits, 1) << what;
      } else {
        EXPECT_LE(b, target) << what;
        EXPECT_GE(4 * b, 3 * target) << what;
        EXPECT_EQ(plan.rows.splits, nonempty_chunks(len, target / items, plan.rows.tile_tokens)) << what;
      }
    };
    const auto expect_one_per_sm = [&](const DecodePlan& plan, const char* what) { expect_per_sm(plan, 1, what); };
    DecodeOptions tc;  // FP8 decodes on CUDA cores unless the path is pinned
    tc.path = DecodePath::tensor_core;
    DecodeOptions slots;
    slots.tuning.row_decode_splits = RowDecodeSplits::slots;
    DecodeOptions unpacked;
    unpacked.tuning.row_packed_split = false;
    DecodeOptions forced = tc;
    forced.tuning.row_decode_splits = RowDecodeSplits::sms;
    DecodePlan fp16_plan, paged, bf16_plan, bf16_paged, e4m3_plan, group16_plan, slots_plan, e4m3_sms, paged_sms,
        bf16_unpacked;
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, fp16, {}, &fp16_plan), cudaSuccess);
    ASSERT_EQ(plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, fp16, {}, &paged), cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__nv_bfloat16>>(DecodeKernel::flash_decode, bf16, {}, &bf16_plan), cudaSuccess);
    ASSERT_EQ(plan_decode<PagedKV<__nv_bfloat16>>(DecodeKernel::flash_decode, bf16, {}, &bf16_paged), cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__nv_fp8_e4m3>>(DecodeKernel::flash_decode, e4m3, tc, &e4m3_plan),
              cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, group16, {}, &group16_plan), cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, fp16, slots, &slots_plan), cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__nv_fp8_e4m3>>(DecodeKernel::flash_decode, e4m3, forced, &e4m3_sms),
              cudaSuccess);
    ASSERT_EQ(plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, fp16, forced, &paged_sms), cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__nv_bfloat16>>(DecodeKernel::flash_decode, bf16, unpacked, &bf16_unpacked),
              cudaSuccess);
    for (const auto& [plan, what] : {std::pair{&fp16_plan, "fp16"}, std::pair{&paged, "fp16 paged"},
                                     std::pair{&bf16_plan, "bf16"}, std::pair{&bf16_paged, "bf16 paged"},
                                     std::pair{&bf16_unpacked, "bf16 unpacked"}, std::pair{&group16_plan, "group 16"},
                                     std::pair{&slots_plan, "slots"}, std::pair{&paged_sms, "fp16 paged sms"}})
      EXPECT_EQ(plan->rows.wgmma, wgmma) << what;
    EXPECT_FALSE(e4m3_plan.rows.wgmma);
    EXPECT_FALSE(e4m3_sms.rows.wgmma);
    const std::int64_t slots_blocks = blocks(slots_plan, items);
    expect_one_per_sm(e4m3_sms, "fp8 sms");
    expect_one_per_sm(paged_sms, "fp16 paged sms");
    EXPECT_TRUE(e4m3_plan.rows.packed);
    EXPECT_FALSE(bf16_unpacked.rows.packed);
    EXPECT_FALSE(fp16_plan.rows.packed);  // FP16 has no lo parts
    EXPECT_FALSE(group16_plan.rows.packed);
    if (items < 2 * sms) {
      EXPECT_GT(blocks(e4m3_plan, items), sms);  // the rules differ here
    }
    if (wgmma) {
      // One block an SM by default over contiguous K/V, FP16 and BF16 blocks alike; over paged K/V
      // as many as grouped_decode_blocks_per_sm gives this GPU's bus (two on a wide one), and the
      // plan's slots say which.
      double clock_dram = 0;
      ASSERT_EQ(clock_dram_bytes_per_s(dev, &clock_dram), cudaSuccess);
      const std::int64_t paged_per_sm =
          grouped_decode_blocks_per_sm(false, true, clock_dram, sms, paged.rows.blocks_per_sm);
      SCOPED_TRACE("paged grouped decodes plan " + std::to_string(paged_per_sm) + " blocks an SM here");
      expect_one_per_sm(fp16_plan, "fp16");
      expect_per_sm(paged, paged_per_sm, "fp16 paged");
      expect_one_per_sm(bf16_plan, "bf16");
      expect_per_sm(bf16_paged, paged_per_sm, "bf16 paged");
      expect_one_per_sm(bf16_unpacked, "bf16 unpacked");  // the packed-split knob is mma.sync's
      expect_one_per_sm(group16_plan, "group 16");
      EXPECT_EQ(fp16_plan.rows.slots, sms);
      EXPECT_EQ(paged.rows.slots, paged_per_sm * sms);
      EXPECT_EQ(bf16_paged.rows.slots, paged_per_sm * sms);
      EXPECT_FALSE(bf16_plan.rows.packed);
      EXPECT_FALSE(bf16_paged.rows.packed);
      if (items < 2 * sms) {
        EXPECT_GT(slots_blocks, sms);
      }
    } else {
      EXPECT_EQ(blocks(paged, items), slots_blocks);
      EXPECT_EQ(blocks(bf16_unpacked, items), slots_blocks);
      EXPECT_EQ(blocks(bf16_paged, items), slots_blocks);
      expect_one_per_sm(fp16_plan, "fp16");
      expect_one_per_sm(bf16_plan, "bf16");
      expect_one_per_sm(group16_plan, "group 16");  // 16 rows still fill one 16-row block
      EXPECT_TRUE(bf16_plan.rows.packed);
      EXPECT_TRUE(bf16_paged.rows.packed);
      if (items < 2 * sms) {
        EXPECT_GT(slots_blocks, sms);
      }
    }
  }
}

// The row-attention split count: the automatic one leaves no split without tokens (the whole-tile
// cut of 32,768 tokens into 33 splits has an empty 33rd), a pinned one is launched as asked and
// its empty splits are not counted active.
TEST(PlannerTuningGpu, NoAutomaticSplitIsEmptyAndAPinnedCountIsLaunchedAsAsked) {
  DB_REQUIRE_GPU();
  DecodeProblem p;
  p.shape = DecodeShape{32, 8, 128};
  p.num_seqs = 1;
  p.max_len = 32768;
  DecodeOptions tc;
  tc.path = DecodePath::tensor_core;
  DecodePlan automatic, pinned;
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, tc, &automatic), cudaSuccess);
  ASSERT_GT(automatic.rows.splits, 1);
  EXPECT_EQ(nonempty_chunks(p.max_len, automatic.rows.splits, automatic.rows.tile_tokens), automatic.rows.splits);
  EXPECT_EQ(automatic.active_splits, automatic.num_splits);
  tc.splits = 33;
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, tc, &pinned), cudaSuccess);
  EXPECT_EQ(pinned.num_splits, 33);
  EXPECT_EQ(pinned.active_splits, nonempty_chunks(p.max_len, 33, pinned.rows.tile_tokens));
  if (pinned.rows.tile_tokens == 64) {
    EXPECT_EQ(pinned.active_splits, 32);
  }
}

// The tensor-core row attention's automatic tiling for shared-prefix-like items (one per KV head,
// N rows each; kernels/row_attention_launch.cuh). Where the warpgroup-MMA kernel runs (a build
// with sm_90a on a compute capability 9.0 GPU: wgmma_row_kernel_runs_on), FP16 d 128 and d 64 items
// of more than 64 rows take it in 128-row blocks, and of 33-64 rows over at least 128 tiles (8K
// tokens) in 64-row blocks. Elsewhere those 33-64-row items take the narrow tiling at d 128
// (measured faster than wide there before the wgmma kernel) and the wide one at d 64, and the larger
// ones the wide tiling. On every GPU: shorter 64-row FP16 items, BF16 and a pinned wide tiling take
// the wide tiling; 32 rows the narrow.
TEST(PlannerTuningGpu, RowTilingOfPrefixItemsWgmmaWhereItRunsElseNarrowOrWide) {
  DB_REQUIRE_GPU();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  const bool wgmma_runs = wgmma_row_kernel_runs_on(dev);
  SCOPED_TRACE(wgmma_runs ? "the wgmma kernel runs on this GPU" : "no wgmma kernel in this build or on this GPU");
  // The plan's tiling ("wgmma", "wide" or "narrow") and rows per block.
  const auto tiling_of = [](DType dtype, int rows, std::int64_t tokens, int head_dim = 128,
                            const RowAttentionOptions& options = {}) {
    RowAttentionProblem p;
    p.shape = DecodeShape{32, 32, head_dim};
    p.kv_dtype = dtype;
    p.num_items = 32;
    p.num_rows = 32 * rows;
    p.max_item_rows = rows;
    p.max_item_tokens = tokens;
    p.explicit_items = true;  // prefix items, planned before their array exists
    RowAttentionPlan plan;
    cudaError_t e = cudaErrorInvalidValue;
    if (dtype == DType::fp16) e = plan_row_attention<PagedKV<__half>>(p, options, &plan);
    else e = plan_row_attention<PagedKV<__nv_bfloat16>>(p, options, &plan);
    EXPECT_EQ(e, cudaSuccess) << dtype_name(dtype) << " rows " << rows << " tokens " << tokens;
    EXPECT_EQ(plan.path, RowAttentionPath::tensor_core);
    EXPECT_FALSE(plan.wgmma && plan.wide);
    return std::string(plan.wgmma ? "wgmma" : plan.wide ? "wide" : "narrow") + " " +
           std::to_string(plan.rows_per_block);
  };
  struct Want {
    DType dtype;
    int rows;
    std::int64_t tokens;
    int head_dim;
    const char* with_wgmma;
    const char* without;
  };
  for (const Want& w : {Want{DType::fp16, 64, 8192, 128, "wgmma 64", "narrow 64"},
                        Want{DType::fp16, 64, 32768, 128, "wgmma 64", "narrow 64"},
                        Want{DType::fp16, 33, 8192, 128, "wgmma 64", "narrow 64"},
                        Want{DType::fp16, 65, 8192, 128, "wgmma 128", "wide 128"},
                        Want{DType::fp16, 65, 700, 128, "wgmma 128", "wide 64"},  // under 32 tiles: 64-row wide blocks
                        Want{DType::fp16, 256, 32768, 128, "wgmma 128", "wide 256"},
                        Want{DType::fp16, 64, 8191 - 63, 128, "wide 64", "wide 64"},  // 127 tiles
                        Want{DType::fp16, 64, 1024, 128, "wide 64", "wide 64"},
                        Want{DType::fp16, 32, 9000, 128, "narrow 32", "narrow 32"},
                        Want{DType::bf16, 64, 8192, 128, "wide 64", "wide 64"},
                        Want{DType::bf16, 256, 32768, 128, "wide 256", "wide 256"},
                        Want{DType::fp16, 64, 8192, 64, "wgmma 64", "wide 64"},
                        Want{DType::fp16, 256, 32768, 64, "wgmma 128", "wide 256"},
                        Want{DType::fp16, 64, 1024, 64, "wide 64", "wide 64"}}) {
    EXPECT_EQ(tiling_of(w.dtype, w.rows, w.tokens, w.head_dim), wgmma_runs ? w.with_wgmma : w.without)
        << dtype_name(w.dtype) << " D " << w.head_dim << " rows " << w.rows << " tokens " << w.tokens;
  }
  RowAttentionOptions pinned;
  pinned.tuning.row_tiling = RowAttentionTiling::wide;
  EXPECT_EQ(tiling_of(DType::fp16, 64, 8192, 128, pinned), "wide 64");
  EXPECT_EQ(tiling_of(DType::fp16, 256, 32768, 128, pinned), "wide 256");
}

// The cluster merge (RowAttentionPlan::cluster_merge) is planned for decode items only: the same
// counts announced as explicit items (the shared-prefix planner's, before their array exists) get
// partials instead; and run_row_attention refuses a cluster plan for explicit items before it
// launches anything (the pointers below are never read).
TEST(PlannerTuningGpu, ClusterMergeOnlyForDecodeItemsAndRefusedForExplicitOnes) {
  DB_REQUIRE_GPU();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  if (!wgmma_row_kernel_runs_on(dev)) GTEST_SKIP() << "no warpgroup-MMA row kernel in this build or on this GPU";
  RowAttentionProblem p;
  p.shape = DecodeShape{71, 1, 64};  // Falcon-7B: one 128-row item a sequence
  p.kv_dtype = DType::fp16;
  p.num_items = 4;
  p.num_rows = 4 * 71;
  p.max_item_rows = 71;
  p.max_item_tokens = 4096;
  RowAttentionOptions two_splits;
  two_splits.splits = 2;
  RowAttentionPlan cluster, partials;
  ASSERT_EQ(plan_row_attention<PagedKV<__half>>(p, two_splits, &cluster), cudaSuccess);
  EXPECT_TRUE(cluster.wgmma);
  EXPECT_TRUE(cluster.cluster_merge);
  EXPECT_EQ(cluster.workspace_bytes, 0u);  // no partials, no counters
  RowAttentionProblem explicit_items = p;
  explicit_items.explicit_items = true;
  ASSERT_EQ(plan_row_attention<PagedKV<__half>>(explicit_items, two_splits, &partials), cudaSuccess);
  EXPECT_FALSE(partials.cluster_merge);
  EXPECT_GT(partials.partial_states, 0);

  DeviceBuffer<float> q(1), o(1), lse(1);
  DeviceBuffer<RowAttentionItem> items(1);
  DeviceBuffer<std::int32_t> lens(1);
  explicit_items.q = q.get();
  explicit_items.o = o.get();
  explicit_items.lse = lse.get();
  explicit_items.seq_lens = lens.get();
  EXPECT_EQ(run_row_attention<PagedKV<__half>>(PagedKV<__half>{}, explicit_items, cluster, nullptr, nullptr),
            cudaErrorInvalidValue);  // announced explicit, array not yet set
  explicit_items.items = items.get();
  EXPECT_EQ(run_row_attention<PagedKV<__half>>(PagedKV<__half>{}, explicit_items, cluster, nullptr, nullptr),
            cudaErrorInvalidValue);  // the array given
}

// The uniform length (RowAttentionPlan::uniform_len, the host-length twin's argument) is planned
// only where the warpgroup-MMA kernel runs, for decode items in blocks its twin is compiled for
// (FP16 d 64 in two warpgroups; the grouped decodes' one-warpgroup blocks: FP16 and BF16 at d 128,
// BF16 at d 64) whose host lengths are given, equal and not 0, and DECODE_BENCH_ROW_HOST_LENGTH is
// not off; contiguous and paged alike, at either tile.
TEST(PlannerTuningGpu, UniformLengthOnlyForEqualHostLengthsOnTheTwin) {
  DB_REQUIRE_GPU();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  const bool wgmma = wgmma_row_kernel_runs_on(dev);
  const auto uniform_len = [](DecodeShape shape, DType dtype, std::vector<std::int32_t> lens, bool host_lengths,
                              bool paged, TuningPolicy tuning) {
    DecodeProblem p;
    p.shape = shape;
    p.kv_dtype = dtype;
    p.num_seqs = static_cast<int>(lens.size());
    p.max_len = *std::max_element(lens.begin(), lens.end());
    if (host_lengths) p.host_seq_lens = lens.data();
    DecodePlan out;
    const DecodeOptions options{.path = DecodePath::tensor_core, .tuning = tuning};
    cudaError_t e = cudaErrorInvalidValue;
    with_storage_type(dtype, [&]<class T>(std::type_identity<T>) {
      e = paged ? plan_decode<PagedKV<T>>(DecodeKernel::flash_decode, p, options, &out)
                : plan_decode<ContiguousKV<T>>(DecodeKernel::flash_decode, p, options, &out);
    });
    EXPECT_EQ(e, cudaSuccess);
    return out.rows.uniform_len;
  };
  const DecodeShape falcon{71, 1, 64};
  const std::vector<std::int32_t> equal(16, 4096), ragged{4096, 4095, 4096}, empty(4, 0);
  for (bool paged : {false, true})
    for (int tile : {0, 64, 128}) {
      TuningPolicy tuning;
      tuning.row_wgmma_tile = tile;
      const std::string what = std::string(paged ? "paged" : "contiguous") + " tile " + std::to_string(tile);
      EXPECT_EQ(uniform_len(falcon, DType::fp16, equal, true, paged, tuning), wgmma ? 4096 : 0) << what;
      EXPECT_EQ(uniform_len({71, 1, 48}, DType::fp16, {300, 300}, true, paged, tuning), wgmma ? 300 : 0) << what;
      EXPECT_EQ(uniform_len(falcon, DType::fp16, equal, false, paged, tuning), 0) << what;  // no host lengths
      EXPECT_EQ(uniform_len(falcon, DType::fp16, ragged, true, paged, tuning), 0) << what;  // the work list
      EXPECT_EQ(uniform_len(falcon, DType::fp16, empty, true, paged, tuning), 0) << what;
      EXPECT_EQ(uniform_len(falcon, DType::bf16, equal, true, paged, tuning), 0) << what;   // the wide tiling
      EXPECT_EQ(uniform_len({128, 1, 128}, DType::fp16, equal, true, paged, tuning), 0) << what;  // d 128
      EXPECT_EQ(uniform_len({48, 1, 64}, DType::fp16, {9000}, true, paged, tuning), 0) << what;  // one warpgroup
      for (const DType dtype : {DType::fp16, DType::bf16}) {  // the grouped decodes
        EXPECT_EQ(uniform_len({32, 8, 128}, dtype, equal, true, paged, tuning), wgmma ? 4096 : 0) << what;
        EXPECT_EQ(uniform_len({28, 4, 128}, dtype, {300, 300}, true, paged, tuning), wgmma ? 300 : 0) << what;
        EXPECT_EQ(uniform_len({64, 8, 64}, dtype, equal, true, paged, tuning), wgmma && dtype == DType::bf16 ? 4096 : 0)
            << what;  // FP16 at d 64: mma.sync
        EXPECT_EQ(uniform_len({32, 8, 128}, dtype, ragged, true, paged, tuning), 0) << what;
      }
      tuning.row_host_length = false;
      EXPECT_EQ(uniform_len(falcon, DType::fp16, equal, true, paged, tuning), 0) << what;
      EXPECT_EQ(uniform_len({32, 8, 128}, DType::bf16, equal, true, paged, tuning), 0) << what;
    }
}

// Work stealing (RowAttentionPlan::steal_pool): row attention steals only where options or the
// policy's row_steal (DECODE_BENCH_ROW_STEAL) ask, and only where a stealing twin is compiled (kHasStealKernel: FP16 /
// BF16, D 128, narrow or packed) for split items; grouped decode over paged K/V asks for a quarter
// by default, over contiguous K/V for none. The grouped decodes pin the narrow tiling: where the
// warpgroup-MMA kernel runs, they take it by default, and it does not steal.
TEST(PlannerTuningGpu, RowStealPoolOnlyWhereAskedAndCompiled) {
  DB_REQUIRE_GPU();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  const bool wgmma_runs = wgmma_row_kernel_runs_on(dev);
  SCOPED_TRACE(wgmma_runs ? "the wgmma kernel runs on this GPU" : "no wgmma kernel in this build or on this GPU");
  const auto plan_of = [](int rows, int items, std::int64_t tokens, RowAttentionOptions options = {},
                          int head_dim = 128) {
    RowAttentionProblem p;
    p.shape = DecodeShape{32, 8, head_dim};
    p.kv_dtype = DType::fp16;
    p.num_items = items;
    p.num_rows = items * rows;
    p.max_item_rows = rows;
    p.max_item_tokens = tokens;
    RowAttentionPlan plan;
    EXPECT_EQ(plan_row_attention<ContiguousKV<__half>>(p, options, &plan), cudaSuccess);
    return plan;
  };
  const RowAttentionOptions narrow{.tiling = RowAttentionTiling::narrow};
  const RowAttentionOptions half{.tiling = RowAttentionTiling::narrow, .steal_pool = 0.5};
  {
    const RowAttentionPlan on_wgmma = plan_of(4, 8, 65536, {.steal_pool = 0.5});
    EXPECT_EQ(on_wgmma.wgmma, wgmma_runs);
    if (wgmma_runs) {
      EXPECT_EQ(on_wgmma.steal_pool, 0.0);
    }
    const RowAttentionPlan grouped = plan_of(4, 8, 65536, narrow);  // 32 / 8 heads, 1 x 64K: split 16 ways
    EXPECT_GT(grouped.splits, 1);
    EXPECT_FALSE(grouped.wide);
    EXPECT_EQ(grouped.steal_pool, 0.0);  // not asked
    const RowAttentionPlan asked = plan_of(4, 8, 65536, half);
    EXPECT_EQ(asked.splits, grouped.splits);
    EXPECT_EQ(asked.steal_pool, 0.5);
    EXPECT_EQ(plan_of(4, 8, 65536, {.tiling = RowAttentionTiling::narrow, .steal_pool = 1.5}).steal_pool,
              1.0);  // clamped to the whole item
    RowAttentionOptions unsplit = half;
    unsplit.splits = 1;
    EXPECT_EQ(plan_of(4, 8, 65536, unsplit).steal_pool, 0.0);
    // A shared prefix of 64 x 4 rows: the wgmma kernel where it runs, else the wide tiling; neither
    // has a stealing twin. The wide tiling pinned, on every GPU.
    const RowAttentionPlan prefix = plan_of(256, 8, 32768, {.steal_pool = 0.5});
    EXPECT_EQ(prefix.wgmma, wgmma_runs);
    EXPECT_EQ(prefix.wide, !wgmma_runs);
    EXPECT_GT(prefix.splits, 1);
    EXPECT_EQ(prefix.steal_pool, 0.0);
    RowAttentionOptions wide_half = half;
    wide_half.tiling = RowAttentionTiling::wide;
    const RowAttentionPlan wide = plan_of(256, 8, 32768, wide_half);
    EXPECT_TRUE(wide.wide);
    EXPECT_FALSE(wide.wgmma);
    EXPECT_GT(wide.splits, 1);
    EXPECT_EQ(wide.steal_pool, 0.0);
    const RowAttentionPlan d256 = plan_of(4, 8, 65536, half, 256);
    EXPECT_GT(d256.splits, 1);
    EXPECT_EQ(d256.steal_pool, 0.0);
    EXPECT_EQ(plan_of(4, 8, 65536, half, 64).steal_pool, 0.0);
  }
  {
    RowAttentionOptions pinned = narrow;
    pinned.tuning.row_steal = 0.5;
    EXPECT_EQ(plan_of(4, 8, 65536, pinned).steal_pool, 0.5);
    pinned.steal_pool = 0;
    EXPECT_EQ(plan_of(4, 8, 65536, pinned).steal_pool, 0.0);  // options over the knob
  }
  // Grouped decode, 32 / 8 heads, 1 x 64K.
  DecodeProblem problem;
  problem.shape = DecodeShape{32, 8, 128};
  problem.max_len = 65536;
  const auto decode_pool = [&](bool paged, DType dtype, DecodeOptions options = {}) {
    options.tuning.row_tiling = RowAttentionTiling::narrow;
    problem.kv_dtype = dtype;
    DecodePlan plan;
    cudaError_t e = cudaErrorInvalidValue;
    if (dtype == DType::fp16)
      e = paged ? plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, problem, options, &plan)
                : plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, options, &plan);
    else
      e = paged ? plan_decode<PagedKV<__nv_bfloat16>>(DecodeKernel::flash_decode, problem, options, &plan)
                : plan_decode<ContiguousKV<__nv_bfloat16>>(DecodeKernel::flash_decode, problem, options, &plan);
    EXPECT_EQ(e, cudaSuccess);
    EXPECT_EQ(plan.path, DecodePath::tensor_core);
    EXPECT_GT(plan.rows.splits, 1);
    return plan.rows.steal_pool;
  };
  for (DType dtype : {DType::fp16, DType::bf16}) {
    EXPECT_EQ(decode_pool(true, dtype), 0.25) << dtype_name(dtype);
    EXPECT_EQ(decode_pool(false, dtype), 0.0) << dtype_name(dtype);
  }
  DecodeOptions knob;
  knob.tuning.row_steal = 0.0;  // DECODE_BENCH_ROW_STEAL=off
  EXPECT_EQ(decode_pool(true, DType::fp16, knob), 0.0);
  knob.tuning.row_steal = 0.125;
  EXPECT_EQ(decode_pool(false, DType::fp16, knob), 0.125);
}

// Every knob at its default text: the policy the sweep parses from such an environment.
TuningPolicy policy_of_default_texts() {
  std::map<std::string, std::string> environment;
  for (const TuningKnob& k : tuning_knobs()) environment[std::string(k.name)] = std::string(k.default_text);
  return parse_tuning_policy(environment);
}

// What a decode plan decided, field by field (the results JSON's plan and the row plan under it).
nlohmann::json decisions(const DecodePlan& plan) {
  nlohmann::json j = to_json(plan);
  j["rows"] = {{"splits", plan.rows.splits},           {"rows_per_block", plan.rows.rows_per_block},
               {"stages", plan.rows.stages},           {"wide", plan.rows.wide},
               {"slots", plan.rows.slots},             {"entries", plan.rows.work_entries.size()},
               {"workspace_bytes", plan.rows.workspace_bytes}};
  j["workspace_init_bytes"] = plan.workspace_init_bytes;
  return j;
}

// Plans with no policy, with the policy of every knob's default text, and with a measured DRAM
// ceiling that the default (DECODE_BENCH_SP_SHARE_DRAM=clock) leaves unused, are the same plans:
// on a grid of decode shapes (storage types, layouts, GQA groups, uniform and ragged lengths, both
// paths), of row-attention prefix items, and of overlapped shared-prefix batches.
TEST(PlannerTuningGpu, DefaultPolicyPlansAsNoPolicy) {
  DB_REQUIRE_GPU();
  const TuningPolicy parsed = policy_of_default_texts();
  TuningPolicy with_ceiling = parsed;
  with_ceiling.measured_dram_read_bytes_per_s = 1e12;  // far from any clock estimate
  const std::vector<std::int32_t> ragged{4096, 17, 0, 1500, 65, 900, 3, 2048};
  for (const DecodeShape& shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 8, 128}, DecodeShape{28, 4, 128},
                                   DecodeShape{16, 16, 256}, DecodeShape{8, 8, 64}, DecodeShape{1, 1, 128},
                                   DecodeShape{71, 1, 64}})
    for (const auto& [seqs, len] : {std::pair{1, 65536}, std::pair{16, 4096}, std::pair{64, 256}, std::pair{8, 0}})
      for (bool host_lengths : {false, true})
        for (DecodePath path : {DecodePath::automatic, DecodePath::tensor_core})
          for (DType dtype : {DType::fp16, DType::bf16, DType::fp32, DType::fp8_e4m3})
            for (bool paged : {false, true}) {
              if (path == DecodePath::tensor_core && dtype == DType::fp32) continue;
              DecodeProblem p;
              p.shape = shape;
              p.kv_dtype = dtype;
              p.num_seqs = seqs;
              p.max_len = len;
              std::vector<std::int32_t> lens(static_cast<std::size_t>(seqs), len);
              if (host_lengths && seqs == 8) lens = ragged, p.max_len = 4096;
              if (host_lengths) p.host_seq_lens = lens.data();
              const auto plan = [&](const TuningPolicy& policy) {
                DecodePlan out;
                const DecodeOptions options{.path = path, .tuning = policy};
                cudaError_t e = cudaErrorInvalidValue;
                with_storage_type(dtype, [&]<class T>(std::type_identity<T>) {
                  e = paged ? plan_decode<PagedKV<T>>(DecodeKernel::flash_decode, p, options, &out)
                            : plan_decode<ContiguousKV<T>>(DecodeKernel::flash_decode, p, options, &out);
                });
                return std::pair{e, e == cudaSuccess ? decisions(out) : nlohmann::json()};
              };
              const std::string what = std::string(dtype_name(dtype)) + " " + std::to_string(shape.heads_q) + "/" +
                                       std::to_string(shape.heads_kv) + " d " + std::to_string(shape.head_dim) + " " +
                                       std::to_string(seqs) + " x " + std::to_string(len) +
                                       (paged ? " paged" : " contiguous") + (host_lengths ? " host lengths" : "") +
                                       " path " + std::string(decode_path_name(path));
              const auto none = plan(TuningPolicy{});
              EXPECT_EQ(plan(parsed), none) << what;
              EXPECT_EQ(plan(with_ceiling), none) << what;
            }
  // Shared-prefix batches, overlapped: the prefix phase's plan and its share (the rule's clock
  // estimate in every one), the suffix phase's plan.
  for (int n : {16, 64, 256})
    for (std::int64_t prefix : {1024, 4096, 32768})
      for (std::int64_t suffix : {1, 128})
        for (DType dtype : {DType::fp16, DType::bf16}) {
          const SharedPrefixSpec spec{n, prefix, 0, 1, suffix};
          const SharedPrefixLayout layout = shared_prefix_layout(spec, 16);
          const SharedPrefixProblem problem{DecodeShape{32, 32, 128}, dtype};
          const auto plan = [&](const TuningPolicy& policy) {
            SharedPrefixPlan out;
            SharedPrefixOptions options;
            options.overlap = true;
            options.tuning = policy;
            cudaError_t e = cudaErrorInvalidValue;
            with_storage_type(dtype, [&]<class T>(std::type_identity<T>) {
              PagedKV<T> kv{};
              kv.page_size = 16;
              e = plan_shared_prefix<T>(kv, problem, layout, options, &out);
            });
            EXPECT_EQ(out.share_dram, ShareDramSource::clock) << n << " x P " << prefix;
            return std::pair{e, e == cudaSuccess ? to_json(out, layout.levels.size(), true) : nlohmann::json()};
          };
          const std::string what = std::string(dtype_name(dtype)) + " N " + std::to_string(n) + " P " +
                                   std::to_string(prefix) + " S " + std::to_string(suffix);
          const auto none = plan(TuningPolicy{});
          EXPECT_EQ(none.first, cudaSuccess) << what;
          EXPECT_EQ(plan(parsed), none) << what;
          EXPECT_EQ(plan(with_ceiling), none) << what;
        }
}

// DECODE_BENCH_SP_SHARE_DRAM=measured: the share rule divides by the run's measured ceiling where
// there is one (recorded as "measured" with its rate), else by the clock estimate as by default.
// N 256, P 32K, S 256 (FP16, MHA, d 128): suffix time over prefix time is below the rules' top
// thresholds at the clock's rate of any recent GPU, and a ceiling a thousandth of it raises it past
// them (on either prefix kernel: the wgmma rule's ratio tends to suffix bytes / prefix bytes = 2),
// so the share drops to 0.5. At N 64, P 1K, S 1024 the ratio is far above every threshold at
// either rate: the share stays.
TEST(PlannerTuningGpu, SharedPrefixShareTakesTheMeasuredCeilingWhenAskedAndGiven) {
  DB_REQUIRE_GPU();
  const SharedPrefixProblem problem{DecodeShape{32, 32, 128}, DType::fp16};
  const auto plan = [&](int n, std::int64_t prefix, std::int64_t suffix, const TuningPolicy& policy) {
    const SharedPrefixLayout layout = shared_prefix_layout(SharedPrefixSpec{n, prefix, 0, 1, suffix}, 16);
    SharedPrefixOptions options;
    options.overlap = true;
    options.tuning = policy;
    PagedKV<__half> kv{};
    kv.page_size = 16;
    SharedPrefixPlan out;
    EXPECT_EQ(plan_shared_prefix<__half>(kv, problem, layout, options, &out), cudaSuccess);
    return out;
  };
  TuningPolicy measured;
  measured.sp_share_dram = ShareDramRate::measured;
  const SharedPrefixPlan unmeasured = plan(256, 32768, 256, measured);  // no ceiling: the clock's
  EXPECT_EQ(unmeasured.share_dram, ShareDramSource::clock);
  EXPECT_GT(unmeasured.share_dram_bytes_per_s, 0.0);
  EXPECT_EQ(unmeasured.prefix_share, plan(256, 32768, 256, TuningPolicy{}).prefix_share);
  measured.measured_dram_read_bytes_per_s = unmeasured.share_dram_bytes_per_s / 1000;
  const SharedPrefixPlan low = plan(256, 32768, 256, measured);
  EXPECT_EQ(low.share_dram, ShareDramSource::measured);
  EXPECT_EQ(low.share_dram_bytes_per_s, measured.measured_dram_read_bytes_per_s);
  EXPECT_EQ(low.prefix_share, 0.5);
  EXPECT_GT(unmeasured.prefix_share, low.prefix_share);
  const SharedPrefixPlan far = plan(64, 1024, 1024, measured);
  EXPECT_EQ(far.share_dram, ShareDramSource::measured);
  EXPECT_EQ(far.prefix_share, plan(64, 1024, 1024, TuningPolicy{}).prefix_share);
  // A pinned share: the rule does not run, and the plan says so.
  TuningPolicy pinned = measured;
  pinned.sp_prefix_share = 0.75;
  const SharedPrefixPlan fixed = plan(256, 32768, 256, pinned);
  EXPECT_EQ(fixed.prefix_share, 0.75);
  EXPECT_EQ(fixed.share_dram, ShareDramSource::none);
  EXPECT_EQ(fixed.share_dram_bytes_per_s, 0.0);
}

}  // namespace
}  // namespace decode_bench