#pragma once
// The verification of a decode point's checked launch, two ways with one rule (harness/verify.hpp):
//   on the device (default): the float64 reference of kernels/gpu_reference.hpp over the pool's
//     own memory, compared on the device; only the error summary comes back.
//   on the host (--verify cpu): o and lse copied back, the float64 CPU reference over the host
//     copies of K/V (sweeps/decode_state.hpp).
// Each charges its reference and comparison time to the phases "reference" and "verification".
#include <span>

#include <cuda_runtime.h>

#include "harness/verify.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/decode_state.hpp"
#include "sweeps/phase_timer.hpp"

namespace decode_bench::sweeps {

// "gpu" or "cpu", recorded as verification.method.
inline constexpr const char* kVerifyOnDevice = "gpu";
inline constexpr const char* kVerifyOnHost = "cpu";

// Whether the device reference can take this point: a head_dim its shared memory holds (every
// dtype, FP8 through the accessor's device scales; every attention variant).
bool device_reference_supports(const DecodePoint& d);

// q, o: (B, q_len, H_q, D), lse: (B, q_len, H_q) in device memory, o and lse written by the launch.
// kv / seq_lens: the batch view the kernel read; sinks: the (H_q) sink logits it read (device;
// nullptr without sinks).
template <class KV>
VerificationResult verify_on_device(const DecodePoint& d, const KV& kv, const std::int32_t* seq_lens,
                                    std::int64_t max_len, const float* q, const float* sinks, const float* o,
                                    const float* lse, cudaStream_t stream, PhaseSeconds& phases);

// Needs the host copies (DecodeDataOptions::host_copy). sinks: the (H_q) sink logits the launch read,
// copied back (empty without sinks).
template <class T>
VerificationResult verify_on_host(const DecodePoint& d, const DecodeState<T>& st, const DeviceBuffer<float>& sinks,
                                  const DeviceBuffer<float>& o, const DeviceBuffer<float>& lse, PhaseSeconds& phases);

}  // namespace decode_bench::sweeps
