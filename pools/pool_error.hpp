#pragma once
// The one exception pools throw. Every operation checks its preconditions before it changes
// anything, so a caught PoolError leaves the pool exactly as it was (strong guarantee).
#include <stdexcept>
#include <string>
#include <string_view>

namespace decode_bench {

enum class PoolErrorKind {
  SequenceTooLong,    // admit or append would exceed max_seq_len
  OutOfPages,         // the paged pool's free list cannot cover the request
  OutOfSlots,         // every sequence slot is taken
  UnknownHandle,      // never issued, or already released
  InvalidArgument,    // a bad configuration or argument (page_size 0, negative length, ...)
  OutOfDeviceMemory,  // the backend could not allocate the arena (cudaErrorMemoryAllocation)
  DTypeMismatch,      // a typed accessor asked for T but the pool stores another dtype
  NoMemory,           // data access on the accounting backend, which has no memory behind it
};

constexpr std::string_view pool_error_kind_name(PoolErrorKind k) {
  switch (k) {
    case PoolErrorKind::SequenceTooLong: return "SequenceTooLong";
    case PoolErrorKind::OutOfPages: return "OutOfPages";
    case PoolErrorKind::OutOfSlots: return "OutOfSlots";
    case PoolErrorKind::UnknownHandle: return "UnknownHandle";
    case PoolErrorKind::InvalidArgument: return "InvalidArgument";
    case PoolErrorKind::OutOfDeviceMemory: return "OutOfDeviceMemory";
    case PoolErrorKind::DTypeMismatch: return "DTypeMismatch";
    case PoolErrorKind::NoMemory: return "NoMemory";
  }
  return "?";
}

class PoolError : public std::runtime_error {
 public:
  PoolError(PoolErrorKind kind, const std::string& message)
      : std::runtime_error(std::string(pool_error_kind_name(kind)) + ": " + message), kind_(kind) {}
  PoolErrorKind kind() const { return kind_; }

 private:
  PoolErrorKind kind_;
};

}  // namespace decode_bench
