// Composable shared-prefix decode on the GPU against the float64 reference over every whole
// sequence (prefix levels + suffix), outputs and workspace poisoned first: awkward prefix lengths,
// tiny and odd batches, GQA groups, head dims, shuffled pages, two levels with unequal groups,
// every storage type (FP8 with per-KV-head scales), phases on one stream and overlapped on two;
// the attention variants (sinks, soft-cap 50 and 5, sliding windows starting inside a level, at a
// level's end, in the suffixes; sequences of unequal lengths) against the float64 variant reference.
// Then both sweep runners on shared-prefix points (kernel shared_prefix, and batch_decode over the
// same forked pages).
#include <random>

#include "harness/device_buffer.hpp"
#include "harness/results_schema.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/fp8_quantize.hpp"
#include "kernels/shared_prefix.hpp"
#include "pools/memory_backend.hpp"
#include "pools/shared_prefix_batch.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/kv_scales.hpp"
#include "sweeps/shared_prefix_fill.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

struct Case {
  const char* name;
  SharedPrefixSpec spec;
  int page_size = 16;
  DecodeShape shape{8, 8, 128};
  DType dtype = DType::fp16;
  PageOrder order = PageOrder::shuffled;
  bool overlap = true;
  AttentionVariant variant{};  // q_len 1: window, sinks, soft-cap (the composition's variants)
  std::vector<int> extra{};    // more own tokens for sequence s (unequal lengths, so unequal windows)
};

template <class T>
void run_case(const Case& c) {
  int most_extra = 0, extra_pages = 0;
  for (int e : c.extra) most_extra = std::max(most_extra, e), extra_pages += e / c.page_size + 1;
  const PagedPoolConfig cfg{.layout = {c.shape.heads_kv, c.shape.head_dim, c.dtype}, .page_size = c.page_size,
                            .num_pages = static_cast<std::int32_t>(shared_prefix_pages(c.spec, c.page_size)) + extra_pages,
                            .max_seq_len = c.spec.length() + most_extra,
                            .max_seqs = c.spec.batch + static_cast<std::int32_t>(c.spec.group_sizes().size()) + 1,
                            .page_order = c.order, .order_seed = 5};
  PagedPool device(cfg, make_device_backend(nullptr));
  PagedPoolConfig host_cfg = cfg;
  host_cfg.page_order = PageOrder::sequential;
  PagedPool host(host_cfg, make_host_backend());
  std::mt19937_64 rng(17);
  const std::size_t row = static_cast<std::size_t>(c.shape.heads_kv) * c.shape.head_dim;
  PagedPool* pools[] = {&device, &host};
  // FP8: the generator's bytes (one seed per segment) under per-KV-head scales shared by all segments.
  const sweeps::KvScales scales = sweeps::KvScales::for_point(c.dtype, c.shape.heads_kv, 23);
  std::uint64_t fill_seed = 0;
  const auto fill = [&](std::int64_t len, void* k, void* v) {
    if constexpr (dtype_is_fp8(dtype_of<T>::value)) {
      const std::size_t n = row * len;  // (H_kv, len, D)
      const int hkv = c.shape.heads_kv, d = c.shape.head_dim;
      ++fill_seed;
      sweeps::fill_kv_host<T>(std::span<T>(static_cast<T*>(k), n), false, fill_seed, 0, hkv, len, d);
      sweeps::fill_kv_host<T>(std::span<T>(static_cast<T*>(v), n), true, fill_seed, 0, hkv, len, d);
    } else {
      const auto kv = testing::random_values<T>(2 * row * len, rng);
      std::copy(kv.begin(), kv.begin() + row * len, static_cast<T*>(k));
      std::copy(kv.begin() + row * len, kv.end(), static_cast<T*>(v));
    }
  };
  const auto handles = build_shared_prefix_batch(
      pools, c.spec, [&](SharedSegment, int, std::int64_t len, void* k, void* v) { fill(len, k, v); });
  SharedPrefixLayout layout = shared_prefix_layout(c.spec, c.page_size);
  // Unequal lengths: the same extra own tokens appended to sequence s in both pools.
  for (std::size_t s = 0; s < c.extra.size(); ++s) {
    if (c.extra[s] == 0) continue;
    std::vector<T> k(row * c.extra[s]), v(row * c.extra[s]);
    fill(c.extra[s], k.data(), v.data());
    for (int p = 0; p < 2; ++p) pools[p]->append_tokens(handles[p][s], k.data(), v.data(), c.extra[s]);
    layout.lengths[s] += c.extra[s];
  }
  auto view = device.batch<T>(handles[0]);
  view.kv = scales.attach(view.kv, true);
  device.backend().synchronize();

  const int n = c.spec.batch;
  const std::size_t hd = static_cast<std::size_t>(c.shape.heads_q) * c.shape.head_dim;
  const auto q_host = testing::random_values<float>(n * hd, rng);
  DeviceBuffer<float> q(q_host), o(n * hd), lse(static_cast<std::size_t>(n) * c.shape.heads_q);
  const std::vector<float> sinks_host = c.variant.sinks ? sink_logits(c.shape.heads_q, 29) : std::vector<float>{};
  DeviceBuffer<float> sinks(c.variant.sinks ? sinks_host : std::vector<float>{0.f});
  const SharedPrefixProblem problem{c.shape, c.dtype, q.get(), o.get(), lse.get(),
                                    row_attention_variant(c.variant, sinks.get())};
  const auto why = shared_prefix_unsupported_reason(problem, layout);
  ASSERT_FALSE(why.has_value()) << *why;
  SharedPrefixPlan plan;
  ASSERT_EQ(plan_shared_prefix<T>(view.kv, problem, layout, {}, &plan), cudaSuccess);
  // A prefix phase wherever some sequence's window reaches into some level.
  bool seen = false;
  for (const SharedLevel& l : layout.levels)
    for (int s = l.first_seq; s < l.first_seq + l.num_seqs; ++s)
      seen = seen || c.variant.window == 0 || layout.lengths[s] - c.variant.window < l.token_end;
  EXPECT_EQ(plan.has_prefix, seen);
  DeviceBuffer<std::uint8_t> workspace(plan.workspace_bytes);
  o.poison();
  lse.poison();
  workspace.poison();
  SharedPrefixStreams streams;
  if (c.overlap) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&streams.aux, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&streams.fork, cudaEventDisableTiming), cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&streams.join, cudaEventDisableTiming), cudaSuccess);
  }
  ASSERT_EQ(init_shared_prefix_workspace(plan, workspace.get(), nullptr), cudaSuccess);
  ASSERT_EQ(run_shared_prefix<T>(view.kv, problem, plan, workspace.get(), nullptr, c.overlap ? &streams : nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  if (c.overlap) {
    cudaEventDestroy(streams.join);
    cudaEventDestroy(streams.fork);
    cudaStreamDestroy(streams.aux);
  }
  const auto o_host = o.download(), lse_host = lse.download();
  auto ref_view = host.batch<T>(handles[1]);
  ref_view.kv = scales.attach(ref_view.kv, false);
  for (int s = 0; s < n; ++s) {
    const auto ref = reference_decode_variant(ref_view.kv, s, layout.lengths[s],
                                              std::span<const float>(q_host.data() + s * hd, hd), c.shape, c.variant,
                                              std::span<const float>(sinks_host));
    const auto r = verify_decode(std::span<const float>(o_host.data() + s * hd, hd),
                                 std::span<const float>(lse_host.data() + s * c.shape.heads_q, c.shape.heads_q), ref,
                                 c.dtype);
    ASSERT_TRUE(r.passed) << c.name << ": sequence " << s << ": " << r.summary();
  }
}

class SharedPrefixGpu : public ::testing::TestWithParam<Case> {};

TEST_P(SharedPrefixGpu, MatchesTheReferenceOverWholeSequences) {
  DB_REQUIRE_GPU();
  const Case& c = GetParam();
  switch (c.dtype) {
    case DType::fp32: return run_case<float>(c);
    case DType::fp16: return run_case<__half>(c);
    case DType::bf16: return run_case<__nv_bfloat16>(c);
    case DType::fp8_e4m3: return run_case<__nv_fp8_e4m3>(c);
    case DType::fp8_e5m2: return run_case<__nv_fp8_e5m2>(c);
  }
}

SharedPrefixSpec one_level(int n, std::int64_t p, std::int64_t s) { return {.batch = n, .prefix_len = p, .suffix_len = s}; }

INSTANTIATE_TEST_SUITE_P(
    Cases, SharedPrefixGpu,
    ::testing::Values(
        Case{"prefix_not_page_multiple", one_level(5, 100, 7)},
        Case{"prefix_below_one_page", one_level(4, 10, 3)},
        Case{"suffix_one", one_level(16, 64, 1)},
        Case{"one_sequence", one_level(1, 300, 20)},
        Case{"batch_19", one_level(19, 200, 5)},
        Case{"gqa_group_4", one_level(6, 130, 9), 16, {16, 4, 128}},
        Case{"gqa_group_8", one_level(6, 130, 9), 16, {16, 2, 128}},
        Case{"mqa_group_8_one_kv_head", one_level(3, 90, 4), 16, {8, 1, 128}},
        Case{"head_dim_64", one_level(6, 77, 5), 16, {4, 4, 64}},
        Case{"head_dim_256", one_level(6, 77, 5), 16, {4, 4, 256}},
        // Head dims on the d = 128 kernels with the tail masked (kernels/decode_problem.hpp).
        Case{"head_dim_96_gqa_group_4", one_level(6, 130, 9), 16, {16, 4, 96}},
        Case{"head_dim_96_two_levels_bf16", {.batch = 9, .prefix_len = 70, .group_prefix_len = 20, .groups = 2, .suffix_len = 30},
             16, {8, 8, 96}, DType::bf16},
        Case{"head_dim_80_fp8_e4m3_gqa", one_level(5, 100, 7), 16, {8, 2, 80}, DType::fp8_e4m3},
        Case{"head_dim_96_fp32", one_level(6, 120, 11), 16, {8, 8, 96}, DType::fp32},
        Case{"sequential_pages", one_level(8, 160, 16), 16, {8, 8, 128}, DType::fp16, PageOrder::sequential},
        Case{"two_levels_unequal_groups", {.batch = 10, .prefix_len = 50, .group_prefix_len = 40, .groups = 3, .suffix_len = 9}},
        Case{"two_levels_a_group_of_one", {.batch = 5, .prefix_len = 64, .group_prefix_len = 33, .groups = 4, .suffix_len = 2},
             4, {8, 2, 64}},
        Case{"fp32", one_level(6, 120, 11), 16, {8, 8, 128}, DType::fp32},
        Case{"bf16", one_level(6, 120, 11), 16, {8, 4, 128}, DType::bf16},
        Case{"bf16_two_levels_one_stream", {.batch = 9, .prefix_len = 70, .group_prefix_len = 20, .groups = 2, .suffix_len = 30},
             16, {8, 8, 128}, DType::bf16, PageOrder::shuffled, false},
        Case{"fp8_e4m3_two_levels_gqa", {.batch = 9, .prefix_len = 70, .group_prefix_len = 20, .groups = 2, .suffix_len = 30},
             16, {16, 4, 128}, DType::fp8_e4m3},
        Case{"fp8_e5m2_mqa_head_dim_64", one_level(6, 130, 9), 16, {8, 1, 64}, DType::fp8_e5m2},
        Case{"fp8_e4m3_head_dim_256_one_stream", one_level(5, 100, 7), 16, {8, 2, 256}, DType::fp8_e4m3,
             PageOrder::shuffled, false},
        Case{"fp32_two_levels_gqa", {.batch = 7, .prefix_len = 33, .group_prefix_len = 31, .groups = 3, .suffix_len = 1},
             8, {8, 2, 256}, DType::fp32},
        // The attention variants (FP16 / BF16: the suffix phase's variant kernels). Sinks: in the
        // suffix phase only, merged with prefix states that hold none.
        Case{"sinks", one_level(6, 120, 11), 16, {8, 2, 128}, DType::fp16, PageOrder::shuffled, true, {.sinks = true}},
        Case{"sinks_bf16_two_levels_mha", {.batch = 9, .prefix_len = 70, .group_prefix_len = 20, .groups = 2, .suffix_len = 30},
             16, {8, 8, 128}, DType::bf16, PageOrder::shuffled, true, {.sinks = true}},
        // Lengths 120, 123, 127, 136, 141 over the level [0, 96): window 50 starts inside it for
        // each (five items a KV head); window 40 at 80, 83, 87 (inside), 96 (the level's end) and
        // 101 (in the suffix); window 16 in every suffix (no prefix phase at all); window 1.
        Case{"window_inside_prefix", one_level(5, 100, 20), 16, {8, 2, 128}, DType::fp16, PageOrder::shuffled, true,
             {.window = 50}, {0, 3, 7, 16, 21}},
        Case{"window_at_level_end_bf16", one_level(5, 100, 20), 16, {8, 2, 128}, DType::bf16, PageOrder::shuffled, true,
             {.window = 40}, {0, 3, 7, 16, 21}},
        Case{"window_inside_suffix", one_level(5, 100, 20), 16, {8, 2, 128}, DType::fp16, PageOrder::shuffled, true,
             {.window = 16}, {0, 3, 7, 16, 21}},
        Case{"window_one_mha", one_level(4, 64, 5), 16, {8, 8, 128}, DType::fp16, PageOrder::shuffled, true, {.window = 1}},
        // Two levels [0, 48) and [48, 80) (groups of 4, 3, 3), lengths 99 to 139: window 51 starts
        // at 48 (level 1's start) for the sequences of 99 tokens, inside level 1 or past it for the
        // others; window 70 inside level 0 for some; window 15 (a page less one) in the suffixes.
        Case{"window_two_levels_unequal_groups", {.batch = 10, .prefix_len = 50, .group_prefix_len = 40, .groups = 3, .suffix_len = 9},
             16, {8, 2, 128}, DType::fp16, PageOrder::shuffled, true, {.window = 51}, {0, 1, 2, 30, 0, 5, 40, 0, 16, 17}},
        Case{"window_two_levels_gqa_bf16", {.batch = 10, .prefix_len = 50, .group_prefix_len = 40, .groups = 3, .suffix_len = 9},
             16, {16, 4, 128}, DType::bf16, PageOrder::shuffled, true, {.window = 70}, {0, 1, 2, 30, 0, 5, 40, 0, 16, 17}},
        Case{"window_page_less_one_two_levels", {.batch = 10, .prefix_len = 50, .group_prefix_len = 40, .groups = 3, .suffix_len = 9},
             16, {8, 2, 128}, DType::fp16, PageOrder::shuffled, true, {.window = 15}},
        Case{"window_sinks_bf16_one_stream", one_level(6, 200, 30), 16, {8, 2, 128}, DType::bf16, PageOrder::shuffled,
             false, {.window = 100, .sinks = true}, {0, 50, 3, 0, 77, 12}},
        // 96 rows an item (FP16 d 128: the warpgroup-MMA prefix kernel on Hopper) from token 540,
        // inside a page and a tile.
        Case{"window_fp16_rows_96", one_level(24, 2000, 40), 16, {32, 8, 128}, DType::fp16, PageOrder::shuffled, true,
             {.window = 1500}},
        Case{"window_sinks_head_dim_96_pages_of_8", {.batch = 7, .prefix_len = 33, .group_prefix_len = 31, .groups = 3, .suffix_len = 6},
             8, {8, 2, 96}, DType::fp16, PageOrder::shuffled, true, {.window = 40, .sinks = true}, {0, 9, 1, 20, 4, 0, 2}},
        // Soft-cap in both phases (the prefix phase on the row kernel's variant twin over gathered
        // q rows): 50 (barely bends these logits) and 5 (bends them hard), one and two levels, MHA
        // (the suffix on the CUDA-core twin), BF16 at head dim 64, with a window and sinks.
        Case{"soft_cap_50", one_level(6, 120, 11), 16, {8, 2, 128}, DType::fp16, PageOrder::shuffled, true,
             {.logits_soft_cap = 50}},
        Case{"soft_cap_5_bf16_two_levels", {.batch = 9, .prefix_len = 70, .group_prefix_len = 20, .groups = 2, .suffix_len = 30},
             16, {8, 2, 128}, DType::bf16, PageOrder::shuffled, true, {.logits_soft_cap = 5}},
        Case{"soft_cap_5_mha_one_stream", one_level(5, 300, 20), 16, {8, 8, 128}, DType::fp16, PageOrder::shuffled, false,
             {.logits_soft_cap = 5}},
        Case{"soft_cap_50_bf16_head_dim_64", {.batch = 10, .prefix_len = 50, .group_prefix_len = 40, .groups = 3, .suffix_len = 9},
             16, {16, 2, 64}, DType::bf16, PageOrder::shuffled, true, {.logits_soft_cap = 50}},
        Case{"soft_cap_5_window_sinks_two_levels", {.batch = 10, .prefix_len = 50, .group_prefix_len = 40, .groups = 3, .suffix_len = 9},
             16, {8, 2, 128}, DType::fp16, PageOrder::shuffled, true, {.window = 70, .sinks = true, .logits_soft_cap = 5},
             {0, 1, 2, 30, 0, 5, 40, 0, 16, 17}},
        // 130 rows an item (FP16 d 128: the warpgroup-MMA prefix kernel on Hopper, two row blocks)
        // over 16 tiles, one stream, split by the split rule: where a decode grid of the same
        // kernel merges its 2-8 splits in a cluster, prefix items, planned before their array
        // exists, must not (RowAttentionProblem::explicit_items: the h100 preset's N 256 points
        // failed so at 8d21d9e). 8 items x 2 row blocks take 8 splits on an H100 (16 clusters of 8,
        // more than fit at once), 32 x 2 take 2 (64 clusters of 2, which fit).
        Case{"fp16_rows_130_split_prefix_one_stream", one_level(130, 1024, 16), 16, {8, 8, 128}, DType::fp16,
             PageOrder::shuffled, false},
        Case{"fp16_rows_130_two_splits_prefix_one_stream", one_level(130, 1024, 16), 16, {32, 32, 128}, DType::fp16,
             PageOrder::shuffled, false},
        Case{"soft_cap_5_fp16_rows_96", one_level(24, 600, 20), 16, {32, 8, 128}, DType::fp16, PageOrder::shuffled, true,
             {.logits_soft_cap = 5}},
        Case{"soft_cap_50_window_bf16_long_prefix", one_level(24, 2000, 40), 16, {32, 8, 128}, DType::bf16,
             PageOrder::shuffled, true, {.window = 1500, .logits_soft_cap = 50}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The device fill writes what the host fill uploads, token for token through each pool's own block
// tables (two pools with different page orders): every prefix level, the partial pages copied on
// write, and the suffixes; shared pages are written once, by their level's first sequence.
TEST(SharedPrefixFillGpu, DeviceFillEqualsHostFill) {
  DB_REQUIRE_GPU();
  const SharedPrefixSpec spec{.batch = 7, .prefix_len = 37, .group_prefix_len = 21, .groups = 3, .suffix_len = 11};
  const int page_size = 16;
  const KVLayout layout{2, 64, DType::bf16};
  const auto make = [&](std::uint64_t order_seed) {
    const PagedPoolConfig cfg{.layout = layout, .page_size = page_size,
                              .num_pages = static_cast<std::int32_t>(shared_prefix_pages(spec, page_size)),
                              .max_seq_len = spec.length(),
                              .max_seqs = spec.batch + static_cast<std::int32_t>(spec.group_sizes().size()) + 1,
                              .page_order = PageOrder::shuffled, .order_seed = order_seed};
    return std::make_unique<PagedPool>(cfg, make_device_backend(nullptr));
  };
  const std::uint64_t seed = 11;
  auto uploaded = make(3), in_place = make(4);
  PagedPool* up[] = {uploaded.get()};
  const auto up_handles = build_shared_prefix_batch(up, spec, [&](SharedSegment kind, int index, std::int64_t len, void* k, void* v) {
    sweeps::fill_shared_segment_host(static_cast<__nv_bfloat16*>(k), false, kind, index, len, layout.heads_kv, layout.head_dim, seed);
    sweeps::fill_shared_segment_host(static_cast<__nv_bfloat16*>(v), true, kind, index, len, layout.heads_kv, layout.head_dim, seed);
  });
  PagedPool* ip[] = {in_place.get()};
  const auto ip_handles = build_shared_prefix_batch(ip, spec, {});
  const SharedPrefixLayout shared = shared_prefix_layout(spec, page_size);
  const auto view = in_place->batch<__nv_bfloat16>(ip_handles[0]);
  ASSERT_EQ(sweeps::fill_shared_prefix_device(view.kv, view.seq_lens_device, spec, shared, layout.heads_kv,
                                              layout.head_dim, seed, in_place->stream()),
            cudaSuccess);
  uploaded->backend().synchronize();
  const std::size_t token = layout.token_bytes();  // read_token writes (H_kv, D)
  std::vector<std::byte> k_a(token), v_a(token), k_b(token), v_b(token), k_first(token), v_first(token);
  for (int s = 0; s < spec.batch; ++s)
    for (std::int64_t t = 0; t < spec.length(); ++t) {
      uploaded->read_token(up_handles[0][s], t, k_a.data(), v_a.data());
      in_place->read_token(ip_handles[0][s], t, k_b.data(), v_b.data());
      ASSERT_EQ(k_a, k_b) << "K of sequence " << s << " token " << t;
      ASSERT_EQ(v_a, v_b) << "V of sequence " << s << " token " << t;
      if (t < spec.prefix_len) {  // the prefix reads the same in every sequence (copied tail included)
        in_place->read_token(ip_handles[0][0], t, k_first.data(), v_first.data());
        ASSERT_EQ(k_b, k_first) << "prefix token " << t << " of sequence " << s;
        ASSERT_EQ(v_b, v_first) << "prefix token " << t << " of sequence " << s;
      }
    }
}

// Both runners on one small shared-prefix point, BF16 and FP8 (per-head scales), every data and
// verification path: device fill and reference (the default: all sequences), host fill, and the
// host mirror with the CPU reference (--verify cpu): each verified, timed, with a bound.
TEST(SharedPrefixRunnerGpu, EveryDataAndVerifyPathRunsAndVerifies) {
  DB_REQUIRE_GPU();
  const nlohmann::json params = {{"layout", "paged"},   {"dtype", "bf16"},       {"heads_q", 8},
                                 {"heads_kv", 2},       {"head_dim", 64},        {"batch", 5},
                                 {"prefix_len", 45},    {"group_prefix_len", 17}, {"groups", 2},
                                 {"suffix_len", 3},     {"T", 65},               {"page_size", 16},
                                 {"page_order", "shuffled"}, {"timing", "hot"}, {"seed", 9},
                                 {"counters", false}};  // the CUPTI pass is BothKernelsRunAndVerifyAPoint's
  auto shared = sweeps::make_kernel_runner(KernelKind::shared_prefix);
  auto batch = sweeps::make_kernel_runner(KernelKind::batch_decode);
  for (const char* dtype : {"bf16", "fp8_e4m3"})
  for (const auto& [verify_on_host, fill_on_host] : {std::pair{false, false}, {false, true}, {true, false}}) {
    sweeps::RunContext ctx;
    ctx.verify_on_host = verify_on_host;
    ctx.fill_on_host = fill_on_host;
    ctx.ceilings = {{"dram_read", {{"value", 3000.0}}}, {"fp16_tensor", {{"value", 600.0}}}};
    for (auto* runner : {shared.get(), batch.get()}) {
      nlohmann::json p = params;
      p["kernel"] = runner->name();
      p["dtype"] = dtype;
      const sweeps::Point point{"e", p, "e/" + runner->name(), 0};
      const nlohmann::json r = runner->run(point, ctx);
      SCOPED_TRACE(runner->name() + " " + dtype + (verify_on_host ? " verify cpu" : " verify gpu") +
                   (fill_on_host ? " fill host" : " fill device"));
      EXPECT_EQ(r.value("status", ""), std::string(kStatusOk)) << r.dump();
      EXPECT_EQ(r["verification"]["method"], verify_on_host ? "cpu" : "gpu");
      EXPECT_EQ(r["verification"]["sequences_checked"], 5);
      EXPECT_GT(r["verification"]["max_abs_error"].get<double>(), 0.0);  // real data, a real comparison
    }
  }
}

// Both runners on shared-prefix points with a window (starting inside the shared prefix, 60 of
// its 80 tokens unseen) and sinks, BF16: verified on the device and on the host (the variant
// references), with the windowed model: the level's last 20 tokens once and 5 suffixes of 24.
TEST(SharedPrefixRunnerGpu, WindowAndSinksVerifyOnBothReferences) {
  DB_REQUIRE_GPU();
  const nlohmann::json params = {{"layout", "paged"},  {"dtype", "bf16"},      {"heads_q", 8},
                                 {"heads_kv", 2},      {"head_dim", 128},      {"batch", 5},
                                 {"prefix_len", 90},   {"suffix_len", 14},     {"page_size", 16},
                                 {"window", 44},       {"sinks", true},        {"page_order", "shuffled"},
                                 {"timing", "hot"},    {"seed", 5},            {"counters", false}};
  auto shared = sweeps::make_kernel_runner(KernelKind::shared_prefix);
  auto batch = sweeps::make_kernel_runner(KernelKind::batch_decode);
  for (const bool verify_on_host : {false, true}) {
    sweeps::RunContext ctx;
    ctx.verify_on_host = verify_on_host;
    ctx.ceilings = {{"dram_read", {{"value", 3000.0}}}, {"fp16_tensor", {{"value", 600.0}}}};
    for (auto* runner : {shared.get(), batch.get()}) {
      nlohmann::json p = params;
      p["kernel"] = runner->name();
      const sweeps::Point point{"e", p, "e/" + runner->name(), 0};
      SCOPED_TRACE(runner->name() + (verify_on_host ? " verify cpu" : " verify gpu"));
      ASSERT_FALSE(runner->cannot_run(point).has_value()) << *runner->cannot_run(point);
      const nlohmann::json r = runner->run(point, ctx);
      EXPECT_EQ(r.value("status", ""), std::string(kStatusOk)) << r.dump();
      EXPECT_EQ(r["verification"]["sequences_checked"], 5);
      EXPECT_GT(r["verification"]["max_abs_error"].get<double>(), 0.0);
      // Lengths 104, level [0, 80), suffixes [80, 104): the window [60, 104) reads the level's
      // [60, 80) once (shared_prefix) and 5 x 24 own tokens; 256 bytes a token and KV head pair.
      if (runner == shared.get()) {
        EXPECT_DOUBLE_EQ(r["bound"]["unique_kv_bytes"].get<double>(), 2.0 * (20 + 5 * 24) * 2 * 128 * 2);
      }
    }
  }
}

// Both runners on one small shared-prefix point: verified over every sequence, timed, a bound.
TEST(SharedPrefixRunnerGpu, BothKernelsRunAndVerifyAPoint) {
  DB_REQUIRE_GPU();
  const nlohmann::json params = {{"layout", "paged"},   {"dtype", "fp16"},       {"heads_q", 8},
                                 {"heads_kv", 2},       {"head_dim", 128},       {"batch", 6},
                                 {"prefix_len", 100},   {"group_prefix_len", 40}, {"groups", 4},
                                 {"suffix_len", 20},    {"T", 160},              {"page_size", 16},
                                 {"page_order", "shuffled"}, {"timing", "hot"}, {"seed", 3}};
  auto shared = sweeps::make_kernel_runner(KernelKind::shared_prefix);
  auto batch = sweeps::make_kernel_runner(KernelKind::batch_decode);
  sweeps::RunContext ctx;
  ctx.ceilings = {{"dram_read", {{"value", 3000.0}}}, {"fp16_tensor", {{"value", 600.0}}}};
  for (auto* runner : {shared.get(), batch.get()}) {
    nlohmann::json p = params;
    p["kernel"] = runner->name();
    const sweeps::Point point{"e", p, "e/" + runner->name(), 0};
    ASSERT_FALSE(runner->cannot_run(point).has_value()) << *runner->cannot_run(point);
    const nlohmann::json r = runner->run(point, ctx);
    EXPECT_EQ(r.value("status", ""), std::string(kStatusOk)) << r.dump();
    EXPECT_EQ(r["verification"]["sequences_checked"], 6);
    EXPECT_GT(r["bound"]["bound_us"].get<double>(), 0.0);
    EXPECT_GT(r["bound"]["median_over_bound"].get<double>(), 0.0);
  }
}

}  // namespace
}  // namespace decode_bench
