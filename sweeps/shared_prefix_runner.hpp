#pragma once
// Runners for shared-prefix points (prefix_len > 0, layout paged): the batch is built by forking
// (pools/shared_prefix_batch.hpp) in a device pool and in a host pool the float64 reference reads;
// outputs are poisoned, verified sequence by sequence over each whole sequence (prefix levels and
// suffix), then timed and profiled as the decode runners do.
//   kernel=shared_prefix: the composed prefix phase + suffix phase + merge (kernels/shared_prefix.hpp);
//   kernel=batch_decode:  the plain batch decode over the same forked pages (every sequence reads the
//                         prefix), so the two kernels' times on one point give the speedup.
#include <memory>

#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

std::unique_ptr<PointRunner> make_shared_prefix_runner();
// kernel=batch_decode: shared-prefix points through the plain decode over forked pages; every other
// point goes to `plain` (the decode runner).
std::unique_ptr<PointRunner> make_batch_decode_runner(std::unique_ptr<PointRunner> plain);

}  // namespace decode_bench::sweeps
