#pragma once
// The K/V a serving trace writes into its pool (kernel = trace), on the device: a server's
// attention layer writes each new token's K and V into the cache slot the pool gave it; here a
// kernel writes the generator's values (kernels/kv_generator.hpp, never 0) keyed by (seed, request,
// KV head, token, dim), so a sequence's data does not depend on where the pool put it or on its
// position in the batch, and a row check can tell any misplaced or overwritten row.
#include <cstdint>

#include <cuda_runtime.h>

namespace decode_bench::sweeps {

// One sequence of a step's batch: its position in the batch view, its request, and the token
// range to write (the whole prompt and first token in the step it was admitted, else the one
// new token; a sequence admitted with a shared prefix starts after it). Rows t < prefix_len are
// the system prompt's, keyed by prefix_key instead of the request, so every sequence of one
// system prompt holds the same values there (shared pages or each slab's own copy).
struct TraceWrite {
  std::int32_t batch_index = 0;
  std::int32_t request = 0;
  std::int32_t from = 0;
  std::int32_t to = 0;
  std::int32_t prefix_len = 0;
  std::int32_t prefix_key = 0;
};

// The generator key of row t of a sequence (host and device agree on it).
__host__ __device__ inline std::int32_t trace_row_key(const TraceWrite& w, std::int64_t t) {
  return t < w.prefix_len ? w.prefix_key : w.request;
}

// writes: (n) device array. KV: ContiguousKV<T> or PagedKV<T> of the batch view (its memory is
// written through the const pointers).
template <class KV>
cudaError_t write_trace_tokens(const KV& kv, const TraceWrite* writes, int n, int heads_kv, int head_dim,
                               std::uint64_t seed, cudaStream_t stream);

// Every row t < to of every listed sequence compared with the generator's values: adds the count
// of rows with any differing element to *mismatches (device). `to` is the sequence's length.
template <class KV>
cudaError_t check_trace_rows(const KV& kv, const TraceWrite* sequences, int n, int heads_kv, int head_dim,
                             std::uint64_t seed, unsigned long long* mismatches, cudaStream_t stream);

// q of the trace's step: (n, H_q, D), row b keyed by (seed, request of b, step), so every step
// asks a fresh question of the same cache.
cudaError_t fill_trace_q(float* q, const TraceWrite* sequences, int n, int heads_q, int head_dim,
                         std::uint64_t seed, std::int64_t step, cudaStream_t stream);

}  // namespace decode_bench::sweeps
