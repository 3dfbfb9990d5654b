#pragma once
// Device bytes a point needs, estimated from its parameters before anything is allocated. Used to
// reject impossible points at validation (more than the GPU has). It is the KV footprint the pools
// will allocate (the dominant term) plus q/o and block tables; runners report their exact need
// through PointRunner::device_bytes_needed.
#include <cstdint>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

// K+V = 2 * tokens * heads_kv * head_dim * dtype_bytes, where tokens per sequence is
//   contiguous: ceil(max_len * fragmentation)   (max_len = T, 2T-1 for uniform lengths, the top of
//               the support for zipf lengths)
//   paged:      ceil(len / page_size) * page_size (+1 page for variable lengths; shared prefixes once,
//               as pools/shared_prefix_batch.hpp builds them)
// all of it times `layers` (one cache per layer); cpu_reference needs no device memory; capacity
// needs its budget_bytes.
std::uint64_t estimate_device_bytes(const nlohmann::json& parameters);

}  // namespace decode_bench::sweeps
