/* Invalid DGEMM arguments must reach xerbla exactly as the CPU BLAS reports them, with C left
 * untouched. The program defines its own xerbla_ and cblas_xerbla, as reference BLAS allows
 * (they record the call instead of printing and, for cblas_xerbla, exiting).
 *
 * Which handler runs depends on symbol resolution: the CPU BLAS calls xerbla_/cblas_xerbla
 * through its PLT, so the first definition in the global scope wins. This executable is linked
 * with -rdynamic (ENABLE_EXPORTS) so its definitions are in that scope ahead of libozdgemm.so
 * (whose forwarders also export both names) and of the CPU BLAS. A CPU BLAS that binds its
 * own xerbla directly would bypass them; the run without libozdgemm.so (the reference run)
 * would then fail the same way, which tells the two failures apart.
 *
 * dgemm_ reports Fortran parameter numbers (reference dgemm.f). For cblas_dgemm, reference
 * CBLAS reports the layout and transposes through cblas_xerbla with CBLAS numbers, and sizes
 * and leading dimensions through dgemm_'s xerbla_ with the numbers of the equivalent
 * column-major Fortran call (Debian's own xerbla_ translates them back; ours does not); other
 * CBLAS implementations use either handler and either numbering. A cblas case therefore
 * accepts one call of either handler, for a DGEMM routine, with either number. */
#include <cblas.h>
#include <ctype.h>

#include "check.h"

#include "xerbla_recorder.h"

void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, size_t transa_len, size_t transb_len);

enum { kLen = 64 };
static double a[kLen], b[kLen], c[kLen], c_before[kLen];
static int failures = 0;

static void prepare(void) {
  for (int i = 0; i < kLen; ++i) {
    a[i] = next_value();
    b[i] = next_value();
    c[i] = c_before[i] = next_value();
  }
  handler_calls = 0;
  last_routine[0] = '\0';
  last_info = 0;
}

/* Exactly one handler call for a DGEMM routine with info one of want1, want2; C unchanged. */
static void verify(const char* what, int want1, int want2) {
  const int named = strcmp(last_routine, "dgemm") == 0 || strcmp(last_routine, "cblas_dgemm") == 0;
  if (handler_calls != 1 || !named || (last_info != want1 && last_info != want2)) {
    fprintf(stderr, "FAIL %s: %d handler call(s), last '%s' info %d; want one, DGEMM, info %d",
            what, handler_calls, last_routine, last_info, want1);
    if (want2 != want1) fprintf(stderr, " or %d", want2);
    fprintf(stderr, "\n");
    ++failures;
  } else {
    printf("ok   %-40s -> %s info %d\n", what, last_routine, last_info);
  }
  if (memcmp(c, c_before, sizeof c) != 0) {
    fprintf(stderr, "FAIL %s: C was written\n", what);
    ++failures;
  }
}

static void fortran_case(const char* what, const char* ta, const char* tb, int m, int n, int k,
                         int lda, int ldb, int ldc, int want) {
  const double alpha = 1.0, beta = 0.5;
  prepare();
  dgemm_(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  verify(what, want, want);
}

static void cblas_case(const char* what, int layout, int ta, int tb, int m, int n, int k, int lda,
                       int ldb, int ldc, int want_cblas, int want_fortran) {
  prepare();
  cblas_dgemm((enum CBLAS_ORDER)layout, (enum CBLAS_TRANSPOSE)ta, (enum CBLAS_TRANSPOSE)tb, m, n, k,
              1.0, a, lda, b, ldb, 0.5, c, ldc);
  verify(what, want_cblas, want_fortran);
}

int main(void) {
  /* dgemm_: INFO as reference dgemm.f numbers the parameters. */
  fortran_case("dgemm_ TRANSA='X'", "X", "N", 2, 2, 2, 2, 2, 2, 1);
  fortran_case("dgemm_ TRANSA='X', M<0 (first wins)", "X", "N", -1, 2, 2, 2, 2, 2, 1);
  fortran_case("dgemm_ TRANSB='Y'", "N", "Y", 2, 2, 2, 2, 2, 2, 2);
  fortran_case("dgemm_ M<0", "N", "N", -1, 2, 2, 2, 2, 2, 3);
  fortran_case("dgemm_ N<0", "N", "N", 2, -1, 2, 2, 2, 2, 4);
  fortran_case("dgemm_ K<0", "N", "N", 2, 2, -1, 2, 2, 2, 5);
  fortran_case("dgemm_ LDA<M (A not transposed)", "N", "N", 3, 2, 2, 2, 3, 3, 8);
  fortran_case("dgemm_ LDA<K (A transposed)", "T", "N", 2, 2, 3, 2, 3, 2, 8);
  fortran_case("dgemm_ LDA=0 with M=0", "N", "N", 0, 2, 2, 0, 2, 1, 8);
  fortran_case("dgemm_ LDB<K", "N", "N", 2, 2, 3, 2, 2, 2, 10);
  fortran_case("dgemm_ LDB<N (B transposed)", "N", "T", 2, 3, 2, 2, 2, 2, 10);
  fortran_case("dgemm_ LDC<M", "N", "N", 3, 2, 2, 3, 2, 2, 13);

  /* cblas_dgemm: CBLAS number, or the number in the equivalent column-major dgemm_ call. */
  cblas_case("cblas_dgemm layout=99", 99, CblasNoTrans, CblasNoTrans, 2, 2, 2, 2, 2, 2, 1, 1);
  cblas_case("cblas_dgemm ColMajor TransA=99", CblasColMajor, 99, CblasNoTrans, 2, 2, 2, 2, 2, 2, 2,
             1);
  cblas_case("cblas_dgemm ColMajor TransB=99", CblasColMajor, CblasNoTrans, 99, 2, 2, 2, 2, 2, 2, 3,
             2);
  cblas_case("cblas_dgemm RowMajor TransA=99", CblasRowMajor, 99, CblasNoTrans, 2, 2, 2, 2, 2, 2, 2,
             2);
  /* Reference CBLAS reports this one as parameter 2 (cblas_dgemm.c passes 2 for an illegal
   * TransB in its row-major branch); 3 is its position. */
  cblas_case("cblas_dgemm RowMajor TransB=99", CblasRowMajor, CblasNoTrans, 99, 2, 2, 2, 2, 2, 2, 3,
             2);
  cblas_case("cblas_dgemm ColMajor M<0", CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2,
             2, 4, 3);
  cblas_case("cblas_dgemm RowMajor M<0", CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2,
             2, 4, 4);
  cblas_case("cblas_dgemm ColMajor lda<M", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 2, 2,
             3, 9, 8);
  cblas_case("cblas_dgemm RowMajor lda<K", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 2, 2,
             2, 9, 10);
  cblas_case("cblas_dgemm RowMajor ldb<N", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 2, 2,
             3, 11, 8);
  cblas_case("cblas_dgemm ColMajor ldc<M", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 3, 2,
             2, 14, 13);

  printf("invalid arguments: %d failures\n", failures);
  return failures != 0;
}
