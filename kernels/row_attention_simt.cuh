#pragma once
// CUDA-core row attention: any storage type (FP32 storage runs here; FP16 / BF16 / FP8 can, as a
// fallback and a cross-check of the tensor-core path). FP8: the item's K scale (and Vec16's unit
// scale) is folded into its pre-scaled q rows, the V scale into the output, as in flash_decode.
// Same items, splits and epilogue as the mma path. A block (4 warps) holds 16 rows of one item,
// 4 per warp, and streams the item's split through shared memory in tiles of 32 tokens (two
// stages, cp.async), each tile read once for the 16 rows. Per tile a warp scores lane = token
// against its 4 rows (K chunks converted through Vec16<T>, the one storage conversion), runs the
// online softmax with warp shuffles and accumulates P V with each lane owning 16-byte column
// chunks of the output.
#include <cstdint>

#include "kernels/log2_domain.cuh"
#include "kernels/row_attention_common.cuh"
#include "kernels/vector_load.cuh"

namespace decode_bench::device {

template <class KV, int D>
struct RowSimtTraits {
  using T = typename KV::value_type;
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRowsPerWarp = 4;
  static constexpr int kRows = kWarps * kRowsPerWarp;  // rows per block
  static constexpr int kTile = 32;                     // one token per lane
  static constexpr int kStages = 2;
  static constexpr int kElems = Vec16<T>::kElems;
  static constexpr int kChunks = D / kElems;
  static constexpr int kChunksPerLane = (kChunks + 31) / 32;
  static constexpr int kTileBytes = kTile * D * static_cast<int>(sizeof(T));
  static constexpr std::size_t kSharedBytes = kStages * 2 * kTileBytes + kRows * D * sizeof(float);
};

template <class KV, int D>
__global__ void __launch_bounds__(128) row_attention_simt_kernel(const KV kv, const RowAttentionArgs args,
                                                                const FastDivmod page_div) {
  using Tr = RowSimtTraits<KV, D>;
  using T = typename Tr::T;
  constexpr int kTile = Tr::kTile, kChunks = Tr::kChunks, kElems = Tr::kElems, kR = Tr::kRowsPerWarp;
  extern __shared__ __align__(128) unsigned char smem[];
  allow_dependent_grid();  // a separate split merge may launch (kernels/dependent_launch.cuh)
  mark_block(args.timeline, BlockMark::start);

  const RowBlockWork work = locate_block_work<kTile>(args);  // the uniform grid or a work-list entry
  const ItemView& item = work.item;
  const int row0 = item.row_begin + work.row_block * Tr::kRows;
  const int nrows = min(Tr::kRows, item.row_end - row0);
  if (nrows <= 0) return;
  const std::int64_t t_begin = work.t_begin, t_end = work.t_end;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::uint32_t smem_base = shared_address(smem);
  float* q_s = reinterpret_cast<float*>(smem + Tr::kStages * 2 * Tr::kTileBytes);  // (kRows, D), log2-scaled
  const float q_mul = args.q_scale * kv_scale(kv.k_scale, item.kv_head) * Vec16<T>::kUnitScale;
  const float out_mul = kv_scale(kv.v_scale, item.kv_head) * Vec16<T>::kUnitScale;
  for (int i = threadIdx.x; i < Tr::kRows * D; i += Tr::kThreads) {
    const int r = i / D, d = i - r * D;
    float x = 0.f;
    if (r < nrows) {
      const int row = row0 + r;
      const std::int64_t qrow = args.row_q != nullptr ? args.row_q[row] : row;
      if (d < args.head_dim) x = args.q[qrow * args.head_dim + d] * q_mul;  // zero past the head dim
    }
    q_s[i] = x;
  }

  const RowLocator<KV> loc(kv, item.seq, item.kv_head, page_div);
  const int num_tiles = static_cast<int>((t_end - t_begin + kTile - 1) / kTile);
  const auto k_stage = [&](int s) { return smem_base + static_cast<std::uint32_t>(s) * 2u * Tr::kTileBytes; };
  if (num_tiles > 0)
    stage_kv_tile<KV, D, kTile, Tr::kThreads>(kv, loc, t_begin, t_end, k_stage(0), k_stage(0) + Tr::kTileBytes);
  cp_async_commit();

  float acc[kR][Tr::kChunksPerLane][kElems];
#pragma unroll
  for (int r = 0; r < kR; ++r)
#pragma unroll
    for (int j = 0; j < Tr::kChunksPerLane; ++j)
#pragma unroll
      for (int e = 0; e < kElems; ++e) acc[r][j][e] = 0.f;
  float m_run[kR], l_run[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) m_run[r] = -INFINITY, l_run[r] = 0.f;

  for (int tile = 0; tile < num_tiles; ++tile) {
    if (tile + 1 < num_tiles) {
      const int s = (tile + 1) % Tr::kStages;
      stage_kv_tile<KV, D, kTile, Tr::kThreads>(kv, loc, t_begin + static_cast<std::int64_t>(tile + 1) * kTile, t_end,
                                                k_stage(s), k_stage(s) + Tr::kTileBytes);
    }
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const std::uint32_t ks = k_stage(tile % Tr::kStages), vs = ks + Tr::kTileBytes;

    // Scores of token `lane` for the warp's rows.
    float s[kR];
#pragma unroll
    for (int r = 0; r < kR; ++r) s[r] = 0.f;
    for (int c = 0; c < kChunks; ++c) {
      float kf[kElems];
      const int slot = lane * kChunks + kv_chunk_slot<T, kChunks>(lane, c);
      Vec16<T>::to_float(load_shared_16B(ks + static_cast<std::uint32_t>(slot) * 16u), kf);
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        const float* qr = q_s + (warp * kR + r) * D + c * kElems;
#pragma unroll
        for (int e = 0; e < kElems; ++e) s[r] = fmaf(qr[e], kf[e], s[r]);
      }
    }
    const bool valid = t_begin + static_cast<std::int64_t>(tile) * kTile + lane < t_end;
    float p[kR];
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      float mx = valid ? s[r] : -INFINITY;
#pragma unroll
      for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m_run[r], mx);
      const float base = m_new == -INFINITY ? 0.f : m_new;
      const float alpha = exp2f(m_run[r] - base);
      m_run[r] = m_new;
      p[r] = valid ? exp2f(s[r] - base) : 0.f;
      float sum = p[r];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      l_run[r] = l_run[r] * alpha + sum;
#pragma unroll
      for (int j = 0; j < Tr::kChunksPerLane; ++j)
#pragma unroll
        for (int e = 0; e < kElems; ++e) acc[r][j][e] *= alpha;
    }
    // O += P V: lane owns chunks lane, lane + 32, ... of every row.
    for (int t = 0; t < kTile; ++t) {
      float pt[kR];
#pragma unroll
      for (int r = 0; r < kR; ++r) pt[r] = __shfl_sync(0xffffffffu, p[r], t);
#pragma unroll
      for (int j = 0; j < Tr::kChunksPerLane; ++j) {
        const int c = lane + 32 * j;
        if (c < kChunks) {
          float vf[kElems];
          const int slot = t * kChunks + kv_chunk_slot<T, kChunks>(t, c);
          Vec16<T>::to_float(load_shared_16B(vs + static_cast<std::uint32_t>(slot) * 16u), vf);
#pragma unroll
          for (int r = 0; r < kR; ++r)
#pragma unroll
            for (int e = 0; e < kElems; ++e) acc[r][j][e] = fmaf(pt[r], vf[e], acc[r][j][e]);
        }
      }
    }
    __syncthreads();  // the stage just read is refilled next iteration
  }
  cp_async_wait<0>();

#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int br = warp * kR + r;
    if (br >= nrows) continue;
    const int row = row0 + br;
    const float inv = l_run[r] > 0.f ? out_mul / l_run[r] : 0.f;
    float* o = state_o(args, work, row, args.head_dim);
#pragma unroll
    for (int j = 0; j < Tr::kChunksPerLane; ++j) {
      const int c = lane + 32 * j;
      if (c < kChunks && c * kElems < args.head_dim)
#pragma unroll
        for (int e = 0; e < kElems; ++e) o[c * kElems + e] = acc[r][j][e] * inv;
    }
    if (lane == 0)
      *state_lse(args, work, row) = l_run[r] > 0.f ? (m_run[r] + log2f(l_run[r])) * kLn2 : -INFINITY;
  }
  merge_if_last<D, Tr::kThreads>(args, work, row0, nrows, reinterpret_cast<float*>(smem),
                                 static_cast<int>(Tr::kSharedBytes / sizeof(float)));
  mark_block(args.timeline, BlockMark::end);
}

}  // namespace decode_bench::device
