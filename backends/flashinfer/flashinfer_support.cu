// FlashInfer's GQA dispatch table asked without launching anything: the body of each case is empty,
// and the default case throws flashinfer::Error with FlashInfer's sentence. Also the launchers'
// checks that need no type: the batch decode's host indptr.
#include "backends/flashinfer/flashinfer_support.hpp"

#include <sstream>

#include "backends/flashinfer/flashinfer_batch_decode.hpp"

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

std::optional<std::string> paged_decode_indptr_reason(int batch, const std::int32_t* indptr_host) {
  if (indptr_host == nullptr) return "indptr_host must be set";
  if (indptr_host[0] != 0) return "indptr_host[0] must be 0";
  for (int b = 0; b < batch; ++b) {
    if (indptr_host[b + 1] <= indptr_host[b]) {
      // A sequence's length is (pages - 1) * page_size + last_page_len: FlashInfer has no empty one.
      std::ostringstream m;
      m << "sequence " << b << " has no page (indptr_host[" << b << "] = " << indptr_host[b] << ", indptr_host["
        << b + 1 << "] = " << indptr_host[b + 1] << "): FlashInfer's batch decode needs at least one token per sequence";
      return m.str();
    }
  }
  return std::nullopt;
}

}  // namespace decode_bench::flashinfer_launch
