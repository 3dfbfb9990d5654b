#pragma once
// From a runtime DType to the storage type templates are instantiated for: the one switch a
// type-erased caller (a backend, the measurement pipeline) needs. f is called with
// std::type_identity<T>{}; every branch must return the same type.
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/dtype.hpp"

namespace decode_bench {

template <class F>
decltype(auto) with_storage_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::fp32: return f(std::type_identity<float>{});
    case DType::fp16: return f(std::type_identity<__half>{});
    case DType::bf16: return f(std::type_identity<__nv_bfloat16>{});
    case DType::fp8_e4m3: return f(std::type_identity<__nv_fp8_e4m3>{});
    case DType::fp8_e5m2: return f(std::type_identity<__nv_fp8_e5m2>{});
  }
  throw std::invalid_argument("unknown storage type " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace decode_bench
