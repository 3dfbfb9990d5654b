// The FlashInfer backends (flashinfer, flashinfer_tc, flashinfer_mla, flashinfer_mla_fa3) of a build
// without FlashInfer's headers: registered all the same, so `--set backend=flashinfer` (or another
// of them) is a valid request whose points are skipped with the configure's reason
// (cmake/FlashInfer.cmake) instead of an unknown axis value.
#include <memory>
#include <stdexcept>
#include <string>

#include "flashinfer_build.hpp"
#include "harness/backend.hpp"

namespace decode_bench {
namespace {

class FlashInferNotBuilt final : public Backend {
 public:
  explicit FlashInferNotBuilt(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "not built"; }
  std::optional<std::string> supports(const AttentionProblem&) const override { return reason(); }
  void plan(const AttentionProblem&, Workspace&) override { throw std::invalid_argument(reason()); }
  cudaError_t run(cudaStream_t) override { return cudaErrorNotSupported; }
  nlohmann::json plan_json() const override { return nlohmann::json::object(); }

 private:
  std::string reason() const { return "backend " + name_ + " not built: " + flashinfer_build::kNotBuiltReason; }
  std::string name_;
};

}  // namespace

std::unique_ptr<Backend> make_flashinfer_backend() { return std::make_unique<FlashInferNotBuilt>("flashinfer"); }
std::unique_ptr<Backend> make_flashinfer_tc_backend() { return std::make_unique<FlashInferNotBuilt>("flashinfer_tc"); }
std::unique_ptr<Backend> make_flashinfer_mla_backend() { return std::make_unique<FlashInferNotBuilt>("flashinfer_mla"); }
std::unique_ptr<Backend> make_flashinfer_mla_fa3_backend() {
  return std::make_unique<FlashInferNotBuilt>("flashinfer_mla_fa3");
}

}  // namespace decode_bench
