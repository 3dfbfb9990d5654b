#include "sweeps/decode_verify.hpp"

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gpu_verify.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/gpu_reference.hpp"

namespace decode_bench::sweeps {

// The GPU reference takes every dtype and every attention variant (q_len, window, sinks, soft-cap)
// but holds q and its accumulators in shared memory: a head_dim over its limit verifies on the host,
// where no such limit exists.
bool device_reference_supports(const DecodePoint& d) { return d.shape.head_dim <= gpu_reference_max_head_dim(); }

template <class KV>
VerificationResult verify_on_device(const DecodePoint& d, const KV& kv, const std::int32_t* seq_lens,
                                    std::int64_t max_len, const float* q, const float* sinks, const float* o,
                                    const float* lse, cudaStream_t stream, PhaseSeconds& phases) {
  const int batch = static_cast<int>(d.lengths.size());
  // q_len query rows a sequence: (B, q_len, H_q) rows of q, o and lse.
  const std::size_t heads = static_cast<std::size_t>(batch) * d.variant.q_len * d.shape.heads_q;
  DeviceBuffer<double> o_ref(heads * d.shape.head_dim), o_abs(heads * d.shape.head_dim), lse_ref(heads);
  const GpuReferenceOutput ref{o_ref.get(), o_abs.get(), lse_ref.get()};
  {
    PhaseTimer phase(phases, kPhaseReference);
    DeviceBuffer<double> workspace(
        std::max<std::size_t>(1, gpu_reference_workspace_doubles(d.shape, batch, max_len, d.variant.q_len)));
    DB_CUDA_CHECK(gpu_reference_decode_variant(kv, d.shape, d.variant, sinks, batch, max_len, seq_lens, q,
                                               workspace.get(), ref, stream));
    DB_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  PhaseTimer phase(phases, kPhaseVerification);
  VerificationResult r = verify_decode_on_device(o, lse, ref, heads, d.shape.head_dim, d.dtype, stream);
  judge_at(r, verification_tolerance(d.dtype, d.variant));  // FP8 with a soft-cap: 4e-3 (harness/verify.hpp)
  return r;
}

template <class T>
VerificationResult verify_on_host(const DecodePoint& d, const DecodeState<T>& st, const DeviceBuffer<float>& sinks_dev,
                                  const DeviceBuffer<float>& o_dev, const DeviceBuffer<float>& lse_dev,
                                  PhaseSeconds& phases) {
  std::vector<float> o, lse, sinks;
  {
    PhaseTimer phase(phases, kPhaseVerification);
    o = o_dev.download();
    lse = lse_dev.download();
    // The launch's own sink logits: a further layer's kernel reads the point's (drawn from its seed,
    // not the layer's).
    if (d.variant.sinks) sinks = sinks_dev.download();
  }
  PhaseTimer phase(phases, kPhaseReference);  // the comparison is negligible next to the reference
  VerificationResult total;
  total.passed = true;
  // A sequence's q_len query rows are consecutive: (q_len, H_q, D) of q and o, (q_len, H_q) of lse.
  const std::size_t rows = static_cast<std::size_t>(d.variant.q_len) * d.shape.heads_q;
  const std::size_t hd = rows * d.shape.head_dim;
  for (std::size_t b = 0; b < d.lengths.size(); ++b) {
    const auto host = st.scales.attach(ContiguousKV<T>::make(st.k[b].data(), st.v[b].data(), d.shape.heads_kv,
                                                           std::max<std::int64_t>(d.lengths[b], 1), d.shape.head_dim),
                                     false);
    const std::span<const float> q(st.q_host.data() + b * hd, hd);
    const auto ref = d.variant.plain() ? reference_decode(host, 0, d.lengths[b], q, d.shape)
                                       : reference_decode_variant(host, 0, d.lengths[b], q, d.shape, d.variant, sinks);
    accumulate(total, verify_decode(std::span<const float>(o.data() + b * hd, hd),
                                    std::span<const float>(lse.data() + b * rows, rows), ref, d.dtype));
  }
  judge_at(total, verification_tolerance(d.dtype, d.variant));  // FP8 with a soft-cap: 4e-3 (harness/verify.hpp)
  return total;
}

#define DECODE_BENCH_INSTANTIATE_VERIFY(T)                                                                         \
  template VerificationResult verify_on_device<ContiguousKV<T>>(const DecodePoint&, const ContiguousKV<T>&,        \
                                                                const std::int32_t*, std::int64_t, const float*,   \
                                                                const float*, const float*, const float*,          \
                                                                cudaStream_t, PhaseSeconds&);                      \
  template VerificationResult verify_on_device<PagedKV<T>>(const DecodePoint&, const PagedKV<T>&,                  \
                                                           const std::int32_t*, std::int64_t, const float*,        \
                                                           const float*, const float*, const float*,               \
                                                           cudaStream_t, PhaseSeconds&);                           \
  template VerificationResult verify_on_host<T>(const DecodePoint&, const DecodeState<T>&, const DeviceBuffer<float>&, \
                                                const DeviceBuffer<float>&, const DeviceBuffer<float>&,             \
                                                PhaseSeconds&);
DECODE_BENCH_INSTANTIATE_VERIFY(float)
DECODE_BENCH_INSTANTIATE_VERIFY(__half)
DECODE_BENCH_INSTANTIATE_VERIFY(__nv_bfloat16)
DECODE_BENCH_INSTANTIATE_VERIFY(__nv_fp8_e4m3)
DECODE_BENCH_INSTANTIATE_VERIFY(__nv_fp8_e5m2)
#undef DECODE_BENCH_INSTANTIATE_VERIFY

}  // namespace decode_bench::sweeps
