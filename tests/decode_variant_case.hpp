#pragma once
// One attention-variant decode case through plan_decode / run_decode, against the float64 variant
// reference (kernels/cpu_reference_variant.hpp), on fresh random data (FP8: the generator's bytes and
// per-head scales, tests/case_kv.hpp) with o and lse poisoned before
// the launch and the workspace poisoned before init_decode_workspace. The caller picks the options
// (pinned splits, heads per block, the separate merge, the policy) and reads back the plan, so a
// test can say which family and tiling ran.
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/decode_launch.hpp"
#include "tests/case_kv.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench::testing {

struct DecodeVariantCase {
  DecodeShape shape{32, 32, 128};
  std::vector<std::int32_t> lengths{1013};
  int page_size = 0;  // 0: contiguous; else shuffled pages
  AttentionVariant variant{};
  DecodeOptions options{};
  std::uint64_t seed = 1;
};

inline std::string describe(DType dtype, const DecodeVariantCase& c) {
  std::string lens;
  for (auto l : c.lengths) lens += std::to_string(l) + ",";
  return std::string(dtype_name(dtype)) + " Hq=" + std::to_string(c.shape.heads_q) + " Hkv=" +
         std::to_string(c.shape.heads_kv) + " D=" + std::to_string(c.shape.head_dim) + " T=" + lens +
         " page=" + std::to_string(c.page_size) + " splits=" + std::to_string(c.options.splits) +
         " heads_per_block=" + std::to_string(c.options.heads_per_block) +
         (c.options.fused_merge ? "" : " separate-merge") + " [" + c.variant.describe() + "]";
}

struct DecodeVariantResult {
  cudaError_t status = cudaSuccess;
  VerificationResult verification;
  DecodePlan plan;
};

// A case's q and sink logits (host and device), o and lse on the device, and the DecodeProblem over
// them (q_len x heads_q rows a sequence). q is drawn from rng after whatever the caller drew.
struct VariantDecodeInputs {
  std::vector<float> q, sinks;
  DeviceBuffer<float> d_q, d_o, d_lse, d_sinks;
  DeviceBuffer<std::int32_t> d_lens;
  DecodeProblem problem;

  VariantDecodeInputs(const DecodeVariantCase& c, DType dtype, std::mt19937_64& rng)
      : q(random_values<float>(rows(c) * c.shape.head_dim, rng, -2.f, 2.f)),
        sinks(sink_logits(c.shape.heads_q, c.seed)),
        d_q(q),
        d_o(q.size()),
        d_lse(rows(c)),
        d_sinks(sinks),
        d_lens(c.lengths),
        problem{c.shape, dtype, static_cast<int>(c.lengths.size()),
                *std::max_element(c.lengths.begin(), c.lengths.end()), d_lens.get(), d_q.get(), d_o.get(), d_lse.get()} {
    problem.host_seq_lens = c.lengths.data();
    problem.variant = row_attention_variant(c.variant, d_sinks.get());
  }

  static std::size_t rows(const DecodeVariantCase& c) {
    return c.lengths.size() * static_cast<std::size_t>(c.variant.q_len) * c.shape.heads_q;
  }
};

template <class Elem>
DecodeVariantResult run_decode_variant_case(const DecodeVariantCase& c) {
  std::mt19937_64 rng(c.seed);
  const DecodeShape& s = c.shape;
  const int seqs = static_cast<int>(c.lengths.size());
  const std::size_t per_seq = static_cast<std::size_t>(c.variant.q_len) * s.heads_q;  // rows of q, o and lse a sequence
  const CaseKv<Elem> kv_data(s, c.lengths, c.page_size, c.seed, false, rng);
  VariantDecodeInputs in(c, dtype_of<Elem>::value, rng);
  DecodeVariantResult result;
  kv_data.on_device([&](const auto& kv) {
    using KV = std::decay_t<decltype(kv)>;
    result.status = plan_decode<KV>(DecodeKernel::flash_decode, in.problem, c.options, &result.plan);
    if (result.status != cudaSuccess) return;
    DeviceBuffer<std::uint8_t> workspace(result.plan.workspace_bytes);
    workspace.poison();
    result.status = init_decode_workspace(result.plan, workspace.get(), nullptr);
    in.d_o.poison();
    in.d_lse.poison();
    if (result.status == cudaSuccess) result.status = run_decode<KV>(kv, in.problem, result.plan, workspace.get(), nullptr);
    if (result.status == cudaSuccess) result.status = cudaDeviceSynchronize();
  });
  if (result.status != cudaSuccess) return result;
  const std::vector<float> o = in.d_o.download(), lse = in.d_lse.download();
  result.verification.passed = true;
  for (int b = 0; b < seqs; ++b) {
    const std::size_t first = static_cast<std::size_t>(b) * per_seq;
    const ReferenceOutput ref = reference_decode_variant(
        kv_data.host, b, c.lengths[b], std::span<const float>(in.q.data() + first * s.head_dim, per_seq * s.head_dim), s,
        c.variant, in.sinks);
    accumulate(result.verification,
               verify_decode(std::span<const float>(o.data() + first * s.head_dim, per_seq * s.head_dim),
                             std::span<const float>(lse.data() + first, per_seq), ref, dtype_of<Elem>::value));
  }
  // The sweep's rule for this variant (FP8 with a soft-cap: 4e-3, harness/verify.hpp).
  judge_at(result.verification, verification_tolerance(dtype_of<Elem>::value, c.variant));
  return result;
}

// FP16 (any dtype without a case of its own), BF16, FP8 E4M3 and E5M2.
inline DecodeVariantResult run_decode_variant_case(DType dtype, const DecodeVariantCase& c) {
  switch (dtype) {
    case DType::bf16: return run_decode_variant_case<__nv_bfloat16>(c);
    case DType::fp8_e4m3: return run_decode_variant_case<__nv_fp8_e4m3>(c);
    case DType::fp8_e5m2: return run_decode_variant_case<__nv_fp8_e5m2>(c);
    default: return run_decode_variant_case<__half>(c);
  }
}

}  // namespace decode_bench::testing
