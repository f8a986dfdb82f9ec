/* LAPACK dgesv (Debian's liblapack) on a random 300 x 300 system with 3 right-hand sides: large
 * enough that dgetrf takes its blocked path (block size 64), whose trailing updates call
 * dgemm_. The interception test is the log of the preloaded run; this program checks the
 * solution: the normwise backward error ||A x - b|| / (||A|| ||x|| n eps) of each column,
 * computed in long double, must stay below 30 (LAPACK's own test threshold). */
#include "check.h"

void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b,
            const int* ldb, int* info);

int main(void) {
  enum { n = 300, nrhs = 3, lda = n + 1, ldb = n + 2 };
  double* a = random_buffer((size_t)lda * n);
  double* a0 = random_buffer((size_t)lda * n);
  double* b = random_buffer((size_t)ldb * nrhs);
  double* b0 = random_buffer((size_t)ldb * nrhs);
  int* ipiv = malloc(sizeof(int) * n);
  if (ipiv == NULL) abort();
  memcpy(a0, a, sizeof(double) * (size_t)lda * n);
  memcpy(b0, b, sizeof(double) * (size_t)ldb * nrhs);

  const int n_ = n, nrhs_ = nrhs, lda_ = lda, ldb_ = ldb;
  int info = -1;
  dgesv_(&n_, &nrhs_, a, &lda_, ipiv, b, &ldb_, &info);
  if (info != 0) {
    fprintf(stderr, "FAIL dgesv: info = %d\n", info);
    return 1;
  }

  long double norm_a = 0; /* infinity norm */
  for (int i = 0; i < n; ++i) {
    long double row = 0;
    for (int j = 0; j < n; ++j) row += fabsl((long double)a0[(size_t)j * lda + i]);
    if (row > norm_a) norm_a = row;
  }
  int failures = 0;
  for (int r = 0; r < nrhs; ++r) {
    const double* x = b + (size_t)r * ldb;
    long double norm_x = 0, norm_res = 0;
    for (int i = 0; i < n; ++i) {
      long double s = -(long double)b0[(size_t)r * ldb + i];
      for (int j = 0; j < n; ++j) s += (long double)a0[(size_t)j * lda + i] * x[j];
      if (fabsl(s) > norm_res) norm_res = fabsl(s);
      if (fabsl((long double)x[i]) > norm_x) norm_x = fabsl((long double)x[i]);
    }
    const long double ratio = norm_res / (norm_a * norm_x * n * DBL_EPSILON);
    printf("dgesv: right-hand side %d: backward error %.3Lf (n eps units)\n", r, ratio);
    if (!(ratio < 30)) {
      fprintf(stderr, "FAIL dgesv: right-hand side %d: ratio %Lg >= 30\n", r, ratio);
      ++failures;
    }
  }
  return failures != 0;
}
