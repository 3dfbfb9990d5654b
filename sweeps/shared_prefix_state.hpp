#pragma once
// The KV state of one shared-prefix point: the batch forked in a device pool (the kernels read it)
// and, for the CPU reference (--verify cpu, or a head_dim the GPU reference cannot hold), a host
// mirror built by the same fork/append operations from the same data, so block tables agree token
// for token. Data: generated in place on the device (default), or on the host and uploaded through
// the appends (--fill host, and always with the mirror); both give the same values
// (sweeps/shared_prefix_fill.hpp).
#include <memory>
#include <vector>

#include <cuda_runtime.h>

#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/shared_prefix_layout.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/kv_scales.hpp"
#include "sweeps/shared_prefix_point.hpp"

namespace decode_bench::sweeps {

template <class T>
struct SharedPrefixState {
  std::unique_ptr<PagedPool> device_pool, host_pool;  // host_pool only with the mirror
  std::vector<SequenceHandle> device_handles, host_handles;
  SharedPrefixLayout layout;
  std::vector<float> q_host;  // (N, H_q, D), only with the mirror
  DeviceBuffer<float> q;      // (N, H_q, D)
  KvScales scales;            // FP8: per-KV-head dequantization scales (the pools store bytes only)
};

struct SharedPrefixDataOptions {
  bool host_mirror = false;  // host pool + CPU reference
  bool host_fill = false;    // generate on the host and upload
};

// Returns with every upload and fill kernel finished. Throws std::logic_error when the pool's
// pages disagree with the layout derived from the spec.
template <class T>
SharedPrefixState<T> build_shared_prefix_state(const SharedPrefixPoint& sp, const SharedPrefixDataOptions& options,
                                               cudaStream_t stream);

// Which sequences the CPU reference checks, in order: every group's first and last, then the rest
// in a seeded random order, within a budget of reference work (small points: all of them).
std::vector<int> shared_prefix_sequences_to_verify(const SharedPrefixPoint& sp);

// The float64 CPU reference over each of `seqs`, whole (host mirror and q_host), against o and
// lse copied back, in parallel over sequences; with the point's attention variant (the variant
// reference, kernels/cpu_reference_variant.hpp; sinks: the (H_q) sink logits the launch read, empty
// without sinks).
template <class T>
VerificationResult verify_shared_prefix_on_host(const SharedPrefixPoint& sp, const SharedPrefixState<T>& st,
                                                const std::vector<int>& seqs, const std::vector<float>& o,
                                                const std::vector<float>& lse, const std::vector<float>& sinks = {});

}  // namespace decode_bench::sweeps
