#pragma once
// From a GPU point's parameters to what the pipeline (sweeps/point_pipeline.hpp) runs: the
// checks no backend could pass, the problem as described before any memory exists, and the
// measurement it asks for. Host-only.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/attention_problem.hpp"
#include "harness/kernel_kind.hpp"
#include "sweeps/point.hpp"
#include "sweeps/point_pipeline.hpp"

namespace decode_bench::sweeps {

// The point is a shared-prefix batch (pools/shared_prefix_batch.hpp): kernel shared_prefix, or
// batch_decode with prefix_len > 0. Every other GPU point is a plain decode batch.
bool is_shared_prefix_batch(KernelKind kernel, const nlohmann::json& params);

// Why no backend can measure the point (naming the parameter and value), or nullopt:
// sweeps/decode_point.hpp's decode_request_unsupported or sweeps/shared_prefix_point.hpp's
// shared_prefix_request_unsupported.
std::optional<std::string> request_unsupported(KernelKind kernel, const nlohmann::json& params);

// The problem with its device pointers null: shape, batch, dtype, layout and page size, host
// lengths, CSR and last-page lengths as the pools lay the sequences out (ceil(length / page_size)
// pages each), the prefix levels, the requests (blocks, prefix_overlap). Call after
// request_unsupported passed.
AttentionProblem describe_point(KernelKind kernel, const nlohmann::json& params);

MeasureRequest measure_request(const Point& point);

// The `backend` parameter, or the default backend for points that carry none.
std::string backend_of(const nlohmann::json& params);

}  // namespace decode_bench::sweeps
