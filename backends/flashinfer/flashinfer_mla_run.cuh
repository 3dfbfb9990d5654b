#pragma once
// The body of mla_run_<dtype> (flashinfer_mla.hpp), included by one translation unit per dtype:
// FlashInfer's BatchMLAPagedAttention at kv_lora_rank 512 and rope_dim 64, causal mask, q, latents
// and o in one 16-bit type. FlashInfer picks, at run time, its KV tile and stage count from the
// device's shared memory per SM (three configurations, all compiled; an H100's 228 KB takes the
// largest: 64-token KV tiles, two stages, the QK product split over both warpgroups).
#include <flashinfer/allocator.h>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/mla.cuh>
#include <flashinfer/attention/mla_params.cuh>
#include <flashinfer/fastdiv.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"
#include "backends/flashinfer/flashinfer_mla.hpp"

namespace decode_bench::flashinfer_launch::mla_detail {

constexpr std::uint32_t kCkvDim = 512;
constexpr std::uint32_t kKpeDim = 64;

template <class T>
cudaError_t run(const MlaArgs& a, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                cudaStream_t stream, std::string* error) {
  if (auto reason = mla_unsupported_reason(a)) return refuse(*reason, error);
  if (a.q == nullptr || a.latent == nullptr || a.page_indices == nullptr || a.o == nullptr)
    return refuse("q, latent, page_indices and o must be set", error);
  if (plan.num_blks_x < 1 || plan.num_blks_y < 1 || float_workspace == nullptr || int_workspace == nullptr)
    return refuse("run needs a plan and its workspaces", error);
  using Params = flashinfer::MLAParams<T, T, T, std::int32_t>;
  using flashinfer::GetPtrFromBaseOffset;
  const auto ints = [&](std::int64_t offset) { return GetPtrFromBaseOffset<std::int32_t>(int_workspace, offset); };
  const std::uint32_t key_dim = kCkvDim + kKpeDim;
  Params p;
  T* q = static_cast<T*>(const_cast<void*>(a.q));
  T* latent = static_cast<T*>(const_cast<void*>(a.latent));
  p.q_nope = q;
  p.q_pe = q + kCkvDim;
  p.ckv = latent;
  p.kpe = latent + a.kpe_offset;
  p.partial_o = GetPtrFromBaseOffset<T>(float_workspace, plan.partial_o_offset);
  p.partial_lse = GetPtrFromBaseOffset<float>(float_workspace, plan.partial_lse_offset);
  p.final_o = static_cast<T*>(a.o);
  p.final_lse = a.lse;
  p.q_indptr = ints(plan.q_indptr_offset);
  p.kv_indptr = ints(plan.kv_indptr_offset);
  p.partial_indptr = ints(plan.partial_indptr_offset);
  p.merge_packed_offset_start = ints(plan.merge_packed_offset_start_offset);
  p.merge_packed_offset_end = ints(plan.merge_packed_offset_end_offset);
  p.merge_partial_packed_offset_start = ints(plan.merge_partial_packed_offset_start_offset);
  p.merge_partial_packed_offset_end = ints(plan.merge_partial_packed_offset_end_offset);
  p.merge_partial_stride = ints(plan.merge_partial_stride_offset);
  p.kv_indices = const_cast<std::int32_t*>(a.page_indices);
  p.q_len = ints(plan.q_len_offset);
  p.kv_len = ints(plan.kv_len_offset);
  p.q_start = ints(plan.q_start_offset);
  p.kv_start = ints(plan.kv_start_offset);
  p.kv_end = ints(plan.kv_end_offset);
  p.work_indptr = ints(plan.work_indptr_offset);
  p.block_size = flashinfer::uint_fastdiv(static_cast<std::uint32_t>(a.page_size));
  p.num_heads = flashinfer::uint_fastdiv(static_cast<std::uint32_t>(a.heads));
  // q (rows, heads, 576): q_nope and q_pe are its two column ranges.
  p.q_nope_stride_n = p.q_pe_stride_n = static_cast<std::uint32_t>(a.heads) * key_dim;
  p.q_nope_stride_h = p.q_pe_stride_h = key_dim;
  p.ckv_stride_page = p.kpe_stride_page = static_cast<std::uint32_t>(a.page_stride);
  p.ckv_stride_n = p.kpe_stride_n = static_cast<std::uint32_t>(a.row_stride);
  p.o_stride_n = static_cast<std::uint32_t>(a.heads) * kCkvDim;
  p.o_stride_h = kCkvDim;
  p.sm_scale = a.sm_scale;
  p.ckv_scale = p.kpe_scale = 1.f;  // 16-bit latents: no dequantization
  p.ckv_scale_arr = nullptr;
  p.return_lse_base_on_e = false;   // base 2, as FlashInfer's wrapper returns it by default
  return call_flashinfer(
      [&] {
        return flashinfer::mla::BatchMLAPagedAttention<flashinfer::MaskMode::kCausal, kCkvDim, kKpeDim>(
            p, static_cast<std::uint32_t>(plan.num_blks_x), static_cast<std::uint32_t>(plan.num_blks_y), stream);
      },
      error);
}

}  // namespace decode_bench::flashinfer_launch::mla_detail
