#include "kernels/shared_prefix.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "harness/cuda_check.hpp"
#include "kernels/attention_state.hpp"
#include "kernels/device_attribute_cache.hpp"
#include "kernels/block_timeline.cuh"
#include "kernels/tuning_policy.hpp"
#include "kernels/shared_prefix_metadata.hpp"
#include "kernels/shared_prefix_share.hpp"
#include "kernels/shared_prefix_variant.hpp"

namespace decode_bench {
namespace {

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Grid: ceil(num_states / kMergeWarps); block: kMergeWarps warps, one a state i = (sequence,
// query head), its lanes over D in float4 columns. The state merges its decode state with the
// level states of its sequence, depth by depth (the operator is associative). All of a state's
// loads are issued together: its level rows and LSEs by lanes 0..max_depth - 1 (one round trip
// after the rows), then every level's row of O beside its own. The kernel before it (commit
// 34ba5b4: one block of 64 threads a state, scalar columns, each level's O read after the last)
// was slower, measured with ncu at 2048 and 8192 states (commit fe97a8d; docs/history/kernel-notes.md,
// "The level-state merge, a warp per state").
constexpr int kMergeWarps = 8;
constexpr int kMaxMergeDepth = 4;

__global__ void __launch_bounds__(kMergeWarps * 32)
    merge_level_states_kernel(float* o, float* lse, const float* level_o, const float* level_lse,
                              const std::int32_t* merge_rows, int max_depth, int num_states, int head_dim,
                              bool float4_columns, BlockEvent* timeline) {
  device::mark_block(timeline, device::BlockMark::start);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int i = static_cast<int>(blockIdx.x) * kMergeWarps + static_cast<int>(threadIdx.x) / 32;
  if (i >= num_states) return;  // the whole warp
  int my_row = -1;
  float my_lse = 0.f;
  if (lane < max_depth) {
    my_row = merge_rows[static_cast<std::int64_t>(lane) * num_states + i];
    if (my_row >= 0) my_lse = level_lse[my_row];
  }
  float acc_lse = lse[i];
  // Weights first (every lane the same, cheap), then each lane its columns of o.
  float wa[kMaxMergeDepth] = {}, wb[kMaxMergeDepth] = {};
  int rows[kMaxMergeDepth];
#pragma unroll
  for (int l = 0; l < kMaxMergeDepth; ++l) {
    rows[l] = __shfl_sync(0xffffffffu, my_row, l);
    const float level = __shfl_sync(0xffffffffu, my_lse, l);
    if (l >= max_depth || rows[l] < 0) {
      rows[l] = -1;
      continue;
    }
    const MergeWeights<float> w = merge_weights(acc_lse, level);
    wa[l] = w.weight_a;
    wb[l] = w.weight_b;
    acc_lse = w.lse;
  }
  float* oi = o + static_cast<std::int64_t>(i) * head_dim;
  if (float4_columns) {
    const int cols = head_dim / 4;
    for (int c = lane; c < cols; c += 32) {
      float4 x = reinterpret_cast<const float4*>(oi)[c];
      float4 y[kMaxMergeDepth];
#pragma unroll
      for (int l = 0; l < kMaxMergeDepth; ++l)
        y[l] = rows[l] >= 0 ? reinterpret_cast<const float4*>(level_o + static_cast<std::int64_t>(rows[l]) * head_dim)[c]
                            : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int l = 0; l < kMaxMergeDepth; ++l)
        if (rows[l] >= 0) {
          x.x = wa[l] * x.x + wb[l] * y[l].x;
          x.y = wa[l] * x.y + wb[l] * y[l].y;
          x.z = wa[l] * x.z + wb[l] * y[l].z;
          x.w = wa[l] * x.w + wb[l] * y[l].w;
        }
      reinterpret_cast<float4*>(oi)[c] = x;
    }
  } else {
    for (int d = lane; d < head_dim; d += 32) {
      float x = oi[d];
#pragma unroll
      for (int l = 0; l < kMaxMergeDepth; ++l)
        if (rows[l] >= 0) x = wa[l] * x + wb[l] * level_o[static_cast<std::int64_t>(rows[l]) * head_dim + d];
      oi[d] = x;
    }
  }
  __syncwarp();  // every lane has read lse[i] above before it is overwritten
  if (lane == 0) lse[i] = acc_lse;
  device::mark_block(timeline, device::BlockMark::end);  // thread 0: when warp 0's state is done
}

struct Pointers {
  const RowAttentionItem* items;
  const std::int32_t* row_q;
  const std::int32_t* merge_rows;
  const std::int32_t* suffix_indptr;
  const std::int32_t* suffix_lens;
  float* level_o;
  float* level_lse;
  void* prefix_ws;
  void* suffix_ws;
};

Pointers pointers_in(const SharedPrefixPlan& plan, void* workspace) {
  auto* base = static_cast<std::byte*>(workspace);
  return {reinterpret_cast<const RowAttentionItem*>(base + plan.items_offset),
          reinterpret_cast<const std::int32_t*>(base + plan.row_q_offset),
          reinterpret_cast<const std::int32_t*>(base + plan.merge_rows_offset),
          reinterpret_cast<const std::int32_t*>(base + plan.suffix_indptr_offset),
          reinterpret_cast<const std::int32_t*>(base + plan.suffix_lens_offset),
          reinterpret_cast<float*>(base + plan.level_o_offset),
          reinterpret_cast<float*>(base + plan.level_lse_offset),
          base + plan.prefix_ws_offset,
          base + plan.suffix_ws_offset};
}

// Row attention over the level items: a window lives in the items' token ranges
// (shared_prefix_metadata), the sinks in the suffix phase alone; a soft-cap takes the row kernel's
// variant twin, with the cap alone, reading q through the same row map.
RowAttentionProblem prefix_problem(const SharedPrefixProblem& p, const SharedPrefixPlan& plan, std::int64_t max_tokens,
                                   int max_rows, const Pointers* ptr) {
  RowAttentionProblem r;
  r.variant.logits_soft_cap = p.variant.logits_soft_cap;
  r.shape = p.shape;
  r.kv_dtype = p.kv_dtype;
  r.num_items = plan.num_items;
  r.explicit_items = true;
  r.num_rows = plan.num_rows;
  r.max_item_tokens = max_tokens;
  r.max_item_rows = max_rows;
  r.q = p.q;
  if (ptr) {
    r.items = ptr->items;
    r.row_q = ptr->row_q;
    r.o = ptr->level_o;
    r.lse = ptr->level_lse;
  }
  return r;
}

// The suffix phase takes the point's variant whole: the window in its local positions is the same
// window (S_b - w is L_b - w), the sinks and the cap as they are (kernels/shared_prefix.hpp).
DecodeProblem suffix_problem(const SharedPrefixProblem& p, const SharedPrefixPlan& plan, int num_seqs,
                             const Pointers* ptr) {
  DecodeProblem d{p.shape, p.kv_dtype, num_seqs, plan.max_suffix_len, ptr ? ptr->suffix_lens : nullptr, p.q, p.o, p.lse};
  d.variant = p.variant;
  return d;
}

}  // namespace

std::optional<std::string> shared_prefix_unsupported_reason(const SharedPrefixProblem& problem,
                                                            const SharedPrefixLayout& layout) {
  if (layout.num_seqs() < 1) return std::string("shared prefix: the batch has no sequences");
  if (static_cast<int>(layout.suffix_begin.size()) != layout.num_seqs())
    return std::string("shared prefix: layout.suffix_begin must have one entry per sequence");
  if (layout.max_depth() > 4) return "shared prefix: " + std::to_string(layout.max_depth()) + " levels (at most 4)";
  for (int s = 0; s < layout.num_seqs(); ++s)
    if (layout.suffix_begin[s] % layout.page_size != 0 || layout.suffix_begin[s] >= layout.lengths[s])
      return "shared prefix: sequence " + std::to_string(s) + " has no own page-aligned suffix (suffix_begin " +
             std::to_string(layout.suffix_begin[s]) + ", length " + std::to_string(layout.lengths[s]) + ")";
  DecodeProblem decode{problem.shape, problem.kv_dtype, layout.num_seqs(), 0, nullptr, nullptr, nullptr, nullptr};
  if (auto why = decode_unsupported_reason(decode)) return "suffix phase: " + *why;
  if (auto why = shared_prefix_variant_unsupported_reason(problem.shape, problem.kv_dtype, problem.variant,
                                                          !layout.levels.empty()))
    return "shared prefix: " + *why;
  if (!layout.levels.empty()) {
    RowAttentionProblem rows;
    rows.shape = problem.shape;
    rows.kv_dtype = problem.kv_dtype;
    rows.variant.logits_soft_cap = problem.variant.logits_soft_cap;
    // The problem plan_shared_prefix will hand the planner, less its device pointers.
    rows.num_items = static_cast<int>(layout.levels.size()) * problem.shape.heads_kv;
    rows.explicit_items = true;
    for (const SharedLevel& level : layout.levels) {
      rows.num_rows += level.num_seqs * problem.shape.heads_q;
      rows.max_item_tokens = std::max(rows.max_item_tokens, level.token_end - level.token_begin);
      rows.max_item_rows = std::max(rows.max_item_rows, level.num_seqs * problem.shape.group());
    }
    if (auto why = row_attention_unsupported_reason(rows)) return "prefix phase: " + *why;
  }
  return std::nullopt;
}

template <class T>
cudaError_t plan_shared_prefix(const PagedKV<T>& full, const SharedPrefixProblem& problem,
                               const SharedPrefixLayout& layout, const SharedPrefixOptions& options,
                               SharedPrefixPlan* plan) {
  if (!plan || shared_prefix_unsupported_reason(problem, layout) || full.page_size != layout.page_size)
    return cudaErrorInvalidValue;
  // The metadata image's buffer is kept across plans (a serving loop replans every step).
  SharedPrefixMetadata m;
  m.image = std::move(plan->metadata);
  *plan = SharedPrefixPlan{};
  shared_prefix_metadata(problem.shape, layout, &m, problem.variant.window);
  const int n = m.num_seqs;
  plan->has_prefix = m.num_items > 0;  // a window may leave every level outside every sequence's window
  plan->max_depth = m.max_depth;
  plan->prefix_tokens = m.prefix_tokens;
  plan->prefix_row_tokens = m.prefix_row_tokens;
  plan->max_suffix_len = m.max_suffix_len;
  plan->num_seqs = n;
  plan->max_item_tokens = m.max_item_tokens;
  plan->max_item_rows = m.max_item_rows;
  plan->num_items = m.num_items;
  plan->num_rows = m.num_rows;
  const std::int64_t max_tokens = m.max_item_tokens;
  const int max_rows = m.max_item_rows;

  // Sub-plans: sized from counts and host-known bounds; the device pointers live in the workspace.
  if (plan->has_prefix) {
    const RowAttentionProblem rp = prefix_problem(problem, *plan, max_tokens, max_rows, nullptr);
    RowAttentionOptions prefix_options = options.prefix;
    prefix_options.tuning = options.tuning;
    // Planned once for the whole GPU; overlapped, replanned for the share its rule gives (the rule
    // depends on the kernel the first plan took: kernels/shared_prefix_share.hpp).
    DB_RETURN_IF_ERROR(plan_row_attention<PagedKV<T>>(rp, prefix_options, &plan->prefix));
    if (options.overlap && prefix_options.max_blocks <= 0) {
      int dev = 0, sms = 0;
      double clock_dram = 0;
      DB_RETURN_IF_ERROR(cudaGetDevice(&dev));
      // Read once per device (kernels/device_attribute_cache.hpp): this runs every serving step.
      DB_RETURN_IF_ERROR(cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      DB_RETURN_IF_ERROR(clock_dram_bytes_per_s(dev, &clock_dram));
      double share = options.tuning.sp_prefix_share;  // 0: not pinned
      if (share <= 0) {
        const std::int64_t suffix_tokens = m.suffix_read_tokens;  // within the windows
        const double head_bytes = static_cast<double>(problem.shape.head_dim) * dtype_bytes(problem.kv_dtype);
        const double suffix_bytes = 2.0 * static_cast<double>(suffix_tokens) * problem.shape.heads_kv * head_bytes;
        const double prefix_flops = 4.0 * static_cast<double>(plan->prefix_row_tokens) * problem.shape.heads_q *
                                    problem.shape.head_dim;
        // The clock estimate (double data rate) unless the policy asks for the run's measured ceiling
        // and the run measured one: on an H100 the two differ enough to move a point across a
        // threshold of the rule, so the estimate it was fitted with stays the default.
        const bool measured = options.tuning.sp_share_dram == ShareDramRate::measured &&
                              options.tuning.measured_dram_read_bytes_per_s > 0;
        const double dram = measured ? options.tuning.measured_dram_read_bytes_per_s : clock_dram;
        plan->share_dram = measured ? ShareDramSource::measured : ShareDramSource::clock;
        plan->share_dram_bytes_per_s = dram;
        const double prefix_bytes =
            2.0 * static_cast<double>(plan->prefix_tokens) * problem.shape.heads_kv * head_bytes;
        share = plan->prefix.wgmma
                    ? shared_prefix_auto_share_wgmma(suffix_bytes, prefix_bytes, prefix_flops, dram, max_rows)
                    : shared_prefix_auto_share(suffix_bytes, prefix_flops, dram, max_rows);
      }
      plan->prefix_share = share;
      if (share < 1.0) {
        prefix_options.max_blocks = std::max(1, static_cast<int>(share * sms + 0.5));
        DB_RETURN_IF_ERROR(plan_row_attention<PagedKV<T>>(rp, prefix_options, &plan->prefix));
      }
    }
  }
  const DecodeProblem dp = suffix_problem(problem, *plan, n, nullptr);
  DecodeOptions suffix_options = options.suffix;
  suffix_options.tuning = options.tuning;
  // A suffix phase with a variant keeps the paths it measured on (docs/kernels/shared_prefix.md,
  // "Attention variants"): the short path's variant kernels are not taken here.
  if (!problem.variant.plain()) suffix_options.tuning.fd_short_seq = false;
  DB_RETURN_IF_ERROR(plan_decode<PagedKV<T>>(DecodeKernel::flash_decode, dp, suffix_options, &plan->suffix));

  std::size_t at = m.image.size();  // the metadata region, then the workspace's other regions
  const auto take = [&at](std::size_t bytes) {
    const std::size_t here = at;
    at = align_up(at + bytes);
    return here;
  };
  plan->items_offset = m.items_offset;
  plan->row_q_offset = m.row_q_offset;
  plan->merge_rows_offset = m.merge_rows_offset;
  plan->suffix_indptr_offset = m.suffix_indptr_offset;
  plan->suffix_lens_offset = m.suffix_lens_offset;
  plan->level_o_offset = take(static_cast<std::size_t>(plan->num_rows) * problem.shape.head_dim * 4);
  plan->level_lse_offset = take(static_cast<std::size_t>(plan->num_rows) * 4);
  plan->prefix_ws_offset = take(plan->prefix.workspace_bytes);
  plan->suffix_ws_offset = take(plan->suffix.workspace_bytes);
  plan->workspace_bytes = at;
  plan->metadata = std::move(m.image);
  return cudaSuccess;
}

cudaError_t init_shared_prefix_workspace(const SharedPrefixPlan& plan, void* workspace, cudaStream_t stream) {
  if (!workspace || plan.workspace_bytes < plan.metadata.size()) return cudaErrorInvalidValue;
  auto* base = static_cast<std::byte*>(workspace);
  DB_RETURN_IF_ERROR(cudaMemcpyAsync(base, plan.metadata.data(), plan.metadata.size(), cudaMemcpyHostToDevice, stream));
  if (plan.has_prefix)
    DB_RETURN_IF_ERROR(init_row_attention_workspace(plan.prefix, base + plan.prefix_ws_offset, stream));
  return init_decode_workspace(plan.suffix, base + plan.suffix_ws_offset, stream);
}

cudaError_t launch_merge_level_states(float* o, float* lse, const float* level_o, const float* level_lse,
                                      const std::int32_t* merge_rows, int max_depth, int num_states, int head_dim,
                                      cudaStream_t stream) {
  if (max_depth < 0 || max_depth > kMaxMergeDepth || num_states < 0) return cudaErrorInvalidValue;
  if (max_depth == 0 || num_states == 0) return cudaSuccess;
  const int blocks = (num_states + kMergeWarps - 1) / kMergeWarps;
  // float4 columns where every row starts on 16 bytes (any caller's o, not only the workspace's).
  const bool float4_columns = head_dim % 4 == 0 && reinterpret_cast<std::uintptr_t>(o) % 16 == 0 &&
                              reinterpret_cast<std::uintptr_t>(level_o) % 16 == 0;
  BlockEvent* const timeline = take_block_timeline(blocks, "sp_merge");
  merge_level_states_kernel<<<blocks, kMergeWarps * 32, 0, stream>>>(o, lse, level_o, level_lse, merge_rows, max_depth,
                                                                     num_states, head_dim, float4_columns, timeline);
  return cudaGetLastError();
}

template <class T>
cudaError_t run_shared_prefix(const PagedKV<T>& full, const SharedPrefixProblem& problem, const SharedPrefixPlan& plan,
                              void* workspace, cudaStream_t stream, const SharedPrefixStreams* overlap) {
  if (!workspace || plan.num_seqs < 1) return cudaErrorInvalidValue;
  const Pointers ptr = pointers_in(plan, workspace);
  PagedKV<T> suffix_kv = full;
  suffix_kv.indptr = ptr.suffix_indptr;
  const DecodeProblem dp = suffix_problem(problem, plan, plan.num_seqs, &ptr);
  if (!plan.has_prefix) return run_decode<PagedKV<T>>(suffix_kv, dp, plan.suffix, ptr.suffix_ws, stream);

  const RowAttentionProblem rp = prefix_problem(problem, plan, plan.max_item_tokens, plan.max_item_rows, &ptr);
  const bool two_streams = overlap && overlap->aux && overlap->fork && overlap->join;
  const cudaStream_t suffix_stream = two_streams ? overlap->aux : stream;
  // The prefix phase goes first on the launch stream, the suffix phase on the second stream after
  // the fork: so the prefix's long compute-bound blocks are dispatched first and the suffix's
  // short memory-bound ones fill what they leave. With the prefix on the second stream instead,
  // behind its event wait, the suffix reached the GPU first and took every SM; the prefix's
  // blocks started only as the suffix drained (per-block timelines, H100, commit 8314ce4, N 64
  // P 1K; docs/history/kernel-notes.md, "Where a launch's time goes, block by block"), so the
  // phases ran one after the other in the reverse order.
  // A capped prefix phase runs the row kernel's variant twin, which reads q through the row map as
  // the plain kernel does: no kernel runs between the fork and the prefix phase's launch. A q gather
  // there once let the suffix phase take the SMs first, so the capped phases ran one after the
  // other (results/reference/h100/sp-cap-fcd3afd/, sp-gather-72d06cd/).
  if (two_streams) {
    DB_RETURN_IF_ERROR(cudaEventRecord(overlap->fork, stream));
    DB_RETURN_IF_ERROR(cudaStreamWaitEvent(overlap->aux, overlap->fork, 0));
  }
  DB_RETURN_IF_ERROR(run_row_attention<PagedKV<T>>(full, rp, plan.prefix, ptr.prefix_ws, stream));
  DB_RETURN_IF_ERROR(run_decode<PagedKV<T>>(suffix_kv, dp, plan.suffix, ptr.suffix_ws, suffix_stream));
  if (two_streams) {
    DB_RETURN_IF_ERROR(cudaEventRecord(overlap->join, overlap->aux));
    DB_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, overlap->join, 0));
  }
  return launch_merge_level_states(problem.o, problem.lse, ptr.level_o, ptr.level_lse, ptr.merge_rows, plan.max_depth,
                                   plan.num_seqs * problem.shape.heads_q, problem.shape.head_dim, stream);
}

#define DECODE_BENCH_INSTANTIATE_SHARED_PREFIX(T)                                                              \
  template cudaError_t plan_shared_prefix<T>(const PagedKV<T>&, const SharedPrefixProblem&,                   \
                                             const SharedPrefixLayout&, const SharedPrefixOptions&,            \
                                             SharedPrefixPlan*);                                               \
  template cudaError_t run_shared_prefix<T>(const PagedKV<T>&, const SharedPrefixProblem&, const SharedPrefixPlan&, \
                                            void*, cudaStream_t, const SharedPrefixStreams*);
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX(float)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX(__half)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX(__nv_bfloat16)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX(__nv_fp8_e4m3)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX(__nv_fp8_e5m2)
#undef DECODE_BENCH_INSTANTIATE_SHARED_PREFIX

}  // namespace decode_bench
