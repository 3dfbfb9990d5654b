#pragma once
// Which problems decode-bench's own kernels take, from shapes and the storage type alone: the
// `decode-bench` backend's supports(), and what sweeps/decode_point.hpp reports for a point.
#include <optional>
#include <string>

#include "harness/kernel_kind.hpp"
#include "kernels/attention_variant.hpp"
#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"

namespace decode_bench {

// The reason naming the parameter and its value (all a skipped point records), or nullopt:
// baseline: no FP8, head dims of the compiled kernels, GQA groups 1, 2, 4, 8; flash_decode,
// batch_decode and shared_prefix: the decode kernels' rule (kernels/decode_support.cpp); then the
// attention variants (kernels/attention_variant.hpp): flash_decode and batch_decode compute them on
// the tensor-core row path where it has a build (FP16 / BF16, head dims 80-128), shared_prefix a
// window and sinks at q_len 1 (kernels/shared_prefix_variant.hpp), baseline none.
std::optional<std::string> decode_bench_unsupported(KernelKind kernel, const DecodeShape& shape, DType kv_dtype,
                                                    const AttentionVariant& variant = {});

}  // namespace decode_bench
