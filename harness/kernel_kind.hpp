#pragma once
// The `kernel` axis: what a point asks to be computed. This table is the one place kernel names
// live: the axis's allowed values (sweeps/axes.cpp), the runners registered for them
// (sweeps/builtin_runners.cpp) and every branch on a kernel read it, never a string literal.
// The four GPU kernels are computed by a backend (harness/backend.hpp), which the `backend` axis
// picks; cpu_reference and capacity have runners of their own.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace decode_bench {

enum class KernelKind {
  cpu_reference,  // the float64 reference on the host, timed as a kernel
  baseline,       // the seed paper's 3-kernel decode (scores, softmax, output)
  flash_decode,   // split-K decode: one sequence or a batch
  batch_decode,   // the same decode under the name batch experiments use; over the forked pages of
                  // a shared-prefix batch when prefix_len > 0 (every sequence reads the prefix)
  shared_prefix,  // composed shared-prefix decode: prefix phase + suffix phase + merge
  capacity,       // counts sequences fitting a memory budget; launches nothing
  trace,          // continuous batching over a serving trace in a real pool, decode-bench's decode each step
};

struct KernelInfo {
  KernelKind kind;
  std::string_view name;  // the axis value
};

// Every kernel, in the axis's order.
std::span<const KernelInfo> kernel_kinds();
std::string_view kernel_name(KernelKind kind);
std::optional<KernelKind> parse_kernel_kind(std::string_view name);
// The names of kernel_kinds(), for the axis table and messages.
std::vector<std::string_view> kernel_names();

// Computed by a backend on the GPU (baseline, flash_decode, batch_decode, shared_prefix).
constexpr bool kernel_uses_backend(KernelKind k) {
  return k == KernelKind::baseline || k == KernelKind::flash_decode || k == KernelKind::batch_decode ||
         k == KernelKind::shared_prefix;
}
// Takes a split-K block count (the `blocks` axis): not the reference, the baseline or capacity.
constexpr bool kernel_splits_k(KernelKind k) {
  return k != KernelKind::cpu_reference && k != KernelKind::baseline && k != KernelKind::capacity &&
         k != KernelKind::trace;
}
// Launches and times something (capacity only counts). A trace times its own steps, without
// the timing axes (cold, end_to_end, counters).
constexpr bool kernel_is_timed(KernelKind k) { return k != KernelKind::capacity && k != KernelKind::trace; }

}  // namespace decode_bench
