#include "sweeps/shared_prefix_state.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/cuda_check.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "pools/memory_backend.hpp"
#include "pools/shared_prefix_batch.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/shared_prefix_fill.hpp"

namespace decode_bench::sweeps {
namespace {

// Reference work (tokens x query heads x D per sequence) verified at most per point. Small points
// verify every sequence; the cascade's largest (1024 x 33K tokens x 32 heads) would take the
// float64 reference hours, so those verify the first and last sequence of every group and then
// sequences in a seeded random order until the budget is spent (the JSON records how many).
constexpr double kVerifyBudget = 8.0e9;

}  // namespace

template <class T>
SharedPrefixState<T> build_shared_prefix_state(const SharedPrefixPoint& sp, const SharedPrefixDataOptions& options,
                                               cudaStream_t stream) {
  const DecodePoint& d = sp.decode;
  SharedPrefixState<T> st;
  PagedPoolConfig cfg;
  cfg.layout = {d.shape.heads_kv, d.shape.head_dim, d.dtype};
  cfg.page_size = d.page_size;
  cfg.num_pages = static_cast<std::int32_t>(shared_prefix_pages(sp.spec, d.page_size));
  cfg.max_seq_len = sp.spec.length();
  cfg.max_seqs = sp.spec.batch + static_cast<std::int32_t>(sp.spec.group_sizes().size()) + 1;
  cfg.page_order = parse_page_order(d.page_order).value_or(PageOrder::sequential);
  cfg.order_seed = d.seed + 1;
  st.device_pool = std::make_unique<PagedPool>(cfg, make_device_backend(stream));
  std::vector<PagedPool*> pools{st.device_pool.get()};
  if (options.host_mirror) {
    PagedPoolConfig host_cfg = cfg;
    host_cfg.page_order = PageOrder::sequential;  // its own placement: the reference reads by block table
    st.host_pool = std::make_unique<PagedPool>(host_cfg, make_host_backend());
    pools.push_back(st.host_pool.get());
  }
  SharedSegmentFill fill;  // empty: pages reserved, data written on the device below
  if (options.host_fill || options.host_mirror)
    fill = [&](SharedSegment kind, int index, std::int64_t len, void* k, void* v) {
      fill_shared_segment_host(static_cast<T*>(k), false, kind, index, len, d.shape.heads_kv, d.shape.head_dim, d.seed);
      fill_shared_segment_host(static_cast<T*>(v), true, kind, index, len, d.shape.heads_kv, d.shape.head_dim, d.seed);
    };
  auto handles = build_shared_prefix_batch(pools, sp.spec, fill);
  st.device_handles = std::move(handles[0]);
  if (options.host_mirror) st.host_handles = std::move(handles[1]);
  st.layout = shared_prefix_layout(sp.spec, d.page_size);
  // The layout is derived from the spec; the pool is what the kernels read. They must agree: every
  // sequence of a level holds the same physical pages over the level's tokens.
  for (const SharedLevel& level : st.layout.levels)
    for (int s = level.first_seq + 1; s < level.first_seq + level.num_seqs; ++s) {
      const auto a = st.device_pool->block_table(st.device_handles[level.first_seq]);
      const auto b = st.device_pool->block_table(st.device_handles[s]);
      if (!std::equal(a.begin() + level.token_begin / d.page_size, a.begin() + level.token_end / d.page_size,
                      b.begin() + level.token_begin / d.page_size))
        throw std::logic_error("shared-prefix batch: sequence " + std::to_string(s) +
                               " does not share the pages of its level's tokens [" +
                               std::to_string(level.token_begin) + ", " + std::to_string(level.token_end) + ")");
    }
  // FP8: the generator's bytes are in units of the format; the scales give them their magnitude.
  st.scales = KvScales::for_point(d.dtype, d.shape.heads_kv, d.seed);
  const std::size_t q_elems = static_cast<std::size_t>(sp.spec.batch) * d.shape.heads_q * d.shape.head_dim;
  st.q = DeviceBuffer<float>(q_elems);
  if (!fill) {
    // On the pool's stream, where batch()'s CSR gather and the pool's uploads run (as
    // sweeps/decode_state.cpp fills): `stream`, the legacy default one in a sweep, does not wait for
    // it, and a fill there read block tables still in flight under the GPU test tier's concurrent
    // processes on an H100 (illegal addresses, unfilled pages). The synchronize below ends it.
    const auto in_place = st.device_pool->template batch<T>(st.device_handles);
    DB_CUDA_CHECK(fill_shared_prefix_device(in_place.kv, in_place.seq_lens_device, sp.spec, st.layout,
                                            d.shape.heads_kv, d.shape.head_dim, d.seed,
                                            st.device_pool->stream()));
  }
  if (options.host_mirror || options.host_fill) {
    st.q_host.resize(q_elems);
    fill_q_host(st.q_host, d.seed, sp.spec.batch, d.shape.heads_q, d.shape.head_dim);
    st.q.upload(st.q_host);
    if (!options.host_mirror) st.q_host.clear();
  } else {
    DB_CUDA_CHECK(fill_q_device(st.q.get(), d.seed, sp.spec.batch, d.shape.heads_q, d.shape.head_dim, stream));
  }
  st.device_pool->backend().synchronize();
  return st;
}

// Which sequences to verify, in order, within kVerifyBudget: every group's first and last, then
// the rest in a seeded random order.
std::vector<int> shared_prefix_sequences_to_verify(const SharedPrefixPoint& sp) {
  const int n = sp.spec.batch;
  std::vector<int> order;
  std::vector<bool> taken(n, false);
  const auto take = [&](int s) {
    if (!taken[s]) order.push_back(s);
    taken[s] = true;
  };
  int first = 0;
  for (int size : sp.spec.group_sizes()) {
    take(first);
    take(first + size - 1);
    first += size;
  }
  std::vector<int> rest;
  for (int s = 0; s < n; ++s)
    if (!taken[s]) rest.push_back(s);
  std::shuffle(rest.begin(), rest.end(), std::mt19937_64(sp.decode.seed + 31));
  order.insert(order.end(), rest.begin(), rest.end());
  const double per_seq = static_cast<double>(sp.spec.length()) * sp.decode.shape.heads_q * sp.decode.shape.head_dim;
  const auto affordable = static_cast<std::size_t>(std::max(2.0, std::floor(kVerifyBudget / per_seq)));
  if (order.size() > affordable) order.resize(affordable);
  return order;
}

// The float64 reference over each chosen whole sequence (host pool), in parallel over sequences.
template <class T>
VerificationResult verify_shared_prefix_on_host(const SharedPrefixPoint& sp, const SharedPrefixState<T>& st,
                                                const std::vector<int>& seqs, const std::vector<float>& o,
                                                const std::vector<float>& lse, const std::vector<float>& sinks) {
  const auto host = st.host_pool->template batch<T>(st.host_handles);
  const DecodeShape shape = sp.decode.shape;
  const std::size_t hd = static_cast<std::size_t>(shape.heads_q) * shape.head_dim;
  std::vector<VerificationResult> each(seqs.size());
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < seqs.size();) {
      const int s = seqs[i];
      const auto ref = reference_decode_variant(st.scales.attach(host.kv, false), s, host.lengths_host[s],
                                                std::span<const float>(st.q_host.data() + s * hd, hd), shape,
                                                sp.decode.variant, std::span<const float>(sinks));
      each[i] = verify_decode(std::span<const float>(o.data() + s * hd, hd),
                              std::span<const float>(lse.data() + s * shape.heads_q, shape.heads_q), ref,
                              sp.decode.dtype);
    }
  };
  const unsigned threads = std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, seqs.size()); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  VerificationResult total;
  total.passed = true;
  for (const auto& r : each) accumulate(total, r);
  return total;
}

#define DECODE_BENCH_INSTANTIATE_SHARED_PREFIX_STATE(T)                                                     \
  template SharedPrefixState<T> build_shared_prefix_state<T>(const SharedPrefixPoint&,                     \
                                                             const SharedPrefixDataOptions&, cudaStream_t); \
  template VerificationResult verify_shared_prefix_on_host<T>(const SharedPrefixPoint&,                    \
                                                              const SharedPrefixState<T>&,                 \
                                                              const std::vector<int>&,                     \
                                                              const std::vector<float>&,                   \
                                                              const std::vector<float>&,                   \
                                                              const std::vector<float>&);
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX_STATE(float)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX_STATE(__half)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX_STATE(__nv_bfloat16)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX_STATE(__nv_fp8_e4m3)
DECODE_BENCH_INSTANTIATE_SHARED_PREFIX_STATE(__nv_fp8_e5m2)
#undef DECODE_BENCH_INSTANTIATE_SHARED_PREFIX_STATE

}  // namespace decode_bench::sweeps
