// MLA decode points in the sweep (host): what MLA decode does not take is refused by name; the described problem, the memory estimate,
// the roofline bound against the highest matching tensor roof, the backends' answers, and the host
// verification's rule (the float64 reference's own output passes, an error past the bound or an
// unwritten element fails).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include <cuda_bf16.h>

#include "backends/registry.hpp"
#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_reference.hpp"
#include "pools/latent_cache.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/compare/ceiling_fraction.hpp"
#include "sweeps/memory_estimate.hpp"
#include "sweeps/mla_bound.hpp"
#include "sweeps/mla_point.hpp"
#include "sweeps/mla_verify.hpp"
#include "sweeps/point_problem.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using testing::one_experiment;
using testing::plan_errors;
using testing::plan_of;

std::string all(const std::vector<ConfigError>& errors) { return format_config_errors(errors); }

const json kMla = {{"attention", "mla"}, {"dtype", "bf16"}, {"layout", "paged"}, {"page_size", 64}};

TEST(MlaSweep, WhatMlaDecodeDoesNotTakeIsRefusedByName) {
  const auto refused = [](json axes, const std::string& axis, const std::string& words) {
    const auto errors = plan_errors(one_experiment(std::move(axes), kMla));
    const std::string text = all(errors);
    EXPECT_NE(text.find("axes." + axis), std::string::npos) << text;
    EXPECT_NE(text.find(words), std::string::npos) << text;
  };
  refused({{"q_len", {3}}}, "q_len", "takes q_len 1 or 2");
  refused({{"window", {128}}}, "window", "no window path");
  refused({{"logits_soft_cap", {50.0}}}, "logits_soft_cap", "no logits_soft_cap path");
  refused({{"sinks", {true}}}, "sinks", "no sinks path");
  refused({{"kernel", {"baseline"}}}, "kernel", "flash_decode or batch_decode");
  refused({{"kernel", {"shared_prefix"}}}, "kernel", "flash_decode or batch_decode");
  refused({{"layers", {2}}}, "layers", "layers must be 1");
  refused({{"page_order", {"churned"}}}, "page_order", "not churned");
  EXPECT_NE(all(plan_errors(one_experiment({{"fragmentation", {2.0}}}, {{"attention", "mla"}}))).find("fragmentation must be 1"),
            std::string::npos);
  // What it takes: both decode kernels, both layouts, q_len 1 and 2, shuffled pages.
  const Plan ok = plan_of(one_experiment({{"kernel", {"flash_decode", "batch_decode"}}, {"q_len", {1, 2}},
                                          {"layout", {"contiguous", "paged"}}, {"page_order", {"sequential", "shuffled"}}},
                                         {{"attention", "mla"}, {"dtype", "fp8_e4m3"}, {"T", 100}}));
  EXPECT_EQ(ok.points.size(), 12u);  // page_order is a paged axis: 2 x 2 contiguous, 2 x 2 x 2 paged
}

// The described problem: the latent cache as one KV head of 576, the CSR of 64-token pages, q_len.
TEST(MlaSweep, DescribedProblemIsTheLatentCache) {
  json p = plan_of(one_experiment({{"q_len", {2}}}, {{"attention", "mla"}, {"dtype", "bf16"}, {"layout", "paged"},
                                                       {"page_size", 64}, {"heads_q", 16}, {"batch", 3}, {"T", 100}}))
               .points.at(0)
               .parameters;
  const AttentionProblem a = describe_point(KernelKind::flash_decode, p);
  ASSERT_TRUE(a.mla.has_value());
  EXPECT_EQ(a.mla->heads_q, 16);
  EXPECT_EQ(a.mla->q_len, 2);
  EXPECT_EQ(a.variant.q_len, 2);
  EXPECT_DOUBLE_EQ(a.mla->softmax_scale, 1.0 / std::sqrt(192.0));
  EXPECT_EQ(a.shape.heads_kv, 1);
  EXPECT_EQ(a.shape.head_dim, 576);
  EXPECT_EQ(a.paged.head_dim, 576);
  EXPECT_EQ(a.host_indptr, (std::vector<std::int32_t>{0, 2, 4, 6}));
  EXPECT_EQ(a.host_last_page_len, (std::vector<std::int32_t>{36, 36, 36}));
  // An MHA point is described as before: no mla.
  EXPECT_FALSE(describe_point(KernelKind::flash_decode, plan_of(one_experiment({{"T", {100}}})).points.at(0).parameters)
                   .mla.has_value());
}

// decode-bench and (built with FlashInfer's headers) flashinfer_mla take MLA, and so does
// flashinfer_mla_fa3 where it is built and the device is of compute capability 9.0 (else it names
// the device); every other backend refuses it with a reason that names it; decode-bench refuses
// what its MLA kernel was not built for.
TEST(MlaSweep, BackendsAnswerMlaProblems) {
  json p = {{"attention", "mla"}, {"kernel", "flash_decode"}, {"dtype", "bf16"}, {"layout", "paged"}, {"page_size", 64},
            {"heads_q", 128}, {"batch", 2}, {"T", 256}, {"kv_lora_rank", 512}, {"rope_dim", 64}};
  const AttentionProblem a = describe_point(KernelKind::flash_decode, p);
  for (const BackendEntry& entry : registered_backends()) {
    const auto why = entry.make()->supports(a);
    const bool built = entry.make()->version() != "not built";
    if (entry.name == "decode-bench" || (entry.name == "flashinfer_mla" && built)) {
      EXPECT_FALSE(why.has_value()) << *why;
    } else if (entry.name == "flashinfer_mla_fa3" && built) {
      if (why.has_value()) {
        EXPECT_NE(why->find("compute capability"), std::string::npos) << *why;
      }
    } else {
      // A backend this build left out says so first; the others name MLA.
      ASSERT_TRUE(why.has_value()) << entry.name;
      EXPECT_NE(why->find(built ? "mla" : "not built"), std::string::npos) << entry.name << ": " << *why;
    }
  }
  const auto decode_bench = find_backend("decode-bench")->make();
  p["kv_lora_rank"] = 256;
  const auto rank = decode_bench->supports(describe_point(KernelKind::flash_decode, p));
  ASSERT_TRUE(rank.has_value());
  EXPECT_NE(rank->find("kv_lora_rank 512"), std::string::npos) << *rank;
  EXPECT_TRUE(decode_bench->layers_unsupported(a).has_value());
}

// decode-bench's MLA kernels take q and give o in the MMA's 16-bit type (the latent's; FP16 for an
// FP8 cache), its attention kernels in FP32; plan() refuses another io dtype before any device work.
TEST(MlaSweep, DecodeBenchTakesMlaQAndOInTheMmaType) {
  const auto backend = find_backend("decode-bench")->make();
  for (const auto& [dtype, io] : std::vector<std::pair<std::string, DType>>{
           {"bf16", DType::bf16}, {"fp16", DType::fp16}, {"fp8_e4m3", DType::fp16}}) {
    const json p = {{"attention", "mla"}, {"kernel", "flash_decode"}, {"dtype", dtype}, {"heads_q", 16}, {"T", 64}};
    EXPECT_EQ(backend->io_dtype(describe_point(KernelKind::flash_decode, p)), io) << dtype;
  }
  EXPECT_EQ(backend->io_dtype(describe_point(KernelKind::flash_decode, {{"dtype", "bf16"}, {"T", 64}})), DType::fp32);
  struct NoWorkspace final : Workspace {
    void* allocate(std::size_t) override { throw std::logic_error("allocate called"); }
    cudaStream_t stream() const override { return nullptr; }
  } ws;
  AttentionProblem fp32_io = describe_point(
      KernelKind::flash_decode, {{"attention", "mla"}, {"kernel", "flash_decode"}, {"dtype", "bf16"}, {"T", 64}});
  fp32_io.io_dtype = DType::fp32;
  try {
    backend->plan(fp32_io, ws);
    ADD_FAILURE() << "plan took fp32 q and o for an MLA point";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "decode-bench's MLA kernels read q and write o in bf16 here, not fp32");
  }
  EXPECT_THROW(mla_io_dtype(DType::fp32), std::invalid_argument);
}

// The estimate covers the latent arena the point allocates (whole pages), q, o and lse (FP32, and
// q and o in the backend's 16-bit io dtype).
TEST(MlaSweep, MemoryEstimateCoversTheLatentArena) {
  for (const char* layout : {"paged", "contiguous"}) {
    const json p = {{"attention", "mla"}, {"kernel", "flash_decode"}, {"dtype", "bf16"}, {"layout", layout},
                    {"page_size", 64}, {"heads_q", 16}, {"q_len", 2}, {"batch", 3}, {"T", 100}};
    const MlaPoint m = parse_mla_point(p);
    LatentCacheConfig config;
    config.dtype = DType::bf16;
    config.storage = std::string(layout) == "paged" ? LatentStorage::paged : LatentStorage::contiguous;
    const LatentCache cache(config, m.decode.lengths);
    const std::uint64_t arena = cache.data().size();
    EXPECT_EQ(arena, 3u * (std::string(layout) == "paged" ? 128u : 100u) * 1152u) << layout;
    // FP32 q, o and lse, and the 16-bit q and o of the backend's io dtype.
    const std::uint64_t q_o_lse = 3u * 32u * (576u + 512u + 1u) * 4u + 3u * 32u * (576u + 512u) * 2u;
    const std::uint64_t est = estimate_device_bytes(p);
    EXPECT_GE(est, arena + q_o_lse) << layout;
    // No more than the block table, lengths and the widest plan's partials on top.
    const std::uint64_t partials = 64u * 3u * 32u * 513u * 4u;
    EXPECT_LE(est, arena + q_o_lse + partials + 4u * (6 + 2 * 3 + 1) + 4u * 3) << layout;
  }
}

// The bound takes the highest roof matching the operands: BF16 the warpgroup roof where measured,
// FP8 (widened to FP16) the FP16 roofs; the ridge splits h_q 16 (memory) from h_q 128 x q_len 2
// (compute).
TEST(MlaSweep, BoundUsesTheHighestMatchingTensorRoof) {
  const json ceilings = {{"dram_read", {{"value", 3000.0}}},
                         {"fp16_tensor", {{"value", 600.0}}},
                         {"bf16_tensor_wgmma", {{"value", 800.0}}}};
  // h_q 128 at q_len 1 (about 216 FLOP/B here, with q and o in FP32) sits just under this ridge of
  // 267; q_len 2 doubles the FLOPs over nearly the same bytes.
  const MlaShape narrow{16, 512, 64, 1}, wide{128, 512, 64, 2};
  const std::vector<std::int32_t> lengths(128, 4096);
  for (const auto& [shape, limiter] : {std::pair{narrow, "memory"}, std::pair{wide, "compute"}}) {
    const MlaTrafficModel m = mla_traffic_model(shape, DType::bf16, lengths, {});
    const json b = mla_bound(m.minimum_bytes(), m.flops, DType::bf16, ceilings);
    EXPECT_EQ(b["tensor_roof"], "bf16_tensor_wgmma");
    EXPECT_DOUBLE_EQ(b["ridge_intensity"].get<double>(), 800e12 / 3000e9);
    EXPECT_EQ(b["limiter"], std::string(limiter));
    EXPECT_DOUBLE_EQ(b["memory_us"].get<double>(), m.minimum_bytes() / 3000e3);
    EXPECT_DOUBLE_EQ(b["compute_us"].get<double>(), m.flops / 800e6);
    EXPECT_DOUBLE_EQ(b["bound_us"].get<double>(), std::max(b["memory_us"].get<double>(), b["compute_us"].get<double>()));
    json bound = b, achieved = {{"tflops", 400.0}};
    add_mla_bound_ratios(bound, achieved, 2 * b["bound_us"].get<double>());
    EXPECT_DOUBLE_EQ(bound["median_over_bound"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(achieved["fraction_of_tensor_roof"].get<double>(), 0.5);
    EXPECT_EQ(achieved["tensor_roof"], "bf16_tensor_wgmma");
  }
  EXPECT_EQ(mla_bound(1e9, 1e12, DType::fp8_e4m3, ceilings)["tensor_roof"], "fp16_tensor");
  const json no_roof = mla_bound(1e9, 1e12, DType::bf16, {{"dram_read", {{"value", 3000.0}}}});
  EXPECT_FALSE(no_roof.contains("bound_us"));
  EXPECT_FALSE(no_roof.contains("limiter"));
}

// compare's ceiling fraction holds a compute-bound MLA point against the tensor roof of its bound,
// an MHA point of the same dtype against the FMA roof as before.
TEST(MlaSweep, CompareHoldsMlaPointsAgainstTheirTensorRoof) {
  const json doc = {{"ceilings", {{"dram_read", {{"value", 3000.0}}}, {"fp16_fma", {{"value", 100.0}}},
                                  {"bf16_tensor_wgmma", {{"value", 800.0}}}}}};
  json point = {{"parameters", {{"attention", "mla"}, {"dtype", "bf16"}}},
                {"bound", {{"tensor_roof", "bf16_tensor_wgmma"}}},
                {"timing", {{"median_us", 1000.0}}},
                {"model", {{"bytes", 1e9}, {"flops", 4e11}}},  // 400 FLOP/B: above the ridge of 267
                {"achieved", {{"gbps", 1000.0}, {"tflops", 400.0}}}};
  EXPECT_EQ(compare::compute_roof_for(point), "bf16_tensor_wgmma");
  const auto f = compare::ceiling_fraction(doc, point);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->bound, "bf16_tensor_wgmma");
  EXPECT_DOUBLE_EQ(f->value, 0.5);
  point["parameters"]["attention"] = "mha";
  EXPECT_EQ(compare::compute_roof_for(point), "fp16_fma");
}

TEST(MlaSweep, RowSampleStaysWithinItsBudget) {
  const MlaShape s{128, 512, 64, 2};
  const std::vector<std::int32_t> lengths = {16384, 0, 7, 16384};
  const MlaRowSample sample = mla_rows_to_verify(s, lengths, 1 << 17);
  ASSERT_EQ(sample.sequences.size(), 3u);  // 0, 2, 3
  std::int64_t cost = 0;
  for (const auto& seq : sample.sequences) {
    ASSERT_FALSE(seq.heads.empty());
    EXPECT_EQ(seq.heads.front(), 0);
    if (seq.heads.size() > 1) {
      EXPECT_EQ(seq.heads.back(), 127);
    }
    EXPECT_TRUE(std::is_sorted(seq.heads.begin(), seq.heads.end()));
    cost += static_cast<std::int64_t>(seq.heads.size()) * s.q_len * lengths[static_cast<std::size_t>(seq.seq)];
  }
  EXPECT_EQ(sample.sequences[1].heads.size(), 128u);  // 7 tokens: every head fits
  EXPECT_LE(cost, (1 << 17) + 3 * 2 * 16384);         // at least one head a sequence
}

// The verifier over a small batch: the reference's own output (rounded to float) passes; one
// element moved past its bound fails; an unwritten (NaN) element fails as non-finite.
TEST(MlaSweep, HostVerificationJudgesByTheBound) {
  const MlaShape s{4, 512, 64, 2, deepseek_softmax_scale(64)};
  const std::vector<std::int32_t> lengths = {70, 0, 1, 65};
  LatentCacheConfig config;
  config.dtype = DType::bf16;
  config.page_size = 7;
  config.shuffle_pages = true;
  config.seed = 3;
  const LatentCache cache(config, lengths);
  const std::vector<float> q = mla_query(s, 4, DType::bf16, 9);
  for (const float x : q) EXPECT_EQ(x, __bfloat162float(__float2bfloat16_rn(x)));
  const float one = 1.f;
  const auto view = cache.paged_view<__nv_bfloat16>(reinterpret_cast<const __nv_bfloat16*>(cache.data().data()),
                                                    cache.page_indices().data(), cache.indptr().data(), &one);
  const std::size_t rows = 4u * s.rows();
  std::vector<double> o_ref(rows * 512), lse_ref(rows);
  mla_reference(s, view, 4, lengths.data(), q.data(), o_ref.data(), lse_ref.data());
  std::vector<float> o(o_ref.begin(), o_ref.end()), lse(lse_ref.begin(), lse_ref.end());
  const MlaRowSample every = mla_rows_to_verify(s, lengths, std::numeric_limits<std::int64_t>::max() / 4);
  const VerificationResult good = verify_mla_on_host(s, cache, q, o, lse, every);
  EXPECT_TRUE(good.passed) << good.summary();
  EXPECT_EQ(good.tolerance, 2.0 / 256);
  EXPECT_LT(good.max_rel_error, 1e-3);
  // Sequence 3 (checked), position 1, head 2, column 5: far past its bound.
  std::vector<float> bad = o;
  const std::size_t row = (3u * 2 + 1) * 4 + 2;
  bad[row * 512 + 5] += 0.5f;
  EXPECT_FALSE(verify_mla_on_host(s, cache, q, bad, lse, every).passed);
  std::vector<float> nan = o;
  nan[7] = std::numeric_limits<float>::quiet_NaN();  // sequence 0's first row
  const VerificationResult unwritten = verify_mla_on_host(s, cache, q, nan, lse, every);
  EXPECT_FALSE(unwritten.passed);
  EXPECT_EQ(unwritten.non_finite, 1);
  // The empty sequence's rows must say so: lse -inf.
  std::vector<float> lse_bad = lse;
  lse_bad[1u * s.rows()] = 0.f;
  EXPECT_FALSE(verify_mla_on_host(s, cache, q, o, lse_bad, every).passed);
}

}  // namespace
}  // namespace decode_bench::sweeps
