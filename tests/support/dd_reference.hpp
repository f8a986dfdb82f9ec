// Reference GEMMs for checking the emulation, column-major, BLAS argument order.
//
// dd_gemm accumulates every dot product in double-double (TwoProd by fma, TwoSum), applies
// alpha and beta in double-double and rounds once to double. For finite data whose products
// neither overflow nor fall below 2^-969 (where TwoProd's error term stops being exact), the
// result R satisfies
//   |R - (alpha op(A)op(B) + beta C)_ij| <= 2^-53 |R| + (k + 2) 2^-100 (|alpha| |A||B| + |beta C|)_ij,
// which the accuracy tests add as "dd slack". Where the double-double value is not finite the
// element is taken from naive_gemm instead, so that it carries native DGEMM's Inf/NaN class.
//
// Plain C++; no GMP or CUDA, so the GPU tests can use it too.
#pragma once

#include <cstdint>

namespace ozdgemm::test {

// Element (i, l) of op(X) for a column-major X with leading dimension ld. trans is 'N', 'T'
// or 'C' (either case; 'C' == 'T' for real data); anything else throws invalid_argument.
double op_at(char trans, const double* x, int64_t ld, int64_t i, int64_t l);

// C = alpha op(A) op(B) + beta C, op(A) m x k, op(B) k x n. beta == 0 means C is not read.
void dd_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
             const double* A, int64_t lda, const double* B, int64_t ldb, double beta,
             double* C, int64_t ldc);

// out_ij = sum_l |op(A)_il| |op(B)_lj| in double (for the scaled error metric). Rounding
// makes it accurate to a relative (k + 1) 2^-53, ample for a metric's denominator.
void abs_product(char transa, char transb, int64_t m, int64_t n, int64_t k, const double* A,
                 int64_t lda, const double* B, int64_t ldb, double* out, int64_t ldo);

// The plain FP64 triple loop (l ascending, no fma): what a reference DGEMM computes, and the
// Inf/NaN class native DGEMM gives. alpha == 0 or k == 0 give beta C (with beta == 0
// writing zeros without reading C).
void naive_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
                const double* A, int64_t lda, const double* B, int64_t ldb, double beta,
                double* C, int64_t ldc);

}  // namespace ozdgemm::test
