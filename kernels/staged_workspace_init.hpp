#pragma once
// The plans' workspace initialisation with every upload through a page-locked staging block
// (kernels/host_staging.hpp): the same bytes as init_decode_workspace,
// init_row_attention_workspace and init_shared_prefix_workspace write, each work list as one
// asynchronous copy together with the zeroed counters before it, so a plan made while an earlier
// launch still runs on the stream never waits for it. With no staging (nullptr), or a block too
// small, the uploads copy from the plan as those functions do (a memset and a copy).
//
// A header of its own, beside decode_launch.hpp and row_attention.hpp, which every kernel
// instantiation includes.
#include <cuda_runtime.h>

#include "kernels/decode_launch.hpp"
#include "kernels/host_staging.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/shared_prefix.hpp"

namespace decode_bench {

cudaError_t init_row_attention_workspace_staged(const RowAttentionPlan& plan, void* workspace, cudaStream_t stream,
                                                HostStaging* staging);
cudaError_t init_decode_workspace_staged(const DecodePlan& plan, void* workspace, cudaStream_t stream,
                                         HostStaging* staging);
cudaError_t init_shared_prefix_workspace_staged(const SharedPrefixPlan& plan, void* workspace, cudaStream_t stream,
                                                HostStaging* staging);

}  // namespace decode_bench
