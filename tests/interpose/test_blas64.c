/* libozdgemm_test_blas64.so: see test_blas64.h. A stand-in, built in CI, for the BLAS libraries
 * whose names the ILP64 and scipy-openblas hooks shadow (no pip, no ILP64 BLAS package needed). */
#include "test_blas64.h"

#include <string.h>

#include "naive_gemm.h"

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

/* One GEMM call of any name: a real (cplx 0) or complex call, Fortran (layout ignored) or
 * CBLAS. alpha, beta: one double, or a (re, im) pair. */
static void gemm(const char* name, int cblas, int cplx, int layout, int ta, int tb, int64_t m,
                 int64_t n, int64_t k, const double* alpha, const double* a, int64_t lda,
                 const double* b, int64_t ldb, const double* beta, double* c, int64_t ldc) {
  copy_name(call_routine, name);
  const int64_t sizes[6] = {m, n, k, lda, ldb, ldc};
  memcpy(call_sizes, sizes, sizeof sizes);

  const int oa = naive_op_code(cblas, ta), ob = naive_op_code(cblas, tb);
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
    else if (lda < naive_at_least_one(need_a))
      info = 9;
    else if (ldb < naive_at_least_one(need_b))
      info = 11;
    else if (ldc < naive_at_least_one(need_c))
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
    else if (lda < naive_at_least_one(oa == 0 ? m : k))
      info = 8;
    else if (ldb < naive_at_least_one(ob == 0 ? k : n))
      info = 10;
    else if (ldc < naive_at_least_one(m))
      info = 13;
  }
  if (info != 0) {
    ++reports;
    copy_name(report_routine, name);
    report_info = info;
    return;
  }
  naive_gemm_layout(row, cplx, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
