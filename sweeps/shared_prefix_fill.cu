#include "sweeps/shared_prefix_fill.hpp"

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/device_buffer.hpp"
#include "kernels/kv_generator.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/generated_element.cuh"

namespace decode_bench::sweeps {
namespace {

// Segment coordinates of token t of a sequence in group `group` (see the header).
struct SegmentToken {
  std::uint32_t code;
  std::int64_t token;
};

__host__ __device__ __forceinline__ std::uint32_t segment_code(SharedSegment kind, int index) {
  return (static_cast<std::uint32_t>(kind) << 24) | static_cast<std::uint32_t>(index);
}

__device__ __forceinline__ SegmentToken segment_of(std::int64_t t, int seq, int group, std::int64_t prefix_len,
                                                   std::int64_t group_prefix_len) {
  if (t < prefix_len) return {segment_code(SharedSegment::prefix, 0), t};
  if (t < prefix_len + group_prefix_len) return {segment_code(SharedSegment::group_prefix, group), t - prefix_len};
  return {segment_code(SharedSegment::suffix, seq), t - prefix_len - group_prefix_len};
}

// One warp per row (sequence, KV head, token), rows over a grid-stride loop; rows before the
// sequence's write_from are another sequence's to write.
template <class T>
__global__ void fill_shared_prefix_kernel(PagedKV<T> kv, const std::int32_t* seq_lens, const std::int32_t* group_of,
                                          const std::int64_t* write_from, int batch, std::int64_t max_len,
                                          int heads_kv, int head_dim, std::int64_t prefix_len,
                                          std::int64_t group_prefix_len, std::uint64_t seed) {
  for_each_row_by_warp(batch, heads_kv, max_len, [&](int s, int h, std::int64_t t, int lane) {
    if (t >= seq_lens[s] || t < write_from[s]) return;
    const SegmentToken at = segment_of(t, s, group_of[s], prefix_len, group_prefix_len);
    write_generated_row(kv, s, h, t, static_cast<int>(at.code), at.token, head_dim, seed, lane);
  });
}

}  // namespace

std::uint32_t shared_segment_code(SharedSegment kind, int index) { return segment_code(kind, index); }

std::vector<std::int64_t> shared_prefix_write_from(const SharedPrefixLayout& layout) {
  std::vector<std::int64_t> from(layout.num_seqs(), 0);
  for (const SharedLevel& level : layout.levels)
    for (int s = level.first_seq + 1; s < level.first_seq + level.num_seqs; ++s)
      from[s] = std::max(from[s], level.token_end);
  return from;
}

template <class T>
cudaError_t fill_shared_prefix_device(const PagedKV<T>& kv, const std::int32_t* seq_lens, const SharedPrefixSpec& spec,
                                      const SharedPrefixLayout& layout, int heads_kv, int head_dim,
                                      std::uint64_t point_seed, cudaStream_t stream) {
  const int batch = spec.batch;
  std::vector<std::int32_t> group_of;
  const std::vector<int> sizes = spec.group_sizes();
  for (std::size_t g = 0; g < sizes.size(); ++g) group_of.insert(group_of.end(), sizes[g], static_cast<int>(g));
  const DeviceBuffer<std::int32_t> groups(group_of);
  const DeviceBuffer<std::int64_t> from(shared_prefix_write_from(layout));
  const std::int64_t max_len = spec.length();
  const std::int64_t rows = static_cast<std::int64_t>(batch) * heads_kv * max_len;
  if (rows == 0) return cudaSuccess;
  const int blocks = static_cast<int>(std::min<std::int64_t>((rows + 7) / 8, 65536));
  fill_shared_prefix_kernel<<<blocks, 256, 0, stream>>>(kv, seq_lens, groups.get(), from.get(), batch, max_len,
                                                        heads_kv, head_dim, spec.prefix_len, spec.group_prefix_len,
                                                        kv_seed(point_seed));
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return cudaStreamSynchronize(stream);  // before the tables above are freed
}

template <class T>
void fill_shared_segment_host(T* out, bool is_v, SharedSegment kind, int index, std::int64_t len, int heads_kv,
                              int head_dim, std::uint64_t point_seed) {
  const GeneratedTensor which = is_v ? GeneratedTensor::v : GeneratedTensor::k;
  const int code = static_cast<int>(segment_code(kind, index));
  std::size_t at = 0;
  for (int h = 0; h < heads_kv; ++h)
    for (std::int64_t t = 0; t < len; ++t) {
      const std::uint64_t key = generated_row_key(kv_seed(point_seed), which, code, h, t);
      for (int i = 0; i < head_dim; ++i) out[at++] = generated_element<T>(key, i);
    }
}

#define DECODE_BENCH_INSTANTIATE_SHARED_FILL(T)                                                                     \
  template cudaError_t fill_shared_prefix_device<T>(const PagedKV<T>&, const std::int32_t*, const SharedPrefixSpec&, \
                                                    const SharedPrefixLayout&, int, int, std::uint64_t, cudaStream_t); \
  template void fill_shared_segment_host<T>(T*, bool, SharedSegment, int, std::int64_t, int, int, std::uint64_t);
DECODE_BENCH_INSTANTIATE_SHARED_FILL(float)
DECODE_BENCH_INSTANTIATE_SHARED_FILL(__half)
DECODE_BENCH_INSTANTIATE_SHARED_FILL(__nv_bfloat16)
DECODE_BENCH_INSTANTIATE_SHARED_FILL(__nv_fp8_e4m3)
DECODE_BENCH_INSTANTIATE_SHARED_FILL(__nv_fp8_e5m2)
#undef DECODE_BENCH_INSTANTIATE_SHARED_FILL

}  // namespace decode_bench::sweeps
