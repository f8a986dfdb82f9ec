/* LAPACK Cholesky (Debian's liblapack) on 300 x 300 positive definite matrices: dpotrf with both
 * triangles and zpotrf (lower), then dpotrs/zpotrs. n = 300 takes the blocked path (block size
 * 64), whose updates call dsyrk_/zherk_, dtrsm_/ztrsm_ and dgemm_/zgemm_; the interception test
 * is the log of the preloaded run. This program checks the results in long double:
 *   the factor: max |A - L L^H| / (n eps max|A|) below 30,
 *   the solve:  ||A x - b|| / (||A|| ||x|| n eps) below 30 (LAPACK's own test threshold). */
#include <complex.h>

#include "check.h"

void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info, size_t);
void zpotrf_(const char* uplo, const int* n, double complex* a, const int* lda, int* info, size_t);
void zpotrs_(const char* uplo, const int* n, const int* nrhs, const double complex* a,
             const int* lda, double complex* b, const int* ldb, int* info, size_t);

enum { n = 300, lda = n + 1, nrhs = 2, ldb = n + 3 };

/* A = M M^H / n + I: Hermitian positive definite, condition number modest. */
static double complex* spd(int complex_data) {
  double complex* m = malloc(sizeof(double complex) * (size_t)n * n);
  double complex* a = malloc(sizeof(double complex) * (size_t)lda * n);
  if (m == NULL || a == NULL) abort();
  for (size_t i = 0; i < (size_t)n * n; ++i)
    m[i] = next_value() + (complex_data ? next_value() * I : 0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      long double complex s = 0;
      for (int l = 0; l < n; ++l) s += (long double complex)m[(size_t)l * n + i] * conjl(m[(size_t)l * n + j]);
      a[(size_t)j * lda + i] = (double complex)(s / n) + (i == j ? 1 : 0);
    }
  free(m);
  return a;
}

/* max |A - F F^H| / (n eps max|A|) over the `uplo` triangle, F the factor (L, or U^H). */
static long double factor_ratio(const double complex* a0, const double complex* f, char uplo) {
  long double err = 0, amax = 0;
  for (int j = 0; j < n; ++j)
    for (int i = (uplo == 'L' ? j : 0); i <= (uplo == 'L' ? n - 1 : j); ++i) {
      /* (F F^H)_ij with F_il = L_il = f[l * lda + i] (lower) or conj(U_li) (upper), l <= min */
      long double complex s = 0;
      for (int l = 0; l <= (i < j ? i : j); ++l) {
        const long double complex fil = uplo == 'L' ? f[(size_t)l * lda + i] : conj(f[(size_t)i * lda + l]);
        const long double complex fjl = uplo == 'L' ? f[(size_t)l * lda + j] : conj(f[(size_t)j * lda + l]);
        s += fil * conjl(fjl);
      }
      const long double complex aij = a0[(size_t)j * lda + i];
      if (cabsl(aij - s) > err) err = cabsl(aij - s);
      if (cabsl(aij) > amax) amax = cabsl(aij);
    }
  return err / (n * DBL_EPSILON * amax);
}

/* max over right-hand sides of ||A x - b|| / (||A|| ||x|| n eps), infinity norms, A Hermitian
 * given in full in a0. */
static long double solve_ratio(const double complex* a0, const double complex* x,
                               const double complex* b0) {
  long double norm_a = 0, worst = 0;
  for (int i = 0; i < n; ++i) {
    long double row = 0;
    for (int j = 0; j < n; ++j) row += cabsl(a0[(size_t)j * lda + i]);
    if (row > norm_a) norm_a = row;
  }
  for (int r = 0; r < nrhs; ++r) {
    long double norm_x = 0, norm_res = 0;
    for (int i = 0; i < n; ++i) {
      long double complex s = -(long double complex)b0[(size_t)r * ldb + i];
      for (int j = 0; j < n; ++j)
        s += (long double complex)a0[(size_t)j * lda + i] * x[(size_t)r * ldb + j];
      if (cabsl(s) > norm_res) norm_res = cabsl(s);
      if (cabsl(x[(size_t)r * ldb + i]) > norm_x) norm_x = cabsl(x[(size_t)r * ldb + i]);
    }
    const long double ratio = norm_res / (norm_a * norm_x * n * DBL_EPSILON);
    if (ratio > worst) worst = ratio;
  }
  return worst;
}

/* One factorization and solve; returns the number of failed checks. */
static int run(int complex_data, char uplo) {
  double complex* a0 = spd(complex_data);
  double complex* a = malloc(sizeof(double complex) * (size_t)lda * n);
  double complex* b0 = malloc(sizeof(double complex) * (size_t)ldb * nrhs);
  double complex* b = malloc(sizeof(double complex) * (size_t)ldb * nrhs);
  if (a == NULL || b0 == NULL || b == NULL) abort();
  for (size_t i = 0; i < (size_t)ldb * nrhs; ++i)
    b0[i] = next_value() + (complex_data ? next_value() * I : 0);
  const int n_ = n, lda_ = lda, ldb_ = ldb, nrhs_ = nrhs;
  int info = -1, info2 = -1;
  if (complex_data) {
    memcpy(a, a0, sizeof(double complex) * (size_t)lda * n);
    memcpy(b, b0, sizeof(double complex) * (size_t)ldb * nrhs);
    zpotrf_(&uplo, &n_, a, &lda_, &info, 1);
    if (info == 0) zpotrs_(&uplo, &n_, &nrhs_, a, &lda_, b, &ldb_, &info2, 1);
  } else { /* the real parts, as doubles */
    double* ar = malloc(sizeof(double) * (size_t)lda * n);
    double* br = malloc(sizeof(double) * (size_t)ldb * nrhs);
    if (ar == NULL || br == NULL) abort();
    for (size_t i = 0; i < (size_t)lda * n; ++i) ar[i] = creal(a0[i]);
    for (size_t i = 0; i < (size_t)ldb * nrhs; ++i) br[i] = creal(b0[i]);
    dpotrf_(&uplo, &n_, ar, &lda_, &info, 1);
    if (info == 0) dpotrs_(&uplo, &n_, &nrhs_, ar, &lda_, br, &ldb_, &info2, 1);
    for (size_t i = 0; i < (size_t)lda * n; ++i) a[i] = ar[i];
    for (size_t i = 0; i < (size_t)ldb * nrhs; ++i) b[i] = br[i];
    free(ar);
    free(br);
  }
  const char* name = complex_data ? "zpotrf" : "dpotrf";
  int failures = 0;
  if (info != 0 || info2 != 0) {
    fprintf(stderr, "FAIL %s uplo %c: info = %d, potrs info = %d\n", name, uplo, info, info2);
    failures = 1;
  } else {
    const long double fr = factor_ratio(a0, a, uplo), sr = solve_ratio(a0, b, b0);
    printf("%s uplo %c: factor %.3Lf, solve %.3Lf (n eps units)\n", name, uplo, fr, sr);
    if (!(fr < 30) || !(sr < 30)) {
      fprintf(stderr, "FAIL %s uplo %c: ratio >= 30\n", name, uplo);
      failures = 1;
    }
  }
  free(a0);
  free(a);
  free(b0);
  free(b);
  return failures;
}

int main(void) {
  const int failures = run(0, 'L') + run(0, 'U') + run(1, 'L');
  return failures != 0;
}
