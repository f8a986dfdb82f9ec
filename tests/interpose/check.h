/* Helpers shared by the interposition test programs: plain C, no ozdgemm headers (these are
 * ordinary BLAS client programs), so the reference below is independent of the library. */
#ifndef OZDGEMM_TESTS_INTERPOSE_CHECK_H
#define OZDGEMM_TESTS_INTERPOSE_CHECK_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic values in [-1, 1), different for every call. */
static inline double next_value(void) {
  static uint64_t state = 0x9e3779b97f4a7c15u;
  state = state * 6364136223846793005u + 1442695040888963407u;
  return (double)(state >> 11) * 0x1.0p-52 - 1.0;
}

/* `count` random values (a matrix and its padding). */
static inline double* random_buffer(size_t count) {
  double* p = (double*)malloc(sizeof(double) * (count > 0 ? count : 1));
  if (p == NULL) abort();
  for (size_t i = 0; i < count; ++i) p[i] = next_value();
  return p;
}

/* Element (i, j) of op(X), X stored column-major (or row-major) with leading dimension ld. */
static inline double op_at(const double* x, int ld, int row_major, int trans, int i, int j) {
  const int r = trans ? j : i, c = trans ? i : j;
  return row_major ? x[(size_t)r * ld + c] : x[(size_t)c * ld + r];
}

/* Offset of element (i, j) of C. */
static inline size_t c_index(int ld, int row_major, int i, int j) {
  return row_major ? (size_t)i * ld + j : (size_t)j * ld + i;
}

/* want = alpha op(A) op(B) + beta C in long double (m x n, dense column-major), and the bound
 * scale = |alpha| sum_l |op(A)_il op(B)_lj| + |beta C_ij| that the error of any sound double
 * evaluation is a small multiple of eps times (k roundings for the CPU BLAS; the emulation is
 * within that of FP64 GEMM). beta == 0 does not read C, as BLAS specifies. */
static inline void reference_gemm(int row_major, int ta, int tb, int m, int n, int k, double alpha,
                                  const double* a, int lda, const double* b, int ldb, double beta,
                                  const double* c, int ldc, long double* want, long double* scale) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double s = 0, s_abs = 0;
      for (int l = 0; l < k; ++l) {
        const long double p =
            (long double)op_at(a, lda, row_major, ta, i, l) * op_at(b, ldb, row_major, tb, l, j);
        s += p;
        s_abs += fabsl(p);
      }
      const long double cij =
          beta == 0.0 ? 0.0L : (long double)beta * c[c_index(ldc, row_major, i, j)];
      want[(size_t)j * m + i] = (long double)alpha * s + cij;
      scale[(size_t)j * m + i] = fabsl((long double)alpha) * s_abs + fabsl(cij);
    }
}

/* |got - want| <= 16 (k + 2) eps scale for every element of C, and the padding of C (between m,
 * or n when row-major, and ldc) unchanged. Loose enough for any correct summation order, tight
 * enough that a wrong transpose, operand or leading dimension (errors of order 1) cannot pass.
 * Returns the number of bad elements and prints the first few. */
static inline int compare_gemm(const char* what, int row_major, int m, int n, int k,
                               const double* c, int ldc, const double* c_before,
                               const long double* want, const long double* scale) {
  const int rows = row_major ? n : m, cols = row_major ? m : n; /* of the storage */
  int bad = 0;
  for (int q = 0; q < cols; ++q)
    for (int p = 0; p < ldc; ++p) {
      const size_t at = (size_t)q * ldc + p;
      const double got = c[at];
      int ok;
      long double err = 0, tol = 0;
      if (p >= rows) {
        ok = memcmp(&got, &c_before[at], sizeof got) == 0;
      } else {
        const int i = row_major ? q : p, j = row_major ? p : q;
        err = fabsl((long double)got - want[(size_t)j * m + i]);
        tol = 16.0L * (k + 2) * DBL_EPSILON * scale[(size_t)j * m + i];
        ok = err <= tol;
      }
      if (!ok && bad++ < 5)
        fprintf(stderr, "FAIL %s: C storage (%d,%d) = %.17g, error %Lg > bound %Lg%s\n", what, p, q,
                got, err, tol, p >= rows ? " (padding changed)" : "");
    }
  return bad;
}

#endif
