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

#include <complex>
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

// ---- Complex (ZGEMM) counterparts, on std::complex<double> (laid out as cuDoubleComplex).
// trans 'C' conjugates. Complex products are written out as cuBLAS writes them:
// re = ar br - ai bi, im = ar bi + ai br.
using zdouble = std::complex<double>;

// Element (i, l) of op(X), conjugated for 'C'.
zdouble zop_at(char trans, const zdouble* x, int64_t ld, int64_t i, int64_t l);

// dd_gemm's complex twin: each part of every dot product (its 2k real terms) in double-double,
// alpha and beta applied in double-double, each part rounded once. For finite data as above,
// each part of R satisfies |R - exact| <= 2^-53 |R| + (4k + 16) 2^-100 S, with S the sum of the
// magnitudes of its real terms (alpha and beta included). Non-finite parts come from
// naive_zgemm, element by element.
void dd_zgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, zdouble alpha,
              const zdouble* A, int64_t lda, const zdouble* B, int64_t ldb, zdouble beta,
              zdouble* C, int64_t ldc);

// The plain complex triple loop: acc += op(A)_il op(B)_lj (product written out, l ascending,
// no fma), then C = alpha acc + beta C written out the same way; alpha == 0 reads neither A
// nor B, beta == 0 does not read C. The Inf/NaN class a native ZGEMM gives, per part.
void naive_zgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, zdouble alpha,
                 const zdouble* A, int64_t lda, const zdouble* B, int64_t ldb, zdouble beta,
                 zdouble* C, int64_t ldc);

// out_ij = sum_l |op(A)_il| |op(B)_lj| with |.| the complex modulus, in double.
void abs_zproduct(char transa, char transb, int64_t m, int64_t n, int64_t k, const zdouble* A,
                  int64_t lda, const zdouble* B, int64_t ldb, double* out, int64_t ldo);

}  // namespace ozdgemm::test
