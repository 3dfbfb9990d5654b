// The `flashinfer_tc` backend of a build without FlashInfer's headers: registered all the same, so
// `--set backend=flashinfer_tc` is a valid request whose points are skipped with the configure's
// reason (cmake/FlashInfer.cmake) instead of an unknown axis value.
#include <memory>
#include <stdexcept>
#include <string>

#include "flashinfer_build.hpp"
#include "harness/backend.hpp"

namespace decode_bench {
namespace {

class FlashInferTcNotBuilt final : public Backend {
 public:
  std::string name() const override { return "flashinfer_tc"; }
  std::string version() const override { return "not built"; }
  std::optional<std::string> supports(const AttentionProblem&) const override { return reason(); }
  void plan(const AttentionProblem&, Workspace&) override { throw std::invalid_argument(reason()); }
  cudaError_t run(cudaStream_t) override { return cudaErrorNotSupported; }
  nlohmann::json plan_json() const override { return nlohmann::json::object(); }

 private:
  static std::string reason() {
    return std::string("backend flashinfer_tc not built: ") + flashinfer_build::kNotBuiltReason;
  }
};

}  // namespace

std::unique_ptr<Backend> make_flashinfer_tc_backend() { return std::make_unique<FlashInferTcNotBuilt>(); }

}  // namespace decode_bench
