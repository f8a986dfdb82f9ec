/* libozdgemm_test_batch.so: see test_batch_blas.h. A stand-in, built in CI, for the CPU BLAS
 * libraries that define the strided-batch extensions (MKL, OpenBLAS >= 0.3.30). */
#include "test_batch_blas.h"

#include <string.h>

#include "naive_gemm.h"

static int reports = 0;
static char report_routine[32];
static int report_info = 0;
static char call_routine[32];

void test_batch_reset(void) {
  reports = report_info = 0;
  report_routine[0] = call_routine[0] = '\0';
}

int test_batch_reports(const char** routine, int* info) {
  *routine = report_routine;
  *info = report_info;
  return reports;
}

const char* test_batch_last_call(void) { return call_routine[0] != '\0' ? call_routine : NULL; }

static void copy_name(char* to, const char* name) {
  strncpy(to, name, 31);
  to[31] = '\0';
}

/* What xerbla would say: the routine and the position of its first invalid argument. */
static void report(const char* name, int info) {
  ++reports;
  copy_name(report_routine, name);
  report_info = info;
}

/* One batch of any of the four routines. Parameter positions: Fortran transa 1, transb 2, m 3,
 * n 4, k 5, lda 8, stridea 9, ldb 11, strideb 12, ldc 15, stridec 16, batch_size 17; CBLAS one
 * more for each (layout is 1). */
static void batch(const char* name, int cblas, int cplx, int layout, int ta, int tb, int m, int n,
                  int k, const double* alpha, const double* a, int lda, int sa, const double* b,
                  int ldb, int sb, const double* beta, double* c, int ldc, int sc, int count) {
  copy_name(call_routine, name);
  const int oa = naive_op_code(cblas, ta), ob = naive_op_code(cblas, tb);
  const int row = cblas && layout == 101, shift = cblas ? 1 : 0;
  /* The leading extent of each stored matrix: row-major stores the transpose. */
  const int need_a = row ? (oa == 0 ? k : m) : (oa == 0 ? m : k);
  const int need_b = row ? (ob == 0 ? n : k) : (ob == 0 ? k : n);
  const int need_c = row ? n : m;
  int info = 0;
  if (cblas && layout != 101 && layout != 102)
    info = 1;
  else if (oa < 0)
    info = 1 + shift;
  else if (ob < 0)
    info = 2 + shift;
  else if (m < 0)
    info = 3 + shift;
  else if (n < 0)
    info = 4 + shift;
  else if (k < 0)
    info = 5 + shift;
  else if (lda < naive_at_least_one(need_a))
    info = 8 + shift;
  else if (sa < 0)
    info = 9 + shift;
  else if (ldb < naive_at_least_one(need_b))
    info = 11 + shift;
  else if (sb < 0)
    info = 12 + shift;
  else if (ldc < naive_at_least_one(need_c))
    info = 15 + shift;
  else if (sc < 0)
    info = 16 + shift;
  else if (count < 0)
    info = 17 + shift;
  if (info != 0) {
    report(name, info);
    return;
  }
  const int w = cplx ? 2 : 1; /* doubles per element */
  for (int p = 0; p < count; ++p)
    naive_gemm_layout(row, cplx, oa, ob, m, n, k, alpha, a + (size_t)w * p * sa, lda,
                      b + (size_t)w * p * sb, ldb, beta, c + (size_t)w * p * sc, ldc);
}

#define TBB_DEFINE_FORTRAN(NAME, CPLX)                                                          \
  TBB_FORTRAN(NAME) {                                                                           \
    (void)transa_len;                                                                           \
    (void)transb_len;                                                                           \
    batch(#NAME, 0, CPLX, 102, *transa, *transb, *m, *n, *k, alpha, a, *lda, *stridea, b, *ldb, \
          *strideb, beta, c, *ldc, *stridec, *batch_size);                                      \
  }
TBB_DEFINE_FORTRAN(dgemm_batch_strided_, 0)
TBB_DEFINE_FORTRAN(zgemm_batch_strided_, 1)

void cblas_dgemm_batch_strided(int layout, int transa, int transb, int m, int n, int k,
                               double alpha, const double* a, int lda, int stridea, const double* b,
                               int ldb, int strideb, double beta, double* c, int ldc, int stridec,
                               int batch_size) {
  batch("cblas_dgemm_batch_strided", 1, 0, layout, transa, transb, m, n, k, &alpha, a, lda, stridea,
        b, ldb, strideb, &beta, c, ldc, stridec, batch_size);
}

void cblas_zgemm_batch_strided(int layout, int transa, int transb, int m, int n, int k,
                               const void* alpha, const void* a, int lda, int stridea,
                               const void* b, int ldb, int strideb, const void* beta, void* c,
                               int ldc, int stridec, int batch_size) {
  batch("cblas_zgemm_batch_strided", 1, 1, layout, transa, transb, m, n, k, alpha, a, lda, stridea,
        b, ldb, strideb, beta, c, ldc, stridec, batch_size);
}

/* One group-batch call of any of the four routines: flags as characters (Fortran) or CBLAS codes,
 * every group checked first, then each matrix as one naive GEMM. */
static void group(const char* name, int cblas, int cplx, int layout, const char* fta,
                  const char* ftb, const int* cta, const int* ctb, const int* m, const int* n,
                  const int* k, const double* alpha, const void** a, const int* lda, const void** b,
                  const int* ldb, const double* beta, void** c, const int* ldc, int group_count,
                  const int* group_size) {
  copy_name(call_routine, name);
  const int shift = cblas ? 1 : 0, row = cblas && layout == 101, w = cplx ? 2 : 1;
  int info = 0;
  if (cblas && layout != 101 && layout != 102) info = 1;
  if (info == 0 && group_count < 0) info = 14 + shift;
  for (int g = 0; info == 0 && g < group_count; ++g) {
    const int oa = naive_op_code(cblas, cblas ? cta[g] : fta[g]);
    const int ob = naive_op_code(cblas, cblas ? ctb[g] : ftb[g]);
    const int need_a = row ? (oa == 0 ? k[g] : m[g]) : (oa == 0 ? m[g] : k[g]);
    const int need_b = row ? (ob == 0 ? n[g] : k[g]) : (ob == 0 ? k[g] : n[g]);
    const int need_c = row ? n[g] : m[g];
    if (oa < 0)
      info = 1 + shift;
    else if (ob < 0)
      info = 2 + shift;
    else if (m[g] < 0)
      info = 3 + shift;
    else if (n[g] < 0)
      info = 4 + shift;
    else if (k[g] < 0)
      info = 5 + shift;
    else if (lda[g] < naive_at_least_one(need_a))
      info = 8 + shift;
    else if (ldb[g] < naive_at_least_one(need_b))
      info = 10 + shift;
    else if (ldc[g] < naive_at_least_one(need_c))
      info = 13 + shift;
    else if (group_size[g] < 0)
      info = 15 + shift;
  }
  if (info != 0) {
    report(name, info);
    return;
  }
  int p = 0;
  for (int g = 0; g < group_count; ++g) {
    const int oa = naive_op_code(cblas, cblas ? cta[g] : fta[g]);
    const int ob = naive_op_code(cblas, cblas ? ctb[g] : ftb[g]);
    for (int i = 0; i < group_size[g]; ++i, ++p)
      naive_gemm_layout(row, cplx, oa, ob, m[g], n[g], k[g], alpha + w * g, a[p], lda[g], b[p],
                        ldb[g], beta + w * g, c[p], ldc[g]);
  }
}

#define TBB_DEFINE_FORTRAN_GROUP(NAME, CPLX)                                                     \
  TBB_FORTRAN_GROUP(NAME) {                                                                      \
    (void)transa_len;                                                                            \
    (void)transb_len;                                                                            \
    group(#NAME, 0, CPLX, 102, transa, transb, NULL, NULL, m, n, k, alpha, a, lda, b, ldb, beta, \
          c, ldc, *group_count, group_size);                                                     \
  }
TBB_DEFINE_FORTRAN_GROUP(dgemm_batch_, 0)
TBB_DEFINE_FORTRAN_GROUP(zgemm_batch_, 1)

void cblas_dgemm_batch(int layout, const int* transa, const int* transb, const int* m, const int* n,
                       const int* k, const double* alpha, const double** a, const int* lda,
                       const double** b, const int* ldb, const double* beta, double** c,
                       const int* ldc, int group_count, const int* group_size) {
  group("cblas_dgemm_batch", 1, 0, layout, NULL, NULL, transa, transb, m, n, k, alpha,
        (const void**)a, lda, (const void**)b, ldb, beta, (void**)c, ldc, group_count, group_size);
}

void cblas_zgemm_batch(int layout, const int* transa, const int* transb, const int* m, const int* n,
                       const int* k, const void* alpha, const void** a, const int* lda,
                       const void** b, const int* ldb, const void* beta, void** c, const int* ldc,
                       int group_count, const int* group_size) {
  group("cblas_zgemm_batch", 1, 1, layout, NULL, NULL, transa, transb, m, n, k,
        (const double*)alpha, a, lda, b, ldb, (const double*)beta, c, ldc, group_count, group_size);
}
