#pragma once
// FlashInfer's refusals (flashinfer::Error, thrown by its dispatch macros and its workspace
// allocator) as decode-bench's: a sentence and cudaErrorInvalidValue. Included only by the
// translation units that include FlashInfer's headers.
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <cuda_runtime.h>

#include <flashinfer/exception.h>

namespace decode_bench::flashinfer_launch {

// flashinfer::Error's what() reads "Error in function 'F' at FILE:LINE: MESSAGE"; the message is the
// part a user can act on (FILE is a path into the build tree).
inline std::string flashinfer_error_message(std::string_view what) {
  const auto at = what.find("' at ");
  const auto colon = at == std::string_view::npos ? at : what.find(": ", at);
  return std::string(colon == std::string_view::npos ? what : what.substr(colon + 2));
}

// Runs f (returning void); nullopt, or FlashInfer's reason when it threw.
template <class F>
std::optional<std::string> reason_of_flashinfer_error(F&& f) {
  try {
    std::forward<F>(f)();
    return std::nullopt;
  } catch (const flashinfer::Error& e) {
    return flashinfer_error_message(e.what());
  }
}

// Runs f (returning cudaError_t) and maps both ways FlashInfer fails to a cudaError_t and *error:
// a thrown flashinfer::Error (an unsupported configuration, a workspace too small) is
// cudaErrorInvalidValue with FlashInfer's message; a CUDA error keeps its code.
template <class F>
cudaError_t call_flashinfer(F&& f, std::string* error) {
  cudaError_t status = cudaSuccess;
  try {
    status = std::forward<F>(f)();
  } catch (const flashinfer::Error& e) {
    if (error != nullptr) *error = flashinfer_error_message(e.what());
    return cudaErrorInvalidValue;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = e.what();
    return cudaErrorInvalidValue;
  }
  if (status != cudaSuccess && error != nullptr) *error = cudaGetErrorString(status);
  return status;
}

// A plan copies its host work list to the device asynchronously: the host buffer is free (and the
// plan done) once that copy is.
inline cudaError_t wait_for_plan_copy(cudaStream_t stream, std::string* error) {
  const cudaError_t sync = cudaStreamSynchronize(stream);
  if (sync != cudaSuccess && error != nullptr) *error = cudaGetErrorString(sync);
  return sync;
}

// The launchers' own argument checks share the return path.
inline cudaError_t refuse(std::string reason, std::string* error) {
  if (error != nullptr) *error = std::move(reason);
  return cudaErrorInvalidValue;
}

}  // namespace decode_bench::flashinfer_launch
