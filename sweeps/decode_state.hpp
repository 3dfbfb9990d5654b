#pragma once
// The KV state of one decode point: the pool (contiguous or paged, device memory), its sequences,
// q on the device, and (when the CPU reference or the host fill needs them) host copies of K, V
// and q. The values come from sweeps/decode_fill.hpp, generated on the device in place by
// default, or on the host and uploaded through admit (fill_on_host). FP8 caches take either path
// too (the generator's bytes, kernels/fp8_generator.hpp) and add per-KV-head scales
// (fp8_random_head_scales), on the host for the CPU reference and on the device for kernels and the
// GPU reference.
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime.h>

#include "harness/device_buffer.hpp"
#include "kernels/dtype.hpp"
#include "kernels/fp8_quantize.hpp"
#include "pools/kv_pool.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/kv_scales.hpp"
#include "sweeps/phase_timer.hpp"

namespace decode_bench::sweeps {

struct DecodeDataOptions {
  bool fill_on_host = false;  // generate on the host, upload through admit (the old path)
  bool host_copy = false;     // keep host copies of K, V and q (the CPU reference reads them)
  // Paged points with a window: once filled, each sequence's pages behind its first query token's
  // window go back to the pool (sweeps/window_release.hpp); the host copies stay whole.
  bool release_behind_window = false;
};

template <class T>
constexpr bool kIsFp8 = dtype_is_fp8(dtype_of<T>::value);

template <class T>
struct DecodeState {
  std::unique_ptr<KVPool> pool;
  std::vector<SequenceHandle> handles;
  DeviceBuffer<float> q;             // (B, H_q, D)
  std::vector<std::vector<T>> k, v;  // host copies per sequence, (H_kv, len, D); empty unless host_copy
  std::vector<float> q_host;         // (B, H_q, D); empty unless host_copy
  KvScales scales;                   // FP8 only: per-KV-head K and V scales, host and device
  std::int64_t pages = 0;            // paged: every sequence's pages once filled
  std::int64_t pages_released = 0;   // paged: of those, released behind the window
};

// Builds the pool (phase pool_build), fills K, V and q and, when asked, releases the pages behind the
// window (phase data_fill). Returns with every upload, fill kernel and block-table write finished,
// so the phases hold their own device time.
template <class T>
DecodeState<T> build_decode_state(const DecodePoint& d, const DecodeDataOptions& options, cudaStream_t stream,
                                  PhaseSeconds& phases);

}  // namespace decode_bench::sweeps
