#pragma once
// Two error macros, as the style guide asks:
//  - DB_RETURN_IF_ERROR inside launchers: return the cudaError_t to the caller, who decides.
//  - DB_CUDA_CHECK at the program edge: throw CudaError naming the call, file and line.
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace decode_bench {

// Sticky errors (illegal address, launch failure) poison the context: nothing after them is
// trustworthy, so a sweep must stop after saving what it has.
inline bool is_sticky_error(cudaError_t code) {
  return code == cudaErrorIllegalAddress || code == cudaErrorLaunchFailure ||
         code == cudaErrorHardwareStackError || code == cudaErrorIllegalInstruction ||
         code == cudaErrorMisalignedAddress || code == cudaErrorInvalidAddressSpace ||
         code == cudaErrorInvalidPc || code == cudaErrorAssert;
}

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }
  bool sticky() const { return is_sticky_error(code_); }

 private:
  cudaError_t code_;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                            cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

}  // namespace decode_bench

#define DB_CUDA_CHECK(call)                                                         \
  do {                                                                              \
    cudaError_t db_status_ = (call);                                                \
    if (db_status_ != cudaSuccess)                                                  \
      ::decode_bench::throw_cuda_error(db_status_, #call, __FILE__, __LINE__);      \
  } while (0)

#define DB_RETURN_IF_ERROR(call)                \
  do {                                          \
    cudaError_t db_status_ = (call);            \
    if (db_status_ != cudaSuccess) return db_status_; \
  } while (0)
