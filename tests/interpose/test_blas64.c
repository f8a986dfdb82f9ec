/* libozdgemm_test_blas64.so: see test_blas64.h. A stand-in, built in CI, for the BLAS libraries
 * whose names the ILP64 and scipy-openblas hooks shadow (no pip, no ILP64 BLAS package needed). */
#include "test_blas64.h"

#include <ctype.h>
#include <string.h>

static int reports = 0;
static char report_routine[32];
static int64_t report_info = 0;
static char call_routine[32];
static int64_t call_sizes[6];

void test_blas64_reset(void) {
  reports = 0;
  report_routine[0] = call_routine[0] = '\0';
  report_info = 0;
  memset(call_sizes, 0, sizeof call_sizes);
}

int test_blas64_reports(const char** routine, int64_t* info) {
  *routine = report_routine;
  *info = report_info;
  return reports;
}

const char* test_blas64_last_call(int64_t sizes[6]) {
  memcpy(sizes, call_sizes, sizeof call_sizes);
  return call_routine[0] != '\0' ? call_routine : NULL;
}

static void copy_name(char* to, const char* name) {
  strncpy(to, name, 31);
  to[31] = '\0';
}

/* 0, 1, 2 for N, T, C; -1 for anything else. */
static int op_code(int cblas, int t) {
  if (cblas) return t == 111 ? 0 : t == 112 ? 1 : t == 113 ? 2 : -1;
  t = toupper(t);
  return t == 'N' ? 0 : t == 'T' ? 1 : t == 'C' ? 2 : -1;
}

static int64_t at_least_one(int64_t x) { return x > 1 ? x : 1; }

/* One GEMM call of any name: a real (cplx 0) or complex call, Fortran (layout ignored) or
 * CBLAS. alpha, beta: one double, or a (re, im) pair. */
static void gemm(const char* name, int cblas, int cplx, int layout, int ta, int tb, int64_t m,
                 int64_t n, int64_t k, const double* alpha, const double* a, int64_t lda,
                 const double* b, int64_t ldb, const double* beta, double* c, int64_t ldc) {
  copy_name(call_routine, name);
  const int64_t sizes[6] = {m, n, k, lda, ldb, ldc};
  memcpy(call_sizes, sizes, sizeof sizes);

  int oa = op_code(cblas, ta), ob = op_code(cblas, tb);
  const int row = cblas && layout == 101;
  int info = 0;
  if (cblas) {
    /* The leading extent of each stored matrix: row-major stores the transpose. */
    const int64_t need_a = row ? (oa == 0 ? k : m) : (oa == 0 ? m : k);
    const int64_t need_b = row ? (ob == 0 ? n : k) : (ob == 0 ? k : n);
    const int64_t need_c = row ? n : m;
    if (layout != 101 && layout != 102)
      info = 1;
    else if (oa < 0)
      info = 2;
    else if (ob < 0)
      info = 3;
    else if (m < 0)
      info = 4;
    else if (n < 0)
      info = 5;
    else if (k < 0)
      info = 6;
    else if (lda < at_least_one(need_a))
      info = 9;
    else if (ldb < at_least_one(need_b))
      info = 11;
    else if (ldc < at_least_one(need_c))
      info = 14;
  } else {
    if (oa < 0)
      info = 1;
    else if (ob < 0)
      info = 2;
    else if (m < 0)
      info = 3;
    else if (n < 0)
      info = 4;
    else if (k < 0)
      info = 5;
    else if (lda < at_least_one(oa == 0 ? m : k))
      info = 8;
    else if (ldb < at_least_one(ob == 0 ? k : n))
      info = 10;
    else if (ldc < at_least_one(m))
      info = 13;
  }
  if (info != 0) {
    ++reports;
    copy_name(report_routine, name);
    report_info = info;
    return;
  }
  if (row) { /* C^T = op(B)^T op(A)^T, column-major */
    const double* t = a;
    a = b;
    b = t;
    int64_t x = lda;
    lda = ldb;
    ldb = x;
    x = m;
    m = n;
    n = x;
    int o = oa;
    oa = ob;
    ob = o;
  }
  const int w = cplx ? 2 : 1; /* doubles per element */
  const double ar = alpha[0], ai = cplx ? alpha[1] : 0.0;
  const double br = beta[0], bi = cplx ? beta[1] : 0.0;
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
      const double zr = z[0], zi = cplx ? z[1] : 0.0;
      const int read_c = br != 0.0 || bi != 0.0;
      z[0] = (ar * sr - ai * si) + (read_c ? br * zr - bi * zi : 0.0);
      if (cplx) z[1] = (ar * si + ai * sr) + (read_c ? br * zi + bi * zr : 0.0);
    }
}

/* The exported names, each one call of gemm() under its own name. */
#define TB_DEFINE_FORTRAN(NAME, INT, CPLX)                                                    \
  TB_FORTRAN(NAME, INT) {                                                                     \
    (void)transa_len;                                                                         \
    (void)transb_len;                                                                         \
    gemm(#NAME, 0, CPLX, 102, *transa, *transb, *m, *n, *k, alpha, a, *lda, b, *ldb, beta, c, \
         *ldc);                                                                               \
  }
#define TB_DEFINE_CBLAS_D(NAME, INT)                                                           \
  TB_CBLAS_D(NAME, INT) {                                                                      \
    gemm(#NAME, 1, 0, layout, transa, transb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc); \
  }
#define TB_DEFINE_CBLAS_Z(NAME, INT)                                                         \
  TB_CBLAS_Z(NAME, INT) {                                                                    \
    gemm(#NAME, 1, 1, layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); \
  }

TB_DEFINE_FORTRAN(scipy_dgemm_, int, 0)
TB_DEFINE_FORTRAN(scipy_zgemm_, int, 1)
TB_DEFINE_CBLAS_D(scipy_cblas_dgemm, int)
TB_DEFINE_CBLAS_Z(scipy_cblas_zgemm, int)
TB_DEFINE_FORTRAN(scipy_dgemm_64_, int64_t, 0)
TB_DEFINE_FORTRAN(scipy_zgemm_64_, int64_t, 1)
TB_DEFINE_CBLAS_D(scipy_cblas_dgemm64_, int64_t)
TB_DEFINE_CBLAS_Z(scipy_cblas_zgemm64_, int64_t)
TB_DEFINE_FORTRAN(dgemm_64_, int64_t, 0)
TB_DEFINE_FORTRAN(zgemm_64_, int64_t, 1)
TB_DEFINE_CBLAS_D(cblas_dgemm64_, int64_t)
TB_DEFINE_CBLAS_Z(cblas_zgemm64_, int64_t)
