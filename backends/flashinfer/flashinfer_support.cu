// FlashInfer's GQA dispatch table asked without launching anything: the body of each case is empty,
// and the default case throws flashinfer::Error with FlashInfer's sentence.
#include "backends/flashinfer/flashinfer_support.hpp"

#include <sstream>

#include <flashinfer/utils.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"
#include "flashinfer_build.hpp"

namespace decode_bench::flashinfer_launch {

std::string_view flashinfer_version() { return flashinfer_build::kVersion; }

std::optional<std::string> cuda_core_decode_unsupported_reason(int heads_q, int heads_kv, int head_dim) {
  if (heads_q < 1 || heads_kv < 1 || heads_q % heads_kv != 0) {
    std::ostringstream s;
    s << "heads_q " << heads_q << " must be a positive multiple of heads_kv " << heads_kv;
    return s.str();
  }
  if (head_dim != kHeadDim) {
    std::ostringstream s;
    s << "head_dim " << head_dim << ": the FlashInfer decode launchers are compiled for head_dim " << kHeadDim
      << " only";
    return s.str();
  }
  const auto group = static_cast<std::uint32_t>(heads_q / heads_kv);
  return reason_of_flashinfer_error([&] { DISPATCH_GQA_GROUP_SIZE(group, GROUP_SIZE, { (void)GROUP_SIZE; }); });
}

}  // namespace decode_bench::flashinfer_launch
