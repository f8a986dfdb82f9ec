/* cblas_zgemm in both layouts and every pair of N, T and C (conjugate transpose), odd sizes,
 * leading dimensions larger than the rows, complex alpha and beta, against a long double
 * reference. Plain CBLAS client: run with libozdgemm.so preloaded, or linked with -lozdgemm.
 * Exit 0 when every result is right (within the bound of check.h, per part) and the padding of
 * C is unchanged. */
#include <cblas.h>
#include <complex.h>

#include "check.h"

/* Element (i, j) of op(X): op 0 = N, 1 = T, 2 = C. */
static double complex zop_at(const double complex* x, int ld, int row_major, int op, int i, int j) {
  const int r = op ? j : i, c = op ? i : j;
  const double complex v = row_major ? x[(size_t)r * ld + c] : x[(size_t)c * ld + r];
  return op == 2 ? conj(v) : v;
}

static double complex* random_zbuffer(size_t count) {
  double complex* p = malloc(sizeof(double complex) * (count > 0 ? count : 1));
  if (p == NULL) abort();
  for (size_t i = 0; i < count; ++i) p[i] = next_value() + I * next_value();
  return p;
}

static int run_case(enum CBLAS_ORDER layout, int xa, int xb, int m, int n, int k,
                    double complex alpha, double complex beta) {
  static const enum CBLAS_TRANSPOSE flag[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
  const int row_major = layout == CblasRowMajor;
  const int a_rows = xa ? k : m, a_cols = xa ? m : k;
  const int b_rows = xb ? n : k, b_cols = xb ? k : n;
  const int a_lead = row_major ? a_cols : a_rows, a_outer = row_major ? a_rows : a_cols;
  const int b_lead = row_major ? b_cols : b_rows, b_outer = row_major ? b_rows : b_cols;
  const int c_lead = row_major ? n : m, c_outer = row_major ? m : n;
  const int lda = a_lead + 3, ldb = b_lead + 2, ldc = c_lead + 5;
  double complex* a = random_zbuffer((size_t)lda * a_outer);
  double complex* b = random_zbuffer((size_t)ldb * b_outer);
  double complex* c = random_zbuffer((size_t)ldc * c_outer);
  double complex* c0 = malloc(sizeof(double complex) * (size_t)ldc * c_outer);
  if (c0 == NULL) abort();
  memcpy(c0, c, sizeof(double complex) * (size_t)ldc * c_outer);

  cblas_zgemm(layout, flag[xa], flag[xb], m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);

  int bad = 0;
  const long double eps = DBL_EPSILON;
  for (int q = 0; q < c_outer; ++q)
    for (int p = 0; p < ldc; ++p) {
      const size_t at = (size_t)q * ldc + p;
      if (p >= c_lead) {
        if (memcmp(&c[at], &c0[at], sizeof c[at]) != 0 && bad++ < 5)
          fprintf(stderr, "FAIL: padding of C changed at (%d,%d)\n", p, q);
        continue;
      }
      const int i = row_major ? q : p, j = row_major ? p : q;
      long double complex s = 0;
      long double scale = 0;
      for (int l = 0; l < k; ++l) {
        const long double complex x = zop_at(a, lda, row_major, xa, i, l);
        const long double complex y = zop_at(b, ldb, row_major, xb, l, j);
        s += x * y;
        scale += (fabsl(creall(x)) + fabsl(cimagl(x))) * (fabsl(creall(y)) + fabsl(cimagl(y)));
      }
      const long double complex want = (long double complex)alpha * s + (long double complex)beta * c0[at];
      scale = scale * (fabsl(creal(alpha)) + fabsl(cimag(alpha))) +
              (fabsl(creal(beta)) + fabsl(cimag(beta))) * (fabs(creal(c0[at])) + fabs(cimag(c0[at])));
      const long double tol = 16.0L * (2 * k + 4) * eps * scale;
      if ((fabsl(creal(c[at]) - creall(want)) > tol || fabsl(cimag(c[at]) - cimagl(want)) > tol) &&
          bad++ < 5)
        fprintf(stderr, "FAIL %s ops %d%d m=%d n=%d k=%d: C(%d,%d) = %g%+gi, want %Lg%+Lgi\n",
                row_major ? "RowMajor" : "ColMajor", xa, xb, m, n, k, i, j, creal(c[at]),
                cimag(c[at]), creall(want), cimagl(want));
    }
  free(a);
  free(b);
  free(c);
  free(c0);
  return bad != 0;
}

int main(void) {
  static const enum CBLAS_ORDER layouts[] = {CblasColMajor, CblasRowMajor};
  static const int shapes[][3] = {{7, 5, 3}, {13, 11, 17}, {1, 9, 4}, {33, 1, 65}};
  int failures = 0, cases = 0;
  for (int l = 0; l < 2; ++l)
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 3; ++y)
        for (int s = 0; s < 4; ++s) {
          const double complex beta = s % 2 ? 0.0 : -1.25 + 0.5 * I;
          failures += run_case(layouts[l], x, y, shapes[s][0], shapes[s][1], shapes[s][2],
                               0.75 - 0.25 * I, beta);
          ++cases;
        }
  printf("cblas_zgemm: %d cases, %d failed\n", cases, failures);
  return failures != 0;
}
