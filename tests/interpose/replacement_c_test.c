/* A CBLAS/BLAS client linked with -lozdgemm in place of -lblas: level-1/2 routines (served by
 * the library's forwarders into the CPU BLAS), Fortran and CBLAS DGEMM (through the library),
 * functions returning int, float, double and double complex, routines with arguments on the
 * stack, and eight threads racing to the first call of forwarders not yet resolved. Every
 * result is checked against a long double loop. Exit 0 when all are right. */
#include <cblas.h>
#include <complex.h>
#include <pthread.h>

#include "check.h"

double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy);
void daxpy_(const int* n, const double* alpha, const double* x, const int* incx, double* y,
            const int* incy);
void dscal_(const int* n, const double* alpha, double* x, const int* incx);
double dnrm2_(const int* n, const double* x, const int* incx);
float snrm2_(const int* n, const float* x, const int* incx);
int idamax_(const int* n, const double* x, const int* incx);
double complex zdotc_(const int* n, const double complex* x, const int* incx,
                      const double complex* y, const int* incy);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a,
            const int* lda, const double* x, const int* incx, const double* beta, double* y,
            const int* incy, size_t trans_len);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, size_t transa_len, size_t transb_len);

static int failures = 0;

static void expect_close(const char* what, long double got, long double want, long double scale) {
  const long double tol = 64 * DBL_EPSILON * (scale > 0 ? scale : 1);
  if (!(fabsl(got - want) <= tol)) {
    fprintf(stderr, "FAIL %s: got %.17Lg, want %.17Lg\n", what, got, want);
    ++failures;
  }
}

enum { N = 37 };
static double x[N], y[N];

static long double dot_reference(void) {
  long double s = 0;
  for (int i = 0; i < N; ++i) s += (long double)x[i] * y[i];
  return s;
}

static long double abs_dot(void) {
  long double s = 0;
  for (int i = 0; i < N; ++i) s += fabsl((long double)x[i] * y[i]);
  return s;
}

/* First calls of cblas_ddot and dnrm2_ from eight threads at once: each lazy stub may run
 * concurrently with itself; every thread must still get the right result. */
static void* racer(void* arg) {
  int* bad = arg;
  const int n = N, one = 1;
  const long double want = dot_reference();
  if (fabsl(cblas_ddot(N, x, 1, y, 1) - want) > 64 * DBL_EPSILON * abs_dot()) ++*bad;
  long double ss = 0;
  for (int i = 0; i < N; ++i) ss += (long double)x[i] * x[i];
  if (fabsl(dnrm2_(&n, x, &one) - sqrtl(ss)) > 64 * DBL_EPSILON * sqrtl(ss)) ++*bad;
  return NULL;
}

int main(void) {
  for (int i = 0; i < N; ++i) {
    x[i] = next_value();
    y[i] = next_value();
  }
  const int n = N, one = 1;

  pthread_t threads[8];
  int bad[8] = {0};
  for (int t = 0; t < 8; ++t)
    if (pthread_create(&threads[t], NULL, racer, &bad[t]) != 0) abort();
  for (int t = 0; t < 8; ++t) {
    pthread_join(threads[t], NULL);
    if (bad[t] != 0) {
      fprintf(stderr, "FAIL thread %d: wrong cblas_ddot or dnrm2_ result\n", t);
      ++failures;
    }
  }

  expect_close("ddot_", ddot_(&n, x, &one, y, &one), dot_reference(), abs_dot());

  { /* daxpy_, then dscal_ */
    double z[N];
    memcpy(z, y, sizeof z);
    const double alpha = -0.625, scal = 3.0;
    daxpy_(&n, &alpha, x, &one, z, &one);
    dscal_(&n, &scal, z, &one);
    for (int i = 0; i < N; ++i)
      expect_close("daxpy_/dscal_", z[i], scal * ((long double)alpha * x[i] + y[i]), 4);
  }
  { /* cblas_daxpy with a stride */
    double z[N];
    memcpy(z, y, sizeof z);
    cblas_daxpy(N / 2, 2.0, x, 2, z, 2);
    for (int i = 0; i < N; ++i)
      expect_close("cblas_daxpy", z[i], i % 2 == 0 && i / 2 < N / 2 ? 2.0L * x[i] + y[i] : y[i], 4);
  }
  { /* int, float and complex results */
    int want = 0;
    for (int i = 1; i < N; ++i)
      if (fabs(x[i]) > fabs(x[want])) want = i;
    if (idamax_(&n, x, &one) != want + 1) {
      fprintf(stderr, "FAIL idamax_: got %d, want %d\n", idamax_(&n, x, &one), want + 1);
      ++failures;
    }
    if (cblas_idamax(N, x, 1) != (size_t)want) {
      fprintf(stderr, "FAIL cblas_idamax: got %zu, want %d\n", (size_t)cblas_idamax(N, x, 1), want);
      ++failures;
    }
    float xf[N];
    long double ss = 0;
    for (int i = 0; i < N; ++i) {
      xf[i] = (float)x[i];
      ss += (long double)xf[i] * xf[i];
    }
    const float got = snrm2_(&n, xf, &one);
    if (!(fabsl(got - sqrtl(ss)) <= 64 * FLT_EPSILON * sqrtl(ss))) {
      fprintf(stderr, "FAIL snrm2_: got %.9g, want %.9Lg\n", got, sqrtl(ss));
      ++failures;
    }
    double complex zx[N / 2], zy[N / 2];
    long double re = 0, im = 0, mag = 0;
    for (int i = 0; i < N / 2; ++i) {
      zx[i] = x[2 * i] + I * x[2 * i + 1];
      zy[i] = y[2 * i] + I * y[2 * i + 1];
      /* conj(zx) * zy */
      re += (long double)creal(zx[i]) * creal(zy[i]) + (long double)cimag(zx[i]) * cimag(zy[i]);
      im += (long double)creal(zx[i]) * cimag(zy[i]) - (long double)cimag(zx[i]) * creal(zy[i]);
      mag += cabs(zx[i]) * cabs(zy[i]);
    }
    const int nz = N / 2;
    const double complex dot = zdotc_(&nz, zx, &one, zy, &one);
    expect_close("zdotc_ (real)", creal(dot), re, mag);
    expect_close("zdotc_ (imag)", cimag(dot), im, mag);
  }
  { /* dgemv_ (arguments on the stack) and cblas_dgemv: y = alpha A x + beta y */
    enum { m = 9, k = 7, lda = 11 };
    double* a = random_buffer((size_t)lda * k);
    double v[m], w[m];
    long double want[m], scale[m];
    const double alpha = 1.5, beta = -0.5;
    for (int i = 0; i < m; ++i) {
      v[i] = w[i] = next_value();
      long double s = 0, s_abs = 0;
      for (int l = 0; l < k; ++l) {
        s += (long double)a[(size_t)l * lda + i] * x[l];
        s_abs += fabsl((long double)a[(size_t)l * lda + i] * x[l]);
      }
      want[i] = alpha * s + beta * (long double)v[i];
      scale[i] = fabsl((long double)alpha) * s_abs + fabsl(beta * (long double)v[i]);
    }
    const int m_ = m, k_ = k, lda_ = lda;
    dgemv_("N", &m_, &k_, &alpha, a, &lda_, x, &one, &beta, v, &one, 1);
    /* The same buffer read row-major (k rows of lda) is A^T; transposed, it is A again. */
    cblas_dgemv(CblasRowMajor, CblasTrans, k, m, alpha, a, lda, x, 1, beta, w, 1);
    for (int i = 0; i < m; ++i) {
      expect_close("dgemv_", v[i], want[i], scale[i]);
      expect_close("cblas_dgemv", w[i], want[i], scale[i]);
    }
    free(a);
  }
  { /* DGEMM, Fortran and CBLAS, through the library */
    enum { m = 6, nn = 5, k = 4, lda = 8, ldb = 6, ldc = 9 };
    double* a = random_buffer((size_t)lda * m); /* op(A) = A^T: A is k x m */
    double* b = random_buffer((size_t)ldb * nn);
    double* c = random_buffer((size_t)ldc * nn);
    double* c_before = random_buffer((size_t)ldc * nn);
    memcpy(c_before, c, sizeof(double) * ldc * nn);
    long double want[m * nn], scale[m * nn];
    const double alpha = 0.5, beta = 2.0;
    reference_gemm(0, 1, 0, m, nn, k, alpha, a, lda, b, ldb, beta, c, ldc, want, scale);
    const int m_ = m, n_ = nn, k_ = k, lda_ = lda, ldb_ = ldb, ldc_ = ldc;
    dgemm_("T", "N", &m_, &n_, &k_, &alpha, a, &lda_, b, &ldb_, &beta, c, &ldc_, 1, 1);
    failures += compare_gemm("dgemm_", 0, m, nn, k, c, ldc, c_before, want, scale) != 0;

    memcpy(c, c_before, sizeof(double) * ldc * nn);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, nn, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
    failures += compare_gemm("cblas_dgemm", 0, m, nn, k, c, ldc, c_before, want, scale) != 0;
    free(a);
    free(b);
    free(c);
    free(c_before);
  }

  printf("replacement libblas (C): %d failures\n", failures);
  return failures != 0;
}
