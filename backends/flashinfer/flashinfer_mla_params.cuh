#pragma once
// FlashInfer's MLAParams for one launch of either of its MLA kernels (the FA2 kernel of
// attention/mla.cuh, flashinfer_mla_run.cuh; the Hopper kernel of attention/mla_hopper.cuh,
// flashinfer_mla_fa3_run.cuh): both take the same parameters and the same MLAPlan work list, so the
// two differ only in the kernel launched (run_mla_kernel). kv_lora_rank 512 and rope_dim 64, q,
// latents and o in one 16-bit type T.
#include <optional>
#include <string>

#include <flashinfer/allocator.h>
#include <flashinfer/attention/mla_params.cuh>
#include <flashinfer/fastdiv.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"  // refuse, call_flashinfer
#include "backends/flashinfer/flashinfer_mla.hpp"

namespace decode_bench::flashinfer_launch::mla_detail {

constexpr std::uint32_t kCkvDim = 512;
constexpr std::uint32_t kKpeDim = 64;

// Why a launch of these arguments and plan cannot go ahead, or nullopt.
inline std::optional<std::string> run_refusal(const MlaArgs& a, const MlaPlan& plan, const void* float_workspace,
                                              const void* int_workspace) {
  if (auto reason = mla_unsupported_reason(a)) return reason;
  if (a.q == nullptr || a.latent == nullptr || a.page_indices == nullptr || a.o == nullptr)
    return "q, latent, page_indices and o must be set";
  if (plan.num_blks_x < 1 || plan.num_blks_y < 1 || float_workspace == nullptr || int_workspace == nullptr)
    return "run needs a plan and its workspaces";
  return std::nullopt;
}

// The parameters of a launch over the workspaces plan filled (run_refusal first).
template <class T>
flashinfer::MLAParams<T, T, T, std::int32_t> mla_params(const MlaArgs& a, const MlaPlan& plan, void* float_workspace,
                                                         void* int_workspace) {
  using flashinfer::GetPtrFromBaseOffset;
  const auto ints = [&](std::int64_t offset) { return GetPtrFromBaseOffset<std::int32_t>(int_workspace, offset); };
  const std::uint32_t key_dim = kCkvDim + kKpeDim;
  flashinfer::MLAParams<T, T, T, std::int32_t> p;
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
  return p;
}

// One launch of either kernel: the refusals, the parameters, then kernel(params, num_blks_x,
// num_blks_y, stream) (FlashInfer's launcher, returning its cudaError_t) through call_flashinfer.
template <class T, class Kernel>
cudaError_t run_mla_kernel(const MlaArgs& a, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                           cudaStream_t stream, std::string* error, Kernel kernel) {
  if (auto reason = run_refusal(a, plan, float_workspace, int_workspace)) return refuse(*reason, error);
  auto p = mla_params<T>(a, plan, float_workspace, int_workspace);
  return call_flashinfer(
      [&] {
        return kernel(p, static_cast<std::uint32_t>(plan.num_blks_x), static_cast<std::uint32_t>(plan.num_blks_y),
                      stream);
      },
      error);
}

}  // namespace decode_bench::flashinfer_launch::mla_detail
