#pragma once
// The data of a shared-prefix batch (pools/shared_prefix_batch.hpp) generated on the device, in
// place through the batch view, instead of generated on the host and uploaded through the pool's
// appends. Token t of sequence s holds the generator's values (kernels/kv_generator.hpp) for its
// segment coordinates:
//   t < P            -> (prefix, 0, t)
//   t < P + Pg       -> (group prefix, group of s, t - P)
//   otherwise        -> (suffix, s, t - P - Pg)
// so every sharer of a token sees the same values, the partial pages each appender copied on write
// included. A page shared by a level (kernels/shared_prefix_layout.hpp) is written once, by the
// level's first sequence: no two threads write one address, and an N-way prefix costs one write.
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/shared_prefix_layout.hpp"
#include "pools/shared_prefix_batch.hpp"

namespace decode_bench::sweeps {

// Per sequence: the first token it writes (the end of the last level it shares without being that
// level's first sequence; 0 for sequence 0). (num_seqs) entries.
std::vector<std::int64_t> shared_prefix_write_from(const SharedPrefixLayout& layout);

// The generator's sequence coordinate of a segment: distinct for every (kind, index).
std::uint32_t shared_segment_code(SharedSegment kind, int index);

// kv: the batch view of the N sequences in batch order (their block tables); seq_lens on the
// device. Writes K and V of every token some sequence owns. Synchronizes `stream` (its small
// per-sequence tables are freed on return).
template <class T>
cudaError_t fill_shared_prefix_device(const PagedKV<T>& kv, const std::int32_t* seq_lens, const SharedPrefixSpec& spec,
                                      const SharedPrefixLayout& layout, int heads_kv, int head_dim,
                                      std::uint64_t point_seed, cudaStream_t stream);

// The same values on the host for one segment, in the layout the pool's appends take: k or v as
// (H_kv, len, D) (the --fill host and --verify cpu path, and the tests' twin of the device fill).
template <class T>
void fill_shared_segment_host(T* out, bool is_v, SharedSegment kind, int index, std::int64_t len, int heads_kv,
                              int head_dim, std::uint64_t point_seed);

}  // namespace decode_bench::sweeps
