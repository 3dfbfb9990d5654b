#include "sweeps/decode_state.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/cuda_check.hpp"
#include "pools/contiguous_pool.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "pools/windowed_pages.hpp"
#include "sweeps/decode_fill.hpp"

namespace decode_bench::sweeps {
namespace {

// The axis table has already checked the value.
PageOrder page_order_of(const std::string& s) { return parse_page_order(s).value_or(PageOrder::sequential); }

std::unique_ptr<KVPool> make_pool(const DecodePoint& d, cudaStream_t stream) {
  const KVLayout layout{d.shape.heads_kv, d.shape.head_dim, d.dtype};
  const int batch = static_cast<int>(d.lengths.size());
  if (d.paged) {
    PagedPoolConfig cfg;
    cfg.layout = layout;
    cfg.page_size = d.page_size;
    std::int64_t pages = 0;
    for (auto len : d.lengths) pages += (len + d.page_size - 1) / d.page_size;
    cfg.num_pages = static_cast<std::int32_t>(std::max<std::int64_t>(pages, 1));
    cfg.max_seq_len = std::max<std::int64_t>(d.max_len(), 1);
    cfg.max_seqs = batch;
    cfg.page_order = page_order_of(d.page_order);
    cfg.order_seed = d.seed + 1;
    return std::make_unique<PagedPool>(cfg, make_device_backend(stream));
  }
  ContiguousPoolConfig cfg;
  cfg.layout = layout;
  cfg.max_seq_len = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(d.max_len() * d.fragmentation)));
  cfg.max_seqs = batch;
  return std::make_unique<ContiguousPool>(cfg, make_device_backend(stream));
}

// K and V of every sequence written in place through the batch view, on the pool's stream (where
// the view's block-table gather runs).
template <class T>
void fill_on_device(const DecodePoint& d, DecodeState<T>& st) {
  const int batch = static_cast<int>(d.lengths.size());
  const auto fill = [&](const auto& view) {
    DB_CUDA_CHECK(fill_kv_device(view.kv, view.seq_lens_device, batch, view.max_len, d.shape.heads_kv,
                                 d.shape.head_dim, d.seed, st.pool->stream()));
  };
  if (d.paged)
    fill(static_cast<PagedPool&>(*st.pool).batch<T>(st.handles));
  else
    fill(static_cast<ContiguousPool&>(*st.pool).batch<T>(st.handles));
}

}  // namespace

template <class T>
DecodeState<T> build_decode_state(const DecodePoint& d, const DecodeDataOptions& options, cudaStream_t stream,
                                  PhaseSeconds& phases) {
  DecodeState<T> st;
  const int batch = static_cast<int>(d.lengths.size());
  const std::size_t row = static_cast<std::size_t>(d.shape.heads_kv) * d.shape.head_dim;
  // q_len query rows a sequence (the attention variants), generated as the rows of batch x q_len
  // sequences: query token i of sequence b is generated row b x q_len + i.
  const int q_seqs = batch * d.variant.q_len;
  const std::size_t q_elems = static_cast<std::size_t>(q_seqs) * d.shape.heads_q * d.shape.head_dim;
  const bool host_fill = options.fill_on_host;
  const bool host_copy = options.host_copy;
  {
    PhaseTimer phase(phases, kPhasePoolBuild);
    st.pool = make_pool(d, stream);
    st.q = DeviceBuffer<float>(q_elems);
    if (!host_fill) {  // reserve only: no host image, no upload
      for (int b = 0; b < batch; ++b) st.handles.push_back(st.pool->admit(nullptr, nullptr, d.lengths[b]));
      st.pool->backend().synchronize();
    }
  }
  PhaseTimer phase(phases, kPhaseDataFill);
  if constexpr (kIsFp8<T>) {  // the generator's bytes are in units of the format; these give them magnitudes
    st.scales = KvScales::for_point(d.dtype, d.shape.heads_kv, d.seed);
  }
  if (host_fill || host_copy) {
    for (int b = 0; b < batch; ++b) {
      st.k.emplace_back(row * d.lengths[b]);
      st.v.emplace_back(row * d.lengths[b]);
      fill_kv_host<T>(st.k.back(), false, d.seed, b, d.shape.heads_kv, d.lengths[b], d.shape.head_dim);
      fill_kv_host<T>(st.v.back(), true, d.seed, b, d.shape.heads_kv, d.lengths[b], d.shape.head_dim);
      if (host_fill)
        st.handles.push_back(st.pool->admit(std::span<const T>(st.k.back()), std::span<const T>(st.v.back()), d.lengths[b]));
    }
    st.q_host.resize(q_elems);
    fill_q_host(st.q_host, d.seed, q_seqs, d.shape.heads_q, d.shape.head_dim);
  }
  if (host_fill) {
    st.q.upload(st.q_host);
  } else {
    fill_on_device(d, st);
    DB_CUDA_CHECK(fill_q_device(st.q.get(), d.seed, q_seqs, d.shape.heads_q, d.shape.head_dim, st.pool->stream()));
  }
  if (d.paged) {
    auto& pool = static_cast<PagedPool&>(*st.pool);
    for (const SequenceHandle h : st.handles) st.pages += static_cast<std::int64_t>(pool.block_table(h).size());
    if (options.release_behind_window && d.variant.window > 0) {
      // The filled pool as a windowed layer holds it: one staged copy of the table words, not one
      // upload per released entry.
      pool.defer_metadata_writes(true);
      for (const SequenceHandle h : st.handles)
        st.pages_released += release_behind_window(pool, h, d.variant.window, d.variant.q_len);
      pool.defer_metadata_writes(false);
    }
  }
  if (!host_copy) {  // the host image was only the upload's source
    st.k.clear();
    st.v.clear();
  }
  st.pool->backend().synchronize();
  return st;
}

template DecodeState<float> build_decode_state<float>(const DecodePoint&, const DecodeDataOptions&, cudaStream_t,
                                                      PhaseSeconds&);
template DecodeState<__half> build_decode_state<__half>(const DecodePoint&, const DecodeDataOptions&, cudaStream_t,
                                                        PhaseSeconds&);
template DecodeState<__nv_bfloat16> build_decode_state<__nv_bfloat16>(const DecodePoint&, const DecodeDataOptions&,
                                                                      cudaStream_t, PhaseSeconds&);
template DecodeState<__nv_fp8_e4m3> build_decode_state<__nv_fp8_e4m3>(const DecodePoint&, const DecodeDataOptions&,
                                                                      cudaStream_t, PhaseSeconds&);
template DecodeState<__nv_fp8_e5m2> build_decode_state<__nv_fp8_e5m2>(const DecodePoint&, const DecodeDataOptions&,
                                                                      cudaStream_t, PhaseSeconds&);

}  // namespace decode_bench::sweeps
