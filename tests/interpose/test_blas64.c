/* libozdgemm_test_blas64.so: see test_blas64.h. A stand-in, built in CI, for the BLAS libraries
 * whose names the ILP64 and scipy-openblas hooks shadow (no pip, no ILP64 BLAS package needed). */
#include "test_blas64.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "naive_gemm.h"

static int reports = 0;
static char report_routine[32];
static int64_t report_info = 0;
static char call_routine[32];
static int64_t call_sizes[6];

/* Calls per routine name since the last reset. */
enum { kCounted = 128 };
static char counted_name[kCounted][32];
static int counted_calls[kCounted];

static void count_call(const char* name) {
  for (int i = 0; i < kCounted; ++i) {
    if (counted_name[i][0] == '\0') {
      strncpy(counted_name[i], name, 31);
      counted_name[i][31] = '\0';
    }
    if (strcmp(counted_name[i], name) == 0) {
      ++counted_calls[i];
      return;
    }
  }
}

int test_blas64_calls(const char* name) {
  for (int i = 0; i < kCounted && counted_name[i][0] != '\0'; ++i)
    if (strcmp(counted_name[i], name) == 0) return counted_calls[i];
  return 0;
}

void test_blas64_reset(void) {
  memset(counted_name, 0, sizeof counted_name);
  memset(counted_calls, 0, sizeof counted_calls);
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
  count_call(name);
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

/* ------------------------------------------------------------------------------------------- */
/* The Level-3 routines other than GEMM (test_blas64.h). */

enum shape { RANK_K, RANK_2K, SYMM, TRI };

/* A routine of the reference BLAS, past any preloaded library. */
static void* reference(const char* name) {
  static void* handle = NULL;
  if (handle == NULL) handle = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  void* f = handle != NULL ? dlsym(handle, name) : NULL;
  if (f == NULL) abort(); /* the tests need the reference BLAS */
  return f;
}

static int narrow(int64_t x) { return x > INT_MAX ? INT_MAX : (int)x; }

static char upper_of(char c) { return (char)toupper((unsigned char)c); }

/* A CBLAS enum as the Fortran CHARACTER it stands for; '?' when invalid. */
static char from_enum(int v) {
  switch (v) {
    case 111:
      return 'N';
    case 112:
      return 'T';
    case 113:
      return 'C';
    case 121:
      return 'U';
    case 122:
      return 'L';
    case 131:
      return 'N';
    case 132:
      return 'U';
    case 141:
      return 'L';
    case 142:
      return 'R';
    default:
      return '?';
  }
}

/* One Level-3 call of any name. `f`: the CHARACTER arguments (uplo trans, side uplo, side
 * uplo transa diag); s1, s2: the sizes (n k, m n, m n); alpha, beta: (re, im) pairs. */
static void level3(const char* name, const char* routine, enum shape shape, int layout, char f[4],
                   int64_t s1, int64_t s2, const double* alpha, const void* a, int64_t lda,
                   const void* b, int64_t ldb, const double* beta, void* c, int64_t ldc) {
  copy_name(call_routine, name);
  count_call(name);
  const int64_t sizes[6] = {s1, s2, 0, lda, shape == RANK_K ? 0 : ldb, shape == TRI ? 0 : ldc};
  memcpy(call_sizes, sizes, sizeof sizes);
  const int cblas = layout != 0, row = layout == 101;
  const int cplx = routine[0] == 'z', herm = routine[1] == 'h';
  for (int i = 0; i < 4; ++i) f[i] = upper_of(f[i]);
  /* Reference BLAS's checks, in its order, with Fortran's parameter numbers. */
  int info = 0;
  const int64_t one = 1;
  if (cblas && layout != 101 && layout != 102) {
    info = 0 - 1; /* CBLAS parameter 1 */
  } else if (shape == RANK_K || shape == RANK_2K) {
    const int trans_ok = f[1] == 'N' || (!cplx && (f[1] == 'T' || f[1] == 'C')) ||
                         (cplx && f[1] == (herm ? 'C' : 'T'));
    const int64_t rows = f[1] == 'N' ? s1 : s2; /* of op(A)^T's storage, column-major */
    const int64_t need = row ? (f[1] == 'N' ? s2 : s1) : rows;
    if (f[0] != 'U' && f[0] != 'L')
      info = 1;
    else if (!trans_ok)
      info = 2;
    else if (s1 < 0)
      info = 3;
    else if (s2 < 0)
      info = 4;
    else if (lda < (need > one ? need : one))
      info = 7;
    else if (shape == RANK_2K && ldb < (need > one ? need : one))
      info = 9;
    else if (ldc < (s1 > one ? s1 : one))
      info = shape == RANK_2K ? 12 : 10;
  } else {
    const int64_t ka = f[0] == 'L' ? s1 : s2, lead = row ? s2 : s1;
    if (f[0] != 'L' && f[0] != 'R')
      info = 1;
    else if (f[1] != 'U' && f[1] != 'L')
      info = 2;
    else if (shape == TRI && f[2] != 'N' && f[2] != 'T' && f[2] != 'C')
      info = 3;
    else if (shape == TRI && f[3] != 'U' && f[3] != 'N')
      info = 4;
    else if (s1 < 0)
      info = shape == TRI ? 5 : 3;
    else if (s2 < 0)
      info = shape == TRI ? 6 : 4;
    else if (lda < (ka > one ? ka : one))
      info = shape == TRI ? 9 : 7;
    else if (ldb < (lead > one ? lead : one))
      info = shape == TRI ? 11 : 9;
    else if (shape == SYMM && ldc < (lead > one ? lead : one))
      info = 12;
  }
  if (info != 0) {
    ++reports;
    copy_name(report_routine, name);
    report_info = info < 0 ? 1 : info + cblas;
    return;
  }
  double al[2] = {alpha[0], alpha[1]};
  if (row) { /* the column-major call of the transposes, as reference CBLAS makes it */
    if (shape == RANK_K || shape == RANK_2K) {
      f[0] = f[0] == 'U' ? 'L' : 'U';
      f[1] = f[1] == 'N' ? (herm ? 'C' : 'T') : 'N';
      if (herm && shape == RANK_2K) al[1] = -al[1];
    } else {
      f[0] = f[0] == 'L' ? 'R' : 'L';
      f[1] = f[1] == 'U' ? 'L' : 'U';
      const int64_t t = s1;
      s1 = s2;
      s2 = t;
    }
  }
  char fortran[16];
  snprintf(fortran, sizeof fortran, "%s_", routine);
  const int i1 = (int)s1, i2 = (int)s2, ia = narrow(lda), ib = narrow(ldb), ic = narrow(ldc);
  void* fn = reference(fortran);
  switch (shape) {
    case RANK_K:
      ((void (*)(const char*, const char*, const int*, const int*, const void*, const void*,
                 const int*, const void*, void*, const int*, size_t, size_t))fn)(
          &f[0], &f[1], &i1, &i2, al, a, &ia, beta, c, &ic, 1, 1);
      break;
    case RANK_2K:
    case SYMM:
      ((void (*)(const char*, const char*, const int*, const int*, const void*, const void*,
                 const int*, const void*, const int*, const void*, void*, const int*, size_t,
                 size_t))fn)(&f[0], &f[1], &i1, &i2, al, a, &ia, b, &ib, beta, c, &ic, 1, 1);
      break;
    case TRI:
      ((void (*)(const char*, const char*, const char*, const char*, const int*, const int*,
                 const void*, const void*, const int*, void*, const int*, size_t, size_t, size_t,
                 size_t))fn)(&f[0], &f[1], &f[2], &f[3], &i1, &i2, al, a, &ia, (void*)b, &ib, 1, 1,
                             1, 1);
      break;
  }
}

/* A scalar as a (re, im) pair: by value (real) or by address (complex). */
static void pair_of_double(double v, double out[2]) {
  out[0] = v;
  out[1] = 0.0;
}
static void pair_of_pointer(const void* p, double out[2]) { memcpy(out, p, 2 * sizeof(double)); }
#define TB_PAIR(V, OUT) \
  _Generic((V), double : pair_of_double, default : pair_of_pointer)((V), (OUT))

#define TB_DEFINE_F_RANK_K(NAME, R, INT)                                       \
  TB_F_RANK_K(NAME, INT) {                                                     \
    (void)lu;                                                                  \
    (void)lt;                                                                  \
    char f[4] = {*uplo, *trans, 'N', 'N'};                                     \
    double al[2] = {0, 0}, be[2] = {0, 0};                                     \
    memcpy(al, alpha, (R[0] == 'z' && R[1] != 'h' ? 2 : 1) * sizeof(double));  \
    memcpy(be, beta, (R[0] == 'z' && R[1] != 'h' ? 2 : 1) * sizeof(double));   \
    level3(#NAME, R, RANK_K, 0, f, *n, *k, al, a, *lda, NULL, 0, be, c, *ldc); \
  }
#define TB_DEFINE_F_RANK_2K(NAME, R, INT)                                       \
  TB_F_RANK_2K(NAME, INT) {                                                     \
    (void)lu;                                                                   \
    (void)lt;                                                                   \
    char f[4] = {*uplo, *trans, 'N', 'N'};                                      \
    double al[2] = {0, 0}, be[2] = {0, 0};                                      \
    memcpy(al, alpha, (R[0] == 'z' ? 2 : 1) * sizeof(double));                  \
    memcpy(be, beta, (R[0] == 'z' && R[1] != 'h' ? 2 : 1) * sizeof(double));    \
    level3(#NAME, R, RANK_2K, 0, f, *n, *k, al, a, *lda, b, *ldb, be, c, *ldc); \
  }
#define TB_DEFINE_F_SYMM(NAME, R, INT)                                       \
  TB_F_SYMM(NAME, INT) {                                                     \
    (void)ls;                                                                \
    (void)lu;                                                                \
    char f[4] = {*side, *uplo, 'N', 'N'};                                    \
    double al[2] = {0, 0}, be[2] = {0, 0};                                   \
    memcpy(al, alpha, (R[0] == 'z' ? 2 : 1) * sizeof(double));               \
    memcpy(be, beta, (R[0] == 'z' ? 2 : 1) * sizeof(double));                \
    level3(#NAME, R, SYMM, 0, f, *m, *n, al, a, *lda, b, *ldb, be, c, *ldc); \
  }
#define TB_DEFINE_F_TRI(NAME, R, INT)                                       \
  TB_F_TRI(NAME, INT) {                                                     \
    (void)ls;                                                               \
    (void)lu;                                                               \
    (void)lt;                                                               \
    (void)ld;                                                               \
    char f[4] = {*side, *uplo, *transa, *diag};                             \
    double al[2] = {0, 0}, be[2] = {0, 0};                                  \
    memcpy(al, alpha, (R[0] == 'z' ? 2 : 1) * sizeof(double));              \
    level3(#NAME, R, TRI, 0, f, *m, *n, al, a, *lda, b, *ldb, be, NULL, 0); \
  }
#define TB_DEFINE_C_RANK_K(NAME, R, INT, AL, BE)                                                \
  TB_C_RANK_K(NAME, INT, AL, BE) {                                                              \
    char f[4] = {from_enum(uplo), from_enum(trans), 'N', 'N'};                                  \
    double al[2], be[2];                                                                        \
    TB_PAIR(alpha, al);                                                                         \
    TB_PAIR(beta, be);                                                                          \
    level3(#NAME, R, RANK_K, layout == 101 || layout == 102 ? layout : -1, f, n, k, al, a, lda, \
           NULL, 0, be, c, ldc);                                                                \
  }
#define TB_DEFINE_C_RANK_2K(NAME, R, INT, AL, BE)                                                \
  TB_C_RANK_2K(NAME, INT, AL, BE) {                                                              \
    char f[4] = {from_enum(uplo), from_enum(trans), 'N', 'N'};                                   \
    double al[2], be[2];                                                                         \
    TB_PAIR(alpha, al);                                                                          \
    TB_PAIR(beta, be);                                                                           \
    level3(#NAME, R, RANK_2K, layout == 101 || layout == 102 ? layout : -1, f, n, k, al, a, lda, \
           b, ldb, be, c, ldc);                                                                  \
  }
#define TB_DEFINE_C_SYMM(NAME, R, INT, AL, BE)                                                   \
  TB_C_SYMM(NAME, INT, AL) {                                                                     \
    char f[4] = {from_enum(side), from_enum(uplo), 'N', 'N'};                                    \
    double al[2], be[2];                                                                         \
    TB_PAIR(alpha, al);                                                                          \
    TB_PAIR(beta, be);                                                                           \
    level3(#NAME, R, SYMM, layout == 101 || layout == 102 ? layout : -1, f, m, n, al, a, lda, b, \
           ldb, be, c, ldc);                                                                     \
  }
#define TB_DEFINE_C_TRI(NAME, R, INT, AL, BE)                                                   \
  TB_C_TRI(NAME, INT, AL) {                                                                     \
    char f[4] = {from_enum(side), from_enum(uplo), from_enum(transa), from_enum(diag)};         \
    double al[2], be[2] = {0, 0};                                                               \
    TB_PAIR(alpha, al);                                                                         \
    level3(#NAME, R, TRI, layout == 101 || layout == 102 ? layout : -1, f, m, n, al, a, lda, b, \
           ldb, be, NULL, 0);                                                                   \
  }
#define TB_DEFINE(R, SHAPE, CPLX, AL, BE)                           \
  TB_DEFINE_F_##SHAPE(R##_64_, #R, int64_t)                         \
      TB_DEFINE_C_##SHAPE(cblas_##R##64_, #R, int64_t, AL, BE)      \
          TB_DEFINE_F_##SHAPE(scipy_##R##_, #R, int)                \
              TB_DEFINE_C_##SHAPE(scipy_cblas_##R, #R, int, AL, BE) \
                  TB_DEFINE_F_##SHAPE(scipy_##R##_64_, #R, int64_t) \
                      TB_DEFINE_C_##SHAPE(scipy_cblas_##R##64_, #R, int64_t, AL, BE)
TB_LEVEL3_ROUTINES(TB_DEFINE)
