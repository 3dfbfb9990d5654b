#pragma once
// Which float64 reference checks a kernel test case (tests/decode_case.hpp,
// tests/row_attention_case.hpp), and the GPU one's check. Both read the case's contiguous slab
// (the kernels may read its paged twin); the CPU reference (kernels/cpu_reference.hpp) on the
// host, the GPU reference (kernels/gpu_reference.hpp) a device copy of it, with the comparison on
// the device (harness/gpu_verify.hpp). GpuReferenceGpu.* holds the two references to 1e-12 of
// each other. The CPU one costs about a microsecond per (token, query row) at head dim 128, which
// made cases of hundreds of rows over thousands of tokens take seconds each; those take the GPU.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gpu_verify.hpp"
#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/gpu_reference.hpp"
#include "kernels/kv_accessor.hpp"

namespace decode_bench::testing {

enum class CaseReference { automatic, cpu, gpu };

// automatic: the GPU reference above this much work, tokens x query rows x head dim (a few tens
// of milliseconds of the CPU reference).
inline constexpr std::int64_t kGpuReferenceAbove = std::int64_t{1} << 24;

inline bool takes_gpu_reference(CaseReference reference, std::int64_t work) {
  return reference == CaseReference::gpu || (reference == CaseReference::automatic && work > kGpuReferenceAbove);
}

// The view of `slab` whose sequence 0, head 0, token 0 is (seq, kv_head, begin): one KV head's
// rows from `begin` on, for a reference over that head alone (shape {rows, 1, D}). Same element
// addresses and scale as `slab` gives them, so the reference's arithmetic is unchanged.
template <class T>
ContiguousKV<T> head_view(ContiguousKV<T> slab, int seq, int kv_head, std::int64_t begin) {
  const std::int64_t offset = slab.row_offset(seq, kv_head, begin);
  slab.k += offset;
  slab.v += offset;
  if (slab.k_scale != nullptr) slab.k_scale += kv_head;
  if (slab.v_scale != nullptr) slab.v_scale += kv_head;
  return slab;
}

// o, lse (device; (batch, H_q, D) and (batch, H_q)) against the GPU reference over `kv` (device,
// scales attached) for sequences of seq_lens (device) tokens and queries q (device, (batch, H_q, D)).
template <class T>
VerificationResult verify_on_gpu_reference(const ContiguousKV<T>& kv, const DecodeShape& shape, int batch,
                                           std::int64_t max_len, const std::int32_t* seq_lens, const float* q,
                                           const float* o, const float* lse, DType dtype) {
  const std::size_t heads = static_cast<std::size_t>(batch) * shape.heads_q;
  DeviceBuffer<double> workspace(std::max<std::size_t>(gpu_reference_workspace_doubles(shape, batch, max_len), 1)),
      o_ref(heads * shape.head_dim), o_abs(heads * shape.head_dim), lse_ref(heads);
  DB_CUDA_CHECK(gpu_reference_decode(kv, shape, batch, max_len, seq_lens, q, workspace.get(),
                                     {o_ref.get(), o_abs.get(), lse_ref.get()}, nullptr));
  DB_CUDA_CHECK(cudaDeviceSynchronize());
  return verify_decode_on_device(o, lse, {o_ref.get(), o_abs.get(), lse_ref.get()}, heads, shape.head_dim, dtype,
                                 nullptr);
}

}  // namespace decode_bench::testing
