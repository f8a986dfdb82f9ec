/* What the stand-in BLAS libraries of tests/interpose (test_blas64.c, test_batch_blas.c) share:
 * their flag parser and one GEMM as a plain loop, real or complex. */
#ifndef OZDGEMM_TESTS_INTERPOSE_NAIVE_GEMM_H
#define OZDGEMM_TESTS_INTERPOSE_NAIVE_GEMM_H

#include <ctype.h>
#include <stdint.h>

/* 0, 1, 2 for N, T, C (CBLAS codes, or Fortran characters in either case); -1 otherwise. */
static inline int naive_op_code(int cblas, int t) {
  if (cblas) return t == 111 ? 0 : t == 112 ? 1 : t == 113 ? 2 : -1;
  t = toupper(t);
  return t == 'N' ? 0 : t == 'T' ? 1 : t == 'C' ? 2 : -1;
}

static inline int64_t naive_at_least_one(int64_t x) { return x > 1 ? x : 1; }

/* C = alpha op(A) op(B) + beta C, column-major, ops as naive_op_code gives them; cplx: (re, im)
 * pairs, alpha and beta too. beta = 0 does not read C; alpha = 0 reads neither A nor B. */
static inline void naive_gemm(int cplx, int oa, int ob, int64_t m, int64_t n, int64_t k,
                              const double* alpha, const double* a, int64_t lda, const double* b,
                              int64_t ldb, const double* beta, double* c, int64_t ldc) {
  const int w = cplx ? 2 : 1; /* doubles per element */
  const double ar = alpha[0], ai = cplx ? alpha[1] : 0.0;
  const double br = beta[0], bi = cplx ? beta[1] : 0.0;
  const int read_c = br != 0.0 || bi != 0.0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double sr = 0.0, si = 0.0;
      if (ar != 0.0 || ai != 0.0)
        for (int64_t l = 0; l < k; ++l) {
          const double* x = a + w * (oa == 0 ? i + l * lda : l + i * lda);
          const double* y = b + w * (ob == 0 ? l + j * ldb : j + l * ldb);
          const double xr = x[0], xi = cplx ? (oa == 2 ? -x[1] : x[1]) : 0.0;
          const double yr = y[0], yi = cplx ? (ob == 2 ? -y[1] : y[1]) : 0.0;
          sr += xr * yr - xi * yi;
          si += xr * yi + xi * yr;
        }
      double* z = c + w * (i + j * ldc);
      const double zr = read_c ? z[0] : 0.0, zi = read_c && cplx ? z[1] : 0.0;
      z[0] = (ar * sr - ai * si) + (read_c ? br * zr - bi * zi : 0.0);
      if (cplx) z[1] = (ar * si + ai * sr) + (read_c ? br * zi + bi * zr : 0.0);
    }
}

/* naive_gemm of a CBLAS call's layout: row-major C = op(A) op(B) is column-major
 * C^T = op(B)^T op(A)^T. */
static inline void naive_gemm_layout(int row_major, int cplx, int oa, int ob, int64_t m, int64_t n,
                                     int64_t k, const double* alpha, const double* a, int64_t lda,
                                     const double* b, int64_t ldb, const double* beta, double* c,
                                     int64_t ldc) {
  if (row_major)
    naive_gemm(cplx, ob, oa, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
  else
    naive_gemm(cplx, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

#endif
