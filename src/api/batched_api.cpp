// The batched entries, on the GPU and their host references: the whole batch's arguments are
// checked first, then each matrix goes through the single call's entry (ozdgemm_dgemm or
// ozdgemm_dgemm_reference, and the complex ones), so that matrix i's result is the single call's
// on matrix i by construction.
#include <cstddef>
#include <cstdint>

#include "api/call_checks.hpp"
#include "api/status.hpp"
#include "core/checked_math.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {
namespace {

// Matrix i of a strided batch: base + i stride elements.
template <class T>
struct strided_operands {
  const T* a;
  int64_t stride_a;
  const T* b;
  int64_t stride_b;
  T* c;
  int64_t stride_c;

  bool present() const { return true; }
  bool at(int64_t i, const T** ai, const T** bi, T** ci) const {
    const void *pa = nullptr, *pb = nullptr, *pc = nullptr;
    if (!strided_element(a, i, stride_a, sizeof(T), &pa) ||
        !strided_element(b, i, stride_b, sizeof(T), &pb) ||
        !strided_element(c, i, stride_c, sizeof(T), &pc))
      return false;
    *ai = static_cast<const T*>(pa);
    *bi = static_cast<const T*>(pb);
    *ci = static_cast<T*>(const_cast<void*>(pc));
    return true;
  }
};

// Matrix i of a pointer-array batch.
template <class T>
struct array_operands {
  const T* const* a;
  const T* const* b;
  T* const* c;

  bool present() const { return a != nullptr && b != nullptr && c != nullptr; }
  bool at(int64_t i, const T** ai, const T** bi, T** ci) const {
    *ai = a[i];
    *bi = b[i];
    *ci = c[i];
    return true;
  }
};

// Checks every argument of the batch (`checked`, the single call's rules with `args`;
// batch_count >= 0, the arrays, every matrix in the address space), then runs
// single(A_i, B_i, C_i) for each i in order. reads_ab: A and B are read (alpha != 0, or alpha
// not readable on the host).
template <class T, class Operands, class Single>
ozdgemm_status_t run_batch(ozdgemm_status_t checked, const checked_args& args, int64_t m,
                           int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                           bool reads_ab, int64_t batch_count, const Operands& operands,
                           Single&& single) {
  if (checked != OZDGEMM_STATUS_SUCCESS) return checked;
  if (batch_count < 0) return OZDGEMM_STATUS_INVALID_VALUE;
  if (batch_count == 0 || m == 0 || n == 0) return OZDGEMM_STATUS_SUCCESS;
  if (!operands.present()) return OZDGEMM_STATUS_INVALID_VALUE;
  for (int64_t i = 0; i < batch_count; ++i) {
    const T *a = nullptr, *b = nullptr;
    T* c = nullptr;
    if (!operands.at(i, &a, &b, &c) ||
        !addressable(args, m, n, k, a, lda, b, ldb, c, ldc, reads_ab, sizeof(T)))
      return OZDGEMM_STATUS_INVALID_VALUE;
  }
  for (int64_t i = 0; i < batch_count; ++i) {
    const T *a = nullptr, *b = nullptr;
    T* c = nullptr;
    operands.at(i, &a, &b, &c);
    const ozdgemm_status_t st = single(a, b, c);
    if (st != OZDGEMM_STATUS_SUCCESS) return st;
  }
  return OZDGEMM_STATUS_SUCCESS;
}

template <class Operands>
ozdgemm_status_t dgemm_batch(const char* entry, char transa, char transb, int64_t m, int64_t n,
                             int64_t k, double alpha, int64_t lda, int64_t ldb, double beta,
                             int64_t ldc, int64_t batch_count, const ozdgemm_options_t& options,
                             const Operands& operands) {
  return guarded(entry, [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked =
        check_reference_args(transa, transb, m, n, k, lda, ldb, ldc, options, &args);
    return run_batch<double>(checked, args, m, n, k, lda, ldb, ldc, alpha != 0.0, batch_count,
                             operands, [&](const double* a, const double* b, double* c) {
                               return ozdgemm_dgemm_reference(transa, transb, m, n, k, alpha, a,
                                                              lda, b, ldb, beta, c, ldc, options);
                             });
  });
}

template <class Operands>
ozdgemm_status_t zgemm_batch(const char* entry, char transa, char transb, int64_t m, int64_t n,
                             int64_t k, cuDoubleComplex alpha, int64_t lda, int64_t ldb,
                             cuDoubleComplex beta, int64_t ldc, int64_t batch_count,
                             const ozdgemm_options_t& options, const Operands& operands) {
  const bool reads_ab = cuCreal(alpha) != 0.0 || cuCimag(alpha) != 0.0;
  return guarded(entry, [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked =
        check_reference_args(transa, transb, m, n, k, lda, ldb, ldc, options, &args);
    return run_batch<cuDoubleComplex>(
        checked, args, m, n, k, lda, ldb, ldc, reads_ab, batch_count, operands,
        [&](const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* c) {
          return ozdgemm_zgemm_reference(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                         ldc, options);
        });
  });
}

// The device forms: cuBLAS's rules for the single call; alpha may be in device memory, so A and
// B are taken as read.
template <class T, class Operands, class Single>
ozdgemm_status_t device_batch(const char* entry, cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                              const T* alpha, int64_t lda, int64_t ldb, const T* beta,
                              int64_t ldc, int64_t batch_count, const ozdgemm_options_t& options,
                              const Operands& operands, Single&& single) {
  return guarded(entry, [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked = check_device_args(handle, transa, transb, m, n, k, lda, ldb,
                                                       ldc, alpha, beta, options, &args);
    return run_batch<T>(checked, args, m, n, k, lda, ldb, ldc, true, batch_count, operands,
                        single);
  });
}

}  // namespace
}  // namespace ozdgemm::detail

using ozdgemm::detail::array_operands;
using ozdgemm::detail::strided_operands;

extern "C" {

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_strided_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A,
    int64_t lda, int64_t stride_a, const double* B, int64_t ldb, int64_t stride_b, double beta,
    double* C, int64_t ldc, int64_t stride_c, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::dgemm_batch("ozdgemm_dgemm_strided_batched_reference", transa, transb, m,
                                      n, k, alpha, lda, ldb, beta, ldc, batch_count, options,
                                      strided_operands<double>{A, stride_a, B, stride_b, C, stride_c});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
    const double* const A[], int64_t lda, const double* const B[], int64_t ldb, double beta,
    double* const C[], int64_t ldc, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::dgemm_batch("ozdgemm_dgemm_batched_reference", transa, transb, m, n, k,
                                      alpha, lda, ldb, beta, ldc, batch_count, options,
                                      array_operands<double>{A, B, C});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_strided_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, cuDoubleComplex alpha,
    const cuDoubleComplex* A, int64_t lda, int64_t stride_a, const cuDoubleComplex* B,
    int64_t ldb, int64_t stride_b, cuDoubleComplex beta, cuDoubleComplex* C, int64_t ldc,
    int64_t stride_c, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::zgemm_batch(
      "ozdgemm_zgemm_strided_batched_reference", transa, transb, m, n, k, alpha, lda, ldb, beta,
      ldc, batch_count, options,
      strided_operands<cuDoubleComplex>{A, stride_a, B, stride_b, C, stride_c});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, cuDoubleComplex alpha,
    const cuDoubleComplex* const A[], int64_t lda, const cuDoubleComplex* const B[], int64_t ldb,
    cuDoubleComplex beta, cuDoubleComplex* const C[], int64_t ldc, int64_t batch_count,
    ozdgemm_options_t options) {
  return ozdgemm::detail::zgemm_batch("ozdgemm_zgemm_batched_reference", transa, transb, m, n, k,
                                      alpha, lda, ldb, beta, ldc, batch_count, options,
                                      array_operands<cuDoubleComplex>{A, B, C});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_strided_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda, int64_t stride_a,
    const double* B, int64_t ldb, int64_t stride_b, const double* beta, double* C, int64_t ldc,
    int64_t stride_c, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::device_batch<double>(
      "ozdgemm_dgemm_strided_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options, strided_operands<double>{A, stride_a, B, stride_b, C, stride_c},
      [&](const double* a, const double* b, double* c) {
        return ozdgemm_dgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const double* alpha, const double* const A[], int64_t lda,
    const double* const B[], int64_t ldb, const double* beta, double* const C[], int64_t ldc,
    int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::device_batch<double>(
      "ozdgemm_dgemm_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options, array_operands<double>{A, B, C},
      [&](const double* a, const double* b, double* c) {
        return ozdgemm_dgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_strided_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
    int64_t stride_a, const cuDoubleComplex* B, int64_t ldb, int64_t stride_b,
    const cuDoubleComplex* beta, cuDoubleComplex* C, int64_t ldc, int64_t stride_c,
    int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::device_batch<cuDoubleComplex>(
      "ozdgemm_zgemm_strided_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options,
      strided_operands<cuDoubleComplex>{A, stride_a, B, stride_b, C, stride_c},
      [&](const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* c) {
        return ozdgemm_zgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* const A[],
    int64_t lda, const cuDoubleComplex* const B[], int64_t ldb, const cuDoubleComplex* beta,
    cuDoubleComplex* const C[], int64_t ldc, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::device_batch<cuDoubleComplex>(
      "ozdgemm_zgemm_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options, array_operands<cuDoubleComplex>{A, B, C},
      [&](const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* c) {
        return ozdgemm_zgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

}  // extern "C"
