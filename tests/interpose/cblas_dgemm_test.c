/* cblas_dgemm in both layouts and every transpose combination, odd sizes, leading dimensions
 * larger than the rows, against a long double reference. Plain CBLAS client: run with
 * libozdgemm.so preloaded, or linked with -lozdgemm. Exit 0 when every result is right. */
#include <cblas.h>

#include "check.h"

static int run_case(enum CBLAS_ORDER layout, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                    int m, int n, int k, double alpha, double beta) {
  const int row_major = layout == CblasRowMajor;
  const int trans_a = ta != CblasNoTrans, trans_b = tb != CblasNoTrans;
  /* Storage shapes: op(A) is m x k, op(B) is k x n; a row-major matrix is stored transposed. */
  const int a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  const int a_lead = row_major ? a_cols : a_rows, a_outer = row_major ? a_rows : a_cols;
  const int b_lead = row_major ? b_cols : b_rows, b_outer = row_major ? b_rows : b_cols;
  const int c_lead = row_major ? n : m, c_outer = row_major ? m : n;
  const int lda = a_lead + 3, ldb = b_lead + 2, ldc = c_lead + 5;

  double* a = random_buffer((size_t)lda * a_outer);
  double* b = random_buffer((size_t)ldb * b_outer);
  double* c = random_buffer((size_t)ldc * c_outer);
  double* c_before = random_buffer((size_t)ldc * c_outer);
  memcpy(c_before, c, sizeof(double) * (size_t)ldc * c_outer);
  long double* want = malloc(sizeof(long double) * (size_t)m * n + 1);
  long double* scale = malloc(sizeof(long double) * (size_t)m * n + 1);
  if (want == NULL || scale == NULL) abort();
  reference_gemm(row_major, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, want,
                 scale);

  cblas_dgemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);

  char what[96];
  snprintf(what, sizeof what, "%s ta=%d tb=%d m=%d n=%d k=%d", row_major ? "RowMajor" : "ColMajor",
           (int)ta, (int)tb, m, n, k);
  const int bad = compare_gemm(what, row_major, m, n, k, c, ldc, c_before, want, scale);
  free(a);
  free(b);
  free(c);
  free(c_before);
  free(want);
  free(scale);
  return bad != 0;
}

/* alpha == 0: BLAS reads neither A nor B (NaN there must not reach C), C = beta C exactly.
 * beta == 0: C is not read (NaN there must not survive). */
static int special_cases(void) {
  enum { m = 5, n = 4, k = 3, ld = 7 };
  double a[ld * k], b[ld * n], c[ld * n], want[ld * n];
  int failures = 0;
  for (int i = 0; i < ld * k; ++i) a[i] = NAN;
  for (int i = 0; i < ld * n; ++i) {
    b[i] = NAN;
    c[i] = next_value();
    want[i] = i % ld < m ? 2.0 * c[i] : c[i];
  }
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 0.0, a, ld, b, ld, 2.0, c, ld);
  if (memcmp(c, want, sizeof c) != 0) {
    fprintf(stderr, "FAIL alpha=0: C != beta C\n");
    ++failures;
  }
  for (int i = 0; i < ld * k; ++i) a[i] = next_value();
  for (int i = 0; i < ld * n; ++i) {
    b[i] = next_value();
    c[i] = i % ld < m ? NAN : 1.0;
  }
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, ld, b, ld, 0.0, c, ld);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ld; ++i)
      if (i < m ? isnan(c[j * ld + i]) : c[j * ld + i] != 1.0) {
        fprintf(stderr, "FAIL beta=0: C(%d,%d) = %g\n", i, j, c[j * ld + i]);
        ++failures;
      }
  return failures;
}

int main(void) {
  static const enum CBLAS_TRANSPOSE ops[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
  static const enum CBLAS_ORDER layouts[] = {CblasColMajor, CblasRowMajor};
  static const int shapes[][3] = {{7, 5, 3}, {13, 11, 17}, {1, 9, 4}, {33, 1, 65}};
  int failures = 0, cases = 0;
  for (int l = 0; l < 2; ++l)
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 3; ++y)
        for (int s = 0; s < 4; ++s) {
          const double beta = s % 2 ? 0.0 : -1.25;
          failures += run_case(layouts[l], ops[x], ops[y], shapes[s][0], shapes[s][1], shapes[s][2],
                               0.75, beta);
          ++cases;
        }
  failures += special_cases();
  cases += 2;
  printf("cblas_dgemm: %d cases, %d failed\n", cases, failures);
  return failures != 0;
}
