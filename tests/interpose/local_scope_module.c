/* A library loaded with RTLD_LOCAL that links the test BLAS, as a Python extension module links
 * pip numpy's bundled scipy-openblas: its BLAS calls reach a preloaded libozdgemm.so (the global
 * scope comes first), but the test BLAS is only in the module's local scope. local_scope_test.c
 * loads it and calls these. */
#include <stdint.h>

#include "test_blas64.h"

/* C = A A^T (lower) through scipy_dsyrk_64_, and C2 = A A^T through scipy_cblas_dgemm64_; n x n
 * from n x k A (column-major, lda n). Returns how many calls the test BLAS itself received. */
int module_products(int64_t n, int64_t k, const double* a, double* c, double* c2) {
  const char uplo = 'L', trans = 'N';
  const double one = 1.0, zero = 0.0;
  scipy_dsyrk_64_(&uplo, &trans, &n, &k, &one, a, &n, &zero, c, &n, 1, 1);
  scipy_cblas_dgemm64_(102, 111, 112, n, n, k, 1.0, a, n, a, n, 0.0, c2, n);
  return test_blas64_calls("scipy_dsyrk_64_") + test_blas64_calls("scipy_cblas_dgemm64_");
}
