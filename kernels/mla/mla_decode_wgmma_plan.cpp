// The warpgroup-MMA MLA decode kernel's plan and availability (kernels/mla/mla_decode_wgmma.hpp);
// host code, in every build (the kernel itself is in kernels/instantiate/mla_decode_wgmma.cu).
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/device_attribute_cache.hpp"  // dependent_launch_available, cached_device_attribute
#include "kernels/mla/mla_decode_wgmma.hpp"
#include "kernels/row_attention.hpp"  // kClusterMergeMaxSplits

namespace decode_bench {

static_assert(mla_wgmma_shared_bytes(64) <= 227 * 1024 && mla_wgmma_shared_bytes(32) <= 227 * 1024,
              "both tilings fit an H100 block's shared memory");

std::string mla_decode_wgmma_unsupported_reason(const MlaShape& shape, DType dtype, int major, int minor) {
  if (!mla_decode_wgmma_compiled()) return "the build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES without 90)";
  if (major != 9 || minor != 0)
    return "warpgroup MMA needs sm_90a code, which runs on compute capability 9.0 only (device " +
           std::to_string(major) + "." + std::to_string(minor) + ")";
  if (const std::string r = mla_decode_unsupported_reason(shape, dtype); !r.empty()) return r;
  if (dtype != DType::fp16 && dtype != DType::bf16)
    return "the warpgroup-MMA mla kernel reads fp16 or bf16 latent caches, not " + std::string(dtype_name(dtype));
  return {};
}

namespace {

// mla_decode_wgmma_unsupported_reason on `device`; a reason too where its compute capability cannot be read.
std::string wgmma_reason_on(const MlaShape& shape, DType dtype, int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return "the device's compute capability could not be read";
  return mla_decode_wgmma_unsupported_reason(shape, dtype, major, minor);
}

}  // namespace

bool mla_decode_wgmma_available(const MlaShape& shape, DType dtype, int device) {
  return wgmma_reason_on(shape, dtype, device).empty();
}

MlaDecodePlan plan_mla_decode_wgmma(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len,
                                    int sm_count, int splits, int tile_tokens, bool fused_merge) {
  (void)dtype;  // FP16 and BF16 take the same shared memory
  const int tile = tile_tokens == 0 ? mla_wgmma_auto_tile(shape.rows()) : tile_tokens;
  if (!mla_wgmma_tile_compiled(tile))
    throw std::invalid_argument("the warpgroup-MMA mla kernel has tiles of 64 or 32 tokens, not " +
                                std::to_string(tile_tokens));
  MlaDecodePlan p;
  p.kernel = MlaKernel::wgmma;
  p.warpgroups = kMlaWgmmaWarpgroups;
  p.batch = batch;
  p.rows = shape.rows();
  p.rows_per_block = kMlaWgmmaRows;
  p.row_blocks = (p.rows + kMlaWgmmaRows - 1) / kMlaWgmmaRows;
  p.tile_tokens = tile;
  p.stages = mla_wgmma_stages(tile);
  p.threads = 128 * kMlaWgmmaWarpgroups;
  p.shared_bytes = mla_wgmma_shared_bytes(tile);
  const std::int64_t tiles = std::max<std::int64_t>(1, (max_len + tile - 1) / tile);
  if (splits <= 0) {
    // One block per SM (shared memory). The time of the longest sequence's blocks goes as the
    // waves of blocks times the tokens of one split, counted in units of kMlaWgmmaSplitUnit for
    // either tile (a count in the tile's own units would let the finer tile settle for a split
    // count its coarser twin does not, so the two tilings' runs would differ in more than the
    // tile); among the counts with at least kMlaWgmmaMinSplitTokens tokens a split (at most
    // mla_wgmma_split_cap: 64, or 128 where their merge runs over quarters of rows),
    // the fewest whose cost is within a tenth of the least (each split adds its partials and the
    // merge's traffic).
    const std::int64_t units = std::max<std::int64_t>(1, (max_len + kMlaWgmmaSplitUnit - 1) / kMlaWgmmaSplitUnit);
    const std::int64_t blocks = std::max<std::int64_t>(1, static_cast<std::int64_t>(batch) * p.row_blocks);
    const std::int64_t sms = std::max(1, sm_count);
    const std::int64_t most =
        std::clamp<std::int64_t>(units * kMlaWgmmaSplitUnit / kMlaWgmmaMinSplitTokens, 1,
                                 mla_wgmma_split_cap(batch, p.rows, static_cast<int>(sms)));
    const auto cost = [&](std::int64_t s) { return ((blocks * s + sms - 1) / sms) * ((units + s - 1) / s); };
    std::int64_t least = cost(1);
    for (std::int64_t s = 2; s <= most; ++s) least = std::min(least, cost(s));
    std::int64_t pick = 1;
    while (10 * cost(pick) > 11 * least) ++pick;
    splits = static_cast<int>(pick);
  }
  set_mla_splits(p, splits, tiles, sm_count);
  p.fused_merge = fused_merge && p.num_splits > 1 && p.num_splits <= kMlaMergeFewMax;
  p.workspace_bytes += mla_split_counter_bytes(p);
  return p;
}

bool mla_prefers_wgmma(const MlaShape& shape, int batch, std::int64_t max_len) {
  if (shape.rows() > kMlaWgmmaFewRows) return true;
  return static_cast<std::int64_t>(batch) * max_len >= kMlaWgmmaFewRowsMinTokens;
}

MlaDecodePlan plan_mla_decode_for_device(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len,
                                         int device, int splits, int wgmma_tile, bool dependent_merge,
                                         std::optional<MlaKernel> pinned, bool fused_merge, bool cluster_merge,
                                         bool spread_merge) {
  int sm_count = 0;
  if (cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) sm_count = 1;
  MlaDecodePlan p;
  if (pinned == MlaKernel::wgmma) {
    if (const std::string why = wgmma_reason_on(shape, dtype, device); !why.empty())
      throw std::invalid_argument("the pinned mla kernel mla_decode_wgmma does not compute this point: " + why);
    p = plan_mla_decode_wgmma(shape, dtype, batch, max_len, sm_count, splits, wgmma_tile, fused_merge);
  } else if (pinned) {
    p = plan_mla_decode(shape, dtype, batch, max_len, sm_count, splits, *pinned);
  } else {
    // This kernel where it runs and is preferred (mla_prefers_wgmma); otherwise plan_mla_decode
    // picks between the two mma.sync kernels.
    p = mla_prefers_wgmma(shape, batch, max_len) && mla_decode_wgmma_available(shape, dtype, device)
            ? plan_mla_decode_wgmma(shape, dtype, batch, max_len, sm_count, splits, wgmma_tile, fused_merge)
            : plan_mla_decode(shape, dtype, batch, max_len, sm_count, splits);
  }
  // The merge in the kernel, where a warpgroup-MMA plan of 2 or more splits is not fused already.
  // Residency is queried on the current device, so only where that is `device`. First the splits of
  // each row block in a cluster, where every row block's cluster is resident at once (a cluster that
  // waited for a GPC to free up would take a wave of its own); else spread over each row block's
  // split blocks, where the grid may be launched cooperatively: every block resident at once, so a
  // block may wait for the others.
  int current = -1;
  if (p.kernel == MlaKernel::wgmma && !p.fused_merge && p.num_splits >= 2 && cudaGetDevice(&current) == cudaSuccess &&
      current == device) {
    const std::int64_t row_blocks = static_cast<std::int64_t>(p.batch) * p.row_blocks;
    int clusters = 0, cooperative = 0, blocks = 0;
    if (cluster_merge && p.num_splits <= kClusterMergeMaxSplits &&
        mla_decode_wgmma_resident_clusters(p.tile_tokens, p.num_splits, &clusters) == cudaSuccess &&
        clusters >= row_blocks)
      set_mla_cluster_merge(p);
    else if (spread_merge && p.num_splits <= kMlaMergeFewMax &&
             cached_device_attribute(&cooperative, cudaDevAttrCooperativeLaunch, device) == cudaSuccess &&
             cooperative != 0 && mla_decode_wgmma_resident_blocks(p.tile_tokens, &blocks) == cudaSuccess &&
             blocks >= row_blocks * p.num_splits)
      set_mla_spread_merge(p);
  }
  // Only a merge kernel is launched as a dependent: not a fused or a cluster plan's.
  p.dependent_merge = dependent_merge && p.num_splits > 1 && !p.fused_merge && !p.cluster_merge &&
                      dependent_launch_available(device);
  return p;
}

void set_mla_cluster_merge(MlaDecodePlan& p) {
  if (p.kernel != MlaKernel::wgmma)
    throw std::invalid_argument("the cluster merge is the warpgroup-MMA mla kernel's, not " +
                                std::string(mla_kernel_name(p.kernel)) + "'s");
  if (p.num_splits < 2 || p.num_splits > kClusterMergeMaxSplits)
    throw std::invalid_argument("the cluster merge takes 2 to " + std::to_string(kClusterMergeMaxSplits) +
                                " splits, not " + std::to_string(p.num_splits));
  if (p.fused_merge) throw std::invalid_argument("a fused-merge plan has no cluster merge");
  p.cluster_merge = true;
  p.workspace_bytes = 0;
  p.dependent_merge = false;
}

void set_mla_spread_merge(MlaDecodePlan& p) {
  if (p.kernel != MlaKernel::wgmma)
    throw std::invalid_argument("the spread merge is the warpgroup-MMA mla kernel's, not " +
                                std::string(mla_kernel_name(p.kernel)) + "'s");
  if (p.num_splits < 2 || p.num_splits > kMlaMergeFewMax)
    throw std::invalid_argument("the spread merge takes 2 to " + std::to_string(kMlaMergeFewMax) + " splits, not " +
                                std::to_string(p.num_splits));
  if (p.fused_merge) throw std::invalid_argument("a fused-merge plan has no spread merge");
  if (p.cluster_merge) throw std::invalid_argument("a cluster-merge plan has no spread merge");
  p.fused_merge = true;
  p.spread_merge = true;
  p.workspace_bytes += mla_split_counter_bytes(p);  // a plan not fused had none
  p.dependent_merge = false;
}

}  // namespace decode_bench
