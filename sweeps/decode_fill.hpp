#pragma once
// The data of a decode point, from kernels/kv_generator.hpp: on the device, written in place
// through the pool's accessor (no host image, no upload), or on the host in the pool's admit
// layout (for the CPU reference and the host-fill path). Both give the same values for the same
// (seed, sequence, head, token, dim), so contiguous and paged twins hold identical data. FP8 caches
// get the bytes of kernels/fp8_generator.hpp (stored values; the caller's per-KV-head scales, from
// fp8_random_head_scales, give them their magnitudes).
#include <cstdint>
#include <span>
#include <vector>

#include <cuda_runtime.h>

namespace decode_bench::sweeps {

// The per-point seeds of K/V and q (one per point; sequences, heads and tokens are coordinates).
std::uint64_t kv_seed(std::uint64_t point_seed);
std::uint64_t q_seed(std::uint64_t point_seed);

// Host: k or v of sequence `seq` as admit takes it, (H_kv, len, D); q as (B, H_q, D).
template <class T>
void fill_kv_host(std::span<T> out, bool is_v, std::uint64_t point_seed, int seq, int heads_kv, std::int64_t len,
                  int head_dim);
void fill_q_host(std::span<float> out, std::uint64_t point_seed, int batch, int heads_q, int head_dim);

// Device: every token t < seq_lens[s] of every sequence of the batch view `kv` (ContiguousKV<T>
// or PagedKV<T>; the pool's memory is written through its const pointers), and q (B, H_q, D).
template <class KV>
cudaError_t fill_kv_device(const KV& kv, const std::int32_t* seq_lens, int batch, std::int64_t max_len, int heads_kv,
                           int head_dim, std::uint64_t point_seed, cudaStream_t stream);
cudaError_t fill_q_device(float* q, std::uint64_t point_seed, int batch, int heads_q, int head_dim,
                          cudaStream_t stream);

}  // namespace decode_bench::sweeps
