/* The test BLAS of tests/interpose (libozdgemm_test_blas64.so): the GEMM names of scipy-openblas
 * (LP64 scipy_*, ILP64 scipy_*64_) and the ILP64 names of reference BLAS's and OpenBLAS's 64-bit
 * builds (*64_), as plain loops. Each checks its arguments as reference BLAS does and reports a
 * bad one to the library's own recorder (routine name and parameter number, as xerbla would)
 * instead of xerbla; Fortran names number the parameters as dgemm.f (1, 2, 3, 4, 5, 8, 10, 13),
 * CBLAS names by their position in the CBLAS call (layout 1, ..., ldc 14). Every call, valid or
 * not, records the integers it received. A client reaches the library's own definitions,
 * bypassing LD_PRELOAD, with dlsym on its handle (dlopen of its soname with RTLD_NOLOAD). The
 * Level-3 names below are described there. */
#ifndef OZDGEMM_TESTS_INTERPOSE_TEST_BLAS64_H
#define OZDGEMM_TESTS_INTERPOSE_TEST_BLAS64_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TB_FORTRAN(NAME, INT)                                                                      \
  void NAME(const char* transa, const char* transb, const INT* m, const INT* n, const INT* k,      \
            const double* alpha, const double* a, const INT* lda, const double* b, const INT* ldb, \
            const double* beta, double* c, const INT* ldc, size_t transa_len, size_t transb_len)
#define TB_CBLAS_D(NAME, INT)                                                      \
  void NAME(int layout, int transa, int transb, INT m, INT n, INT k, double alpha, \
            const double* a, INT lda, const double* b, INT ldb, double beta, double* c, INT ldc)
#define TB_CBLAS_Z(NAME, INT)                                                           \
  void NAME(int layout, int transa, int transb, INT m, INT n, INT k, const void* alpha, \
            const void* a, INT lda, const void* b, INT ldb, const void* beta, void* c, INT ldc)

TB_FORTRAN(scipy_dgemm_, int);
TB_FORTRAN(scipy_zgemm_, int);
TB_CBLAS_D(scipy_cblas_dgemm, int);
TB_CBLAS_Z(scipy_cblas_zgemm, int);
TB_FORTRAN(scipy_dgemm_64_, int64_t);
TB_FORTRAN(scipy_zgemm_64_, int64_t);
TB_CBLAS_D(scipy_cblas_dgemm64_, int64_t);
TB_CBLAS_Z(scipy_cblas_zgemm64_, int64_t);
TB_FORTRAN(dgemm_64_, int64_t);
TB_FORTRAN(zgemm_64_, int64_t);
TB_CBLAS_D(cblas_dgemm64_, int64_t);
TB_CBLAS_Z(cblas_zgemm64_, int64_t);

/* The Level-3 routines other than GEMM under the same families' names (dsyrk_64_,
 * cblas_dsyrk64_, scipy_dsyrk_, scipy_cblas_dsyrk, scipy_dsyrk_64_, scipy_cblas_dsyrk64_, ...).
 * Each checks its arguments as reference BLAS does (CBLAS: one more than the Fortran parameter
 * number, the layout being 1) and runs a valid call on the system reference BLAS's LP64 Fortran
 * routine (libblas.so.3, reached with dlsym on its own handle), the integers narrowed: a
 * leading dimension beyond int is only valid in the tests for a matrix of one column, whose
 * leading dimension is never used. CBLAS row-major calls are translated to column-major as
 * reference CBLAS translates them. */
#define TB_F_RANK_K(NAME, INT)                                                                   \
  void NAME(const char* uplo, const char* trans, const INT* n, const INT* k, const void* alpha,  \
            const void* a, const INT* lda, const void* beta, void* c, const INT* ldc, size_t lu, \
            size_t lt)
#define TB_F_RANK_2K(NAME, INT)                                                                 \
  void NAME(const char* uplo, const char* trans, const INT* n, const INT* k, const void* alpha, \
            const void* a, const INT* lda, const void* b, const INT* ldb, const void* beta,     \
            void* c, const INT* ldc, size_t lu, size_t lt)
#define TB_F_SYMM(NAME, INT)                                                                   \
  void NAME(const char* side, const char* uplo, const INT* m, const INT* n, const void* alpha, \
            const void* a, const INT* lda, const void* b, const INT* ldb, const void* beta,    \
            void* c, const INT* ldc, size_t ls, size_t lu)
#define TB_F_TRI(NAME, INT)                                                                        \
  void NAME(const char* side, const char* uplo, const char* transa, const char* diag,              \
            const INT* m, const INT* n, const void* alpha, const void* a, const INT* lda, void* b, \
            const INT* ldb, size_t ls, size_t lu, size_t lt, size_t ld)
#define TB_C_RANK_K(NAME, INT, AL, BE)                                                       \
  void NAME(int layout, int uplo, int trans, INT n, INT k, AL alpha, const void* a, INT lda, \
            BE beta, void* c, INT ldc)
#define TB_C_RANK_2K(NAME, INT, AL, BE)                                                      \
  void NAME(int layout, int uplo, int trans, INT n, INT k, AL alpha, const void* a, INT lda, \
            const void* b, INT ldb, BE beta, void* c, INT ldc)
#define TB_C_SYMM(NAME, INT, S)                                                            \
  void NAME(int layout, int side, int uplo, INT m, INT n, S alpha, const void* a, INT lda, \
            const void* b, INT ldb, S beta, void* c, INT ldc)
#define TB_C_TRI(NAME, INT, S)                                                           \
  void NAME(int layout, int side, int uplo, int transa, int diag, INT m, INT n, S alpha, \
            const void* a, INT lda, void* b, INT ldb)

/* X(routine, shape, complex, alpha type, beta type) for the thirteen routines; shape is
 * RANK_K, RANK_2K, SYMM or TRI (TRI's beta type unused). */
#define TB_LEVEL3_ROUTINES(X)                     \
  X(dsyrk, RANK_K, 0, double, double)             \
  X(zsyrk, RANK_K, 1, const void*, const void*)   \
  X(zherk, RANK_K, 1, double, double)             \
  X(dsyr2k, RANK_2K, 0, double, double)           \
  X(zsyr2k, RANK_2K, 1, const void*, const void*) \
  X(zher2k, RANK_2K, 1, const void*, double)      \
  X(dsymm, SYMM, 0, double, double)               \
  X(zsymm, SYMM, 1, const void*, const void*)     \
  X(zhemm, SYMM, 1, const void*, const void*)     \
  X(dtrmm, TRI, 0, double, double)                \
  X(ztrmm, TRI, 1, const void*, const void*)      \
  X(dtrsm, TRI, 0, double, double)                \
  X(ztrsm, TRI, 1, const void*, const void*)

#define TB_C_RANK_K_(NAME, INT, AL, BE) TB_C_RANK_K(NAME, INT, AL, BE)
#define TB_C_RANK_2K_(NAME, INT, AL, BE) TB_C_RANK_2K(NAME, INT, AL, BE)
#define TB_C_SYMM_(NAME, INT, AL, BE) TB_C_SYMM(NAME, INT, AL)
#define TB_C_TRI_(NAME, INT, AL, BE) TB_C_TRI(NAME, INT, AL)
#define TB_DECLARE(R, SHAPE, CPLX, AL, BE)          \
  TB_F_##SHAPE(R##_64_, int64_t);                   \
  TB_C_##SHAPE##_(cblas_##R##64_, int64_t, AL, BE); \
  TB_F_##SHAPE(scipy_##R##_, int);                  \
  TB_C_##SHAPE##_(scipy_cblas_##R, int, AL, BE);    \
  TB_F_##SHAPE(scipy_##R##_64_, int64_t);           \
  TB_C_##SHAPE##_(scipy_cblas_##R##64_, int64_t, AL, BE);
TB_LEVEL3_ROUTINES(TB_DECLARE)
#undef TB_DECLARE

/* How often the routine `name` was called since the last reset. */
int test_blas64_calls(const char* name);

/* Forgets what was recorded. */
void test_blas64_reset(void);
/* The reports since the last reset; the last one's routine and parameter number. */
int test_blas64_reports(const char** routine, int64_t* info);
/* The last call's routine and its m, n, k, lda, ldb, ldc as received (0 calls: null). */
const char* test_blas64_last_call(int64_t sizes[6]);

/* What the clients do first: read their argument, `forwarded` or `emulated` (*emulated), and
 * take this library's handle (*own), through which they reach its own definitions past
 * LD_PRELOAD. 0 when both are there; else the exit status to return (2: usage, 1: not loaded). */
static inline int test_blas64_client_start(int argc, char** argv, int* emulated, void** own) {
  *emulated = argc > 1 && strcmp(argv[1], "emulated") == 0;
  if (argc < 2 || (!*emulated && strcmp(argv[1], "forwarded") != 0)) {
    fprintf(stderr, "usage: %s forwarded|emulated\n", argv[0]);
    return 2;
  }
  *own = dlopen("libozdgemm_test_blas64.so", RTLD_NOW | RTLD_NOLOAD);
  if (*own == NULL) {
    fprintf(stderr, "FAIL: libozdgemm_test_blas64.so is not loaded: %s\n", dlerror());
    return 1;
  }
  return 0;
}

#endif
