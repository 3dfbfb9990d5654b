#pragma once
// A decode problem with fresh random data for GPU kernel tests: a batch of sequences laid out
// contiguously (slots, H_kv, max_len, D) or scattered over shuffled pages, uploaded to the device,
// run through plan_decode/run_decode, checked against the float64 reference per sequence (the
// CPU's, or the GPU's for large batches: tests/case_reference.hpp).
#include <algorithm>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/fp8_quantize.hpp"
#include "sweeps/decode_fill.hpp"
#include "tests/case_kv.hpp"
#include "tests/case_reference.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench::testing {

struct DecodeCase {
  DecodeKernel kernel = DecodeKernel::flash_decode;
  DecodeShape shape{1, 1, 128};
  std::vector<std::int32_t> lengths{1};
  int page_size = 0;   // 0: contiguous
  int splits = 0;      // 0: automatic
  std::uint64_t seed = 1;
  bool fused_merge = true;  // false: the plan's separate merge kernel
  int launches = 1;         // runs on one workspace, outputs re-poisoned before each; the last is checked
  int heads_per_block = 0;  // 0: automatic
  bool per_tensor_scale = false;  // FP8: every KV head gets the same scale (else one per head)
  DecodePath path = DecodePath::automatic;  // flash_decode: pin the kernel family
  bool host_lengths = false;  // pass the lengths on the host too (ragged batches: the work-list plan)
  TuningPolicy tuning{};      // the planner's knobs (DecodeOptions::tuning)
  CaseReference reference = CaseReference::automatic;
};

struct DecodeCaseResult {
  VerificationResult verification;
  DecodePlan plan;
  cudaError_t status = cudaSuccess;
  bool gpu_reference = false;  // checked against the GPU reference
};

template <class Elem>
DecodeCaseResult run_decode_case(const DecodeCase& c) {
  std::mt19937_64 rng(c.seed);
  const DecodeShape& s = c.shape;
  const int seqs = static_cast<int>(c.lengths.size());
  const std::int64_t max_len = *std::max_element(c.lengths.begin(), c.lengths.end());
  const std::size_t row = s.head_dim;

  // K/V slab (FP8: the generator's bytes and scales) and, with page_size > 0, its paged twin.
  const CaseKv<Elem> kv_data(s, c.lengths, c.page_size, c.seed, c.per_tensor_scale, rng);
  std::vector<float> q = random_values<float>(static_cast<std::size_t>(seqs) * s.heads_q * row, rng, -2.f, 2.f);

  DeviceBuffer<float> d_q(q), d_o(static_cast<std::size_t>(seqs) * s.heads_q * row), d_lse(static_cast<std::size_t>(seqs) * s.heads_q);
  DeviceBuffer<std::int32_t> d_lens(c.lengths);
  DecodeProblem problem{s, dtype_of<Elem>::value, seqs, max_len, d_lens.get(), d_q.get(), d_o.get(), d_lse.get()};
  if (c.host_lengths) problem.host_seq_lens = c.lengths.data();
  DecodeCaseResult result;
  const auto launch = [&](const auto& kv) {
    using KV = std::decay_t<decltype(kv)>;
    const DecodeOptions options{.splits = c.splits, .heads_per_block = c.heads_per_block, .fused_merge = c.fused_merge,
                                .path = c.path, .tuning = c.tuning};
    result.status = plan_decode<KV>(c.kernel, problem, options, &result.plan);
    if (result.status != cudaSuccess) return;
    DeviceBuffer<std::uint8_t> workspace(result.plan.workspace_bytes);
    workspace.poison();  // partials must be fully written by the split kernel before the merge reads them
    result.status = init_decode_workspace(result.plan, workspace.get(), nullptr);
    for (int launch = 0; launch < c.launches && result.status == cudaSuccess; ++launch) {
      d_o.poison();
      d_lse.poison();
      result.status = run_decode<KV>(kv, problem, result.plan, workspace.get(), nullptr);
      if (result.status == cudaSuccess) result.status = cudaDeviceSynchronize();
    }
  };
  kv_data.on_device(launch);
  if (result.status != cudaSuccess) return result;

  std::int64_t work = 0;  // tokens x query heads x head dim
  for (const std::int32_t len : c.lengths) work += static_cast<std::int64_t>(len) * s.heads_q * s.head_dim;
  if (takes_gpu_reference(c.reference, work)) {
    result.gpu_reference = true;
    kv_data.on_device_slab([&](const auto& slab) {
      result.verification = verify_on_gpu_reference(slab, s, seqs, kv_data.slot_len, d_lens.get(), d_q.get(), d_o.get(),
                                                    d_lse.get(), dtype_of<Elem>::value);
    });
    return result;
  }
  const std::vector<float> o = d_o.download(), lse = d_lse.download();
  result.verification.passed = true;
  for (int b = 0; b < seqs; ++b) {
    const std::span<const float> qb(q.data() + static_cast<std::size_t>(b) * s.heads_q * row, s.heads_q * row);
    const ReferenceOutput ref = reference_decode(kv_data.host, b, c.lengths[b], qb, s);
    accumulate(result.verification,
               verify_decode(std::span<const float>(o.data() + static_cast<std::size_t>(b) * s.heads_q * row, s.heads_q * row),
                             std::span<const float>(lse.data() + static_cast<std::size_t>(b) * s.heads_q, s.heads_q), ref,
                             dtype_of<Elem>::value));
  }
  return result;
}

// A decode case on the storage type `dtype` (run_decode_case, tests/decode_case.hpp).
inline DecodeCaseResult run_decode_case_as(DType dtype, const DecodeCase& c) {
  DecodeCaseResult unknown;  // a storage type without a case: the callers' status check fails
  unknown.status = cudaErrorInvalidValue;
  return with_storage_element(dtype, [&](auto elem) { return run_decode_case<decltype(elem)>(c); }, unknown);
}

}  // namespace decode_bench::testing
