// C++ API of ozdgemm: a thin, header-only layer over the C API (ozdgemm.h), which states the
// stream, synchronisation and ownership rules. Nothing here throws.
#pragma once

#include "ozdgemm/ozdgemm.h"

namespace ozdgemm {

enum class scaling { fast = OZDGEMM_SCALING_FAST, accurate = OZDGEMM_SCALING_ACCURATE };

struct options {
  int num_moduli = OZDGEMM_DEFAULT_MODULI;  // certified; 2..20 fixes s, OZDGEMM_MODULI_AUTO
  ozdgemm::scaling scaling = scaling::fast;
  int accuracy = OZDGEMM_ACCURACY_NATIVE;  // read when s is chosen per call (auto, certified)

  ozdgemm_options_t c_value() const {
    return ozdgemm_options_t{num_moduli, static_cast<ozdgemm_scaling_t>(scaling), accuracy};
  }
};

using status = ozdgemm_status_t;

inline status dgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int64_t m, int64_t n, int64_t k, const double* alpha, const double* A,
                    int64_t lda, const double* B, int64_t ldb, const double* beta, double* C,
                    int64_t ldc, const options& opts = {}) noexcept {
  return ozdgemm_dgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                       opts.c_value());
}

inline status zgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int64_t m, int64_t n, int64_t k, const cuDoubleComplex* alpha,
                    const cuDoubleComplex* A, int64_t lda, const cuDoubleComplex* B, int64_t ldb,
                    const cuDoubleComplex* beta, cuDoubleComplex* C, int64_t ldc,
                    const options& opts = {}) noexcept {
  return ozdgemm_zgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                       opts.c_value());
}

inline const char* to_string(status s) noexcept { return ozdgemm_status_string(s); }

}  // namespace ozdgemm
