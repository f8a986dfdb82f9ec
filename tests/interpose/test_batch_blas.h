/* The strided- and group-batch GEMM extensions of MKL and OpenBLAS >= 0.3.30 (LP64), as a client
 * declares them, and the test library that stands in for those libraries in CI
 * (libozdgemm_test_batch.so, test_batch_blas.c): plain loops with MKL's documented meaning
 * (matrix i at a + i stridea elements; complex elements for z). Each checks its arguments and
 * reports a bad one to its own recorder (the routine's name and the parameter's position in the
 * call) instead of xerbla, writing nothing. A client reaches the library's own definitions,
 * bypassing LD_PRELOAD, with dlsym on its handle (dlopen of its soname with RTLD_NOLOAD). */
#ifndef OZDGEMM_TESTS_INTERPOSE_TEST_BATCH_BLAS_H
#define OZDGEMM_TESTS_INTERPOSE_TEST_BATCH_BLAS_H

#include <stddef.h>

#define TBB_FORTRAN(NAME)                                                                       \
  void NAME(const char* transa, const char* transb, const int* m, const int* n, const int* k,   \
            const double* alpha, const double* a, const int* lda, const int* stridea,           \
            const double* b, const int* ldb, const int* strideb, const double* beta, double* c, \
            const int* ldc, const int* stridec, const int* batch_size, size_t transa_len,       \
            size_t transb_len)

TBB_FORTRAN(dgemm_batch_strided_);
TBB_FORTRAN(zgemm_batch_strided_);
void cblas_dgemm_batch_strided(int layout, int transa, int transb, int m, int n, int k,
                               double alpha, const double* a, int lda, int stridea, const double* b,
                               int ldb, int strideb, double beta, double* c, int ldc, int stridec,
                               int batch_size);
void cblas_zgemm_batch_strided(int layout, int transa, int transb, int m, int n, int k,
                               const void* alpha, const void* a, int lda, int stridea,
                               const void* b, int ldb, int strideb, const void* beta, void* c,
                               int ldc, int stridec, int batch_size);

/* The group-batch routines of MKL, OpenBLAS >= 0.3.30 and AOCL (LP64): group g's flags, sizes,
 * leading dimensions and scalars at index g (complex scalars as pairs of doubles), the matrices'
 * pointers group after group. Every group is checked before any matrix is computed; a bad
 * argument is reported with its group's parameter (Fortran: transa 1, transb 2, m 3, n 4, k 5,
 * lda 8, ldb 10, ldc 13, group_count 14, group_size 15; CBLAS: one more, layout 1). */
#define TBB_FORTRAN_GROUP(NAME)                                                                  \
  void NAME(const char* transa, const char* transb, const int* m, const int* n, const int* k,    \
            const double* alpha, const void** a, const int* lda, const void** b, const int* ldb, \
            const double* beta, void** c, const int* ldc, const int* group_count,                \
            const int* group_size, size_t transa_len, size_t transb_len)
TBB_FORTRAN_GROUP(dgemm_batch_);
TBB_FORTRAN_GROUP(zgemm_batch_);
void cblas_dgemm_batch(int layout, const int* transa, const int* transb, const int* m, const int* n,
                       const int* k, const double* alpha, const double** a, const int* lda,
                       const double** b, const int* ldb, const double* beta, double** c,
                       const int* ldc, int group_count, const int* group_size);
void cblas_zgemm_batch(int layout, const int* transa, const int* transb, const int* m, const int* n,
                       const int* k, const void* alpha, const void** a, const int* lda,
                       const void** b, const int* ldb, const void* beta, void** c, const int* ldc,
                       int group_count, const int* group_size);

/* Forgets what was recorded. */
void test_batch_reset(void);
/* The reports since the last reset; the last one's routine and parameter position. */
int test_batch_reports(const char** routine, int* info);
/* The routine of the last call, valid or not (none since the reset: null). */
const char* test_batch_last_call(void);

#endif
