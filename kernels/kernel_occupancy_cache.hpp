#pragma once
// A kernel prepared for a launch shape and its occupancy, each driver call made once. A planner
// sets a kernel's dynamic shared memory limit (and, when asked, the max-shared carveout) and asks
// its occupancy on every plan; a serving loop plans every step, and those are driver calls each
// time although nothing changes: the attributes stick once set, and the occupancy of (kernel,
// threads, shared bytes) under the same attributes is the same number.
//
// Per (device, kernel) the limit last set (set again only when a different one is asked for) and
// whether the carveout was set (never unset, as a direct call would leave it); the occupancy per
// (device, kernel, threads, shared bytes, limit, carveout). A failed call is returned and nothing
// of it is cached.
#include <cstddef>

#include <cuda_runtime.h>

namespace decode_bench {

cudaError_t prepared_occupancy(const void* kernel, std::size_t max_shared_bytes, bool carveout_max_shared, int threads,
                               std::size_t shared_bytes, int* blocks_per_sm);

// The launch attribute of clusters of (1, blocks, 1): a grid's y blocks (the splits of a row
// item) in one cluster.
inline cudaLaunchAttribute cluster_dims_along_y(unsigned blocks) {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = 1;
  a.val.clusterDim.y = blocks;
  a.val.clusterDim.z = 1;
  return a;
}

// The launch of `grid` with one launch attribute, which the config points to: `attribute` must
// outlive the launch call.
inline cudaLaunchConfig_t launch_config_with(dim3 grid, unsigned threads, std::size_t shared_bytes, cudaStream_t stream,
                                             cudaLaunchAttribute* attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

// The launch of `grid` (x: items x row blocks, y: splits) as clusters of (1, grid.y, 1) blocks:
// the row attention's and the MLA kernel's cluster merges. `attribute` holds the cluster dims the
// config points to, so it must outlive the launch call.
inline cudaLaunchConfig_t cluster_launch_config(dim3 grid, unsigned threads, std::size_t shared_bytes,
                                                cudaStream_t stream, cudaLaunchAttribute* attribute) {
  *attribute = cluster_dims_along_y(grid.y);
  return launch_config_with(grid, threads, shared_bytes, stream, attribute);
}

// The cooperative launch of `grid`: every block resident at once, or the launch fails (the MLA
// kernel's spread merge, whose blocks wait for each other). `attribute` as above.
inline cudaLaunchConfig_t cooperative_launch_config(dim3 grid, unsigned threads, std::size_t shared_bytes,
                                                    cudaStream_t stream, cudaLaunchAttribute* attribute) {
  *attribute = cudaLaunchAttribute{};
  attribute->id = cudaLaunchAttributeCooperative;
  attribute->val.cooperative = 1;
  return launch_config_with(grid, threads, shared_bytes, stream, attribute);
}

// The most clusters of cluster_blocks blocks (cluster dims (1, cluster_blocks, 1)) of a kernel that
// prepared_occupancy has prepared, resident at once: at `shared_bytes` a block, or with one block
// an SM at most (the query asks for all the shared memory a block may opt in to, raising the
// kernel's limit for the query only). A cluster's blocks sit in one GPC, so this is not the
// occupancy over the cluster size: a GPC whose free SMs are fewer than a cluster holds none of it.
// Cached per (device, kernel, threads, shared bytes, cluster blocks, one_block_per_sm).
cudaError_t prepared_max_active_clusters(const void* kernel, int threads, std::size_t shared_bytes, int cluster_blocks,
                                         bool one_block_per_sm, int* clusters);

}  // namespace decode_bench
