// mla_fa3_run_<dtype> (flashinfer_mla.hpp) in a build without FlashInfer's Hopper MLA kernel (the
// build's architectures leave out 90, or the CUTLASS headers were not found): each refuses with the
// configure's reason, which the flashinfer_mla_fa3 backend gives before any point reaches them.
#include <string>

#include "backends/flashinfer/flashinfer_mla.hpp"
#include "flashinfer_build.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

cudaError_t not_built(std::string* error) {
  if (error != nullptr)
    *error = std::string("FlashInfer's Hopper MLA kernel is not in this build: ") + flashinfer_build::kMlaFa3NotBuiltReason;
  return cudaErrorNotSupported;
}

}  // namespace

cudaError_t mla_fa3_run_fp16(const MlaArgs&, const MlaPlan&, void*, void*, cudaStream_t, std::string* error) {
  return not_built(error);
}
cudaError_t mla_fa3_run_bf16(const MlaArgs&, const MlaPlan&, void*, void*, cudaStream_t, std::string* error) {
  return not_built(error);
}

}  // namespace decode_bench::flashinfer_launch
