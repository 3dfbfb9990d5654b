#include "harness/kernel_kind.hpp"

namespace decode_bench {
namespace {

constexpr KernelInfo kKernels[] = {
    {KernelKind::cpu_reference, "cpu_reference"}, {KernelKind::baseline, "baseline"},
    {KernelKind::flash_decode, "flash_decode"},   {KernelKind::batch_decode, "batch_decode"},
    {KernelKind::shared_prefix, "shared_prefix"}, {KernelKind::capacity, "capacity"},
    {KernelKind::trace, "trace"},
};

}  // namespace

std::span<const KernelInfo> kernel_kinds() { return kKernels; }

std::string_view kernel_name(KernelKind kind) {
  for (const KernelInfo& k : kKernels)
    if (k.kind == kind) return k.name;
  return "?";
}

std::optional<KernelKind> parse_kernel_kind(std::string_view name) {
  for (const KernelInfo& k : kKernels)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

std::vector<std::string_view> kernel_names() {
  std::vector<std::string_view> out;
  for (const KernelInfo& k : kKernels) out.push_back(k.name);
  return out;
}

}  // namespace decode_bench
