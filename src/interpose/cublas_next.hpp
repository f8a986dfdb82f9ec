// What every cuBLAS hook file shares: libcublas's own definition of an intercepted name, the
// forwarding lambda of a hook, and which cublas*Ex calls are plain FP64.
#pragma once

#include <cublas_v2.h>

#include "interpose/real_symbol.hpp"

namespace ozdgemm::detail {

inline constexpr const char* kCublasLibrary = "libcublas.so.13";

// The real definition of `name` (never this library's hook), as the function type F.
template <class F>
F cublas_next(const char* name) {
  return reinterpret_cast<F>(resolve_next(name, kCublasLibrary));
}

// cublasGemmEx and the batched Ex forms are served for plain FP64 only: all types CUDA_R_64F
// (real) or all CUDA_C_64F (complex), compute type CUBLAS_COMPUTE_64F (not _PEDANTIC or
// _EMULATED_*), default algorithm.
enum class fp64_kind { none, real, complex };
inline fp64_kind gemm_ex_fp64_kind(cudaDataType at, cudaDataType bt, cudaDataType ct,
                                   cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  if (compute != CUBLAS_COMPUTE_64F ||
      (algo != CUBLAS_GEMM_DEFAULT && algo != CUBLAS_GEMM_DEFAULT_TENSOR_OP) || at != bt ||
      at != ct)
    return fp64_kind::none;
  return at == CUDA_R_64F   ? fp64_kind::real
         : at == CUDA_C_64F ? fp64_kind::complex
                            : fp64_kind::none;
}

}  // namespace ozdgemm::detail

// Inside a hook defined by a macro: `next`, the real routine NAME of the argument types given,
// and `native`, a lambda forwarding the call to it as OZDGEMM_FORWARD (defined by the hook file
// as the call of next with the hook's own arguments) spells it.
#define OZDGEMM_NEXT(NAME, ...)                                                            \
  using next_fn = cublasStatus_t (*)(__VA_ARGS__);                                         \
  static const next_fn next = ::ozdgemm::detail::cublas_next<next_fn>(NAME);               \
  auto native = [&]() -> cublasStatus_t {                                                  \
    return next != nullptr ? OZDGEMM_FORWARD : CUBLAS_STATUS_NOT_SUPPORTED;                \
  }
