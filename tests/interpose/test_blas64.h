/* The test BLAS of tests/interpose (libozdgemm_test_blas64.so): the GEMM names of scipy-openblas
 * (LP64 scipy_*, ILP64 scipy_*64_) and the ILP64 names of reference BLAS's and OpenBLAS's 64-bit
 * builds (*64_), as plain loops. Each checks its arguments as reference BLAS does and reports a
 * bad one to the library's own recorder (routine name and parameter number, as xerbla would)
 * instead of xerbla; Fortran names number the parameters as dgemm.f (1, 2, 3, 4, 5, 8, 10, 13),
 * CBLAS names by their position in the CBLAS call (layout 1, ..., ldc 14). Every call, valid or
 * not, records the integers it received. A client reaches the library's own definitions,
 * bypassing LD_PRELOAD, with dlsym on its handle (dlopen of its soname with RTLD_NOLOAD). */
#ifndef OZDGEMM_TESTS_INTERPOSE_TEST_BLAS64_H
#define OZDGEMM_TESTS_INTERPOSE_TEST_BLAS64_H

#include <stddef.h>
#include <stdint.h>

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

/* Forgets what was recorded. */
void test_blas64_reset(void);
/* The reports since the last reset; the last one's routine and parameter number. */
int test_blas64_reports(const char** routine, int64_t* info);
/* The last call's routine and its m, n, k, lda, ldb, ldc as received (0 calls: null). */
const char* test_blas64_last_call(int64_t sizes[6]);

#endif
