#include "sweeps/decode_end_to_end.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "harness/cuda_check.hpp"
#include "harness/pinned_buffer.hpp"

namespace decode_bench::sweeps {

template <class T>
TimingResult time_end_to_end(const std::string& name, const ContiguousKV<T>& kv, int batch,
                             const std::function<cudaError_t(cudaStream_t)>& launch, const DeviceBuffer<float>& q,
                             const DeviceBuffer<float>& o, const DeviceBuffer<float>& lse, const TimingOptions& topt,
                             L2Flusher& flusher, cudaStream_t stream) {
  const std::size_t kv_elems = static_cast<std::size_t>(batch) * kv.slot_stride;
  T* const device_k = const_cast<T*>(kv.k);
  T* const device_v = const_cast<T*>(kv.v);
  PinnedBuffer<T> host_k(kv_elems), host_v(kv_elems);
  PinnedBuffer<float> host_q(q.size()), host_o(o.size()), host_lse(lse.size());
  DB_CUDA_CHECK(cudaMemcpy(host_k.get(), device_k, host_k.bytes(), cudaMemcpyDeviceToHost));
  DB_CUDA_CHECK(cudaMemcpy(host_v.get(), device_v, host_v.bytes(), cudaMemcpyDeviceToHost));
  DB_CUDA_CHECK(cudaMemcpy(host_q.get(), q.get(), q.bytes(), cudaMemcpyDeviceToHost));
  const auto sample = [&](cudaStream_t s) -> cudaError_t {
    DB_RETURN_IF_ERROR(cudaMemcpyAsync(device_k, host_k.get(), host_k.bytes(), cudaMemcpyHostToDevice, s));
    DB_RETURN_IF_ERROR(cudaMemcpyAsync(device_v, host_v.get(), host_v.bytes(), cudaMemcpyHostToDevice, s));
    DB_RETURN_IF_ERROR(cudaMemcpyAsync(q.get(), host_q.get(), q.bytes(), cudaMemcpyHostToDevice, s));
    DB_RETURN_IF_ERROR(launch(s));
    DB_RETURN_IF_ERROR(cudaMemcpyAsync(host_o.get(), o.get(), o.bytes(), cudaMemcpyDeviceToHost, s));
    return cudaMemcpyAsync(host_lse.get(), lse.get(), lse.bytes(), cudaMemcpyDeviceToHost, s);
  };
  return time_launches(name, sample, topt, flusher, stream);
}

#define DECODE_BENCH_INSTANTIATE_E2E(T)                                                                          \
  template TimingResult time_end_to_end<T>(const std::string&, const ContiguousKV<T>&, int,                      \
                                           const std::function<cudaError_t(cudaStream_t)>&,                      \
                                           const DeviceBuffer<float>&, const DeviceBuffer<float>&,               \
                                           const DeviceBuffer<float>&, const TimingOptions&, L2Flusher&, cudaStream_t);
DECODE_BENCH_INSTANTIATE_E2E(float)
DECODE_BENCH_INSTANTIATE_E2E(__half)
DECODE_BENCH_INSTANTIATE_E2E(__nv_bfloat16)
DECODE_BENCH_INSTANTIATE_E2E(__nv_fp8_e4m3)
DECODE_BENCH_INSTANTIATE_E2E(__nv_fp8_e5m2)
#undef DECODE_BENCH_INSTANTIATE_E2E

}  // namespace decode_bench::sweeps
