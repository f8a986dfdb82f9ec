/* A BLAS program that (by default) never calls DGEMM: ddot_ and daxpy_ only, checked against
 * plain loops. With libozdgemm.so preloaded those calls go through its forwarders to the CPU
 * BLAS, and CUDA must stay untouched: no CUDA driver (libcuda.so) mapped in the process.
 * lazy_start.sh runs it under LD_DEBUG=libs to see that the driver was not even looked for.
 *
 * With the argument "dgemm" it also calls dgemm_ once, 256 x 256 x 256: the positive control
 * (the host path then asks CUDA for the GPU count, which loads the driver where there is one
 * and looks for it where there is none).
 *
 * Prints "libcuda mapped: yes|no; libcublas mapped: yes|no" (from /proc/self/maps; libcublas
 * covers libcublasLt) and exits 0 when the results are right.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interpose/proc_maps.h"

double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy);
void daxpy_(const int* n, const double* alpha, const double* x, const int* incx, double* y,
            const int* incy);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, size_t la, size_t lb);

static const char* yes_no(int v) { return v < 0 ? "unknown" : v ? "yes" : "no"; }

int main(int argc, char** argv) {
  const int call_dgemm = argc > 1 && strcmp(argv[1], "dgemm") == 0;
  enum { kN = 1000 };
  static double x[kN], y[kN];
  for (int i = 0; i < kN; ++i) x[i] = 0.5 + i % 7, y[i] = 1.0 - i % 5; /* halves and integers */
  const int n = kN, one = 1;
  const double alpha = 2.0;
  double dot = 0;
  for (int i = 0; i < kN; ++i) dot += x[i] * y[i]; /* exact: integers and halves, small */
  int failed = ddot_(&n, x, &one, y, &one) != dot;
  daxpy_(&n, &alpha, x, &one, y, &one);
  for (int i = 0; i < kN; ++i) failed |= y[i] != 1.0 - i % 5 + 2.0 * (0.5 + i % 7);

  if (call_dgemm) {
    const int m = 256;
    double* a = malloc(sizeof(double) * m * m);
    double* c = malloc(sizeof(double) * m * m);
    for (int i = 0; i < m * m; ++i) a[i] = (i % 3) - 1.0, c[i] = 0;
    const double one_d = 1.0, zero = 0.0;
    dgemm_("N", "N", &m, &m, &m, &one_d, a, &m, a, &m, &zero, c, &m, 1, 1);
    for (int j = 0; j < m && !failed; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0; /* exact: sums of small integers */
        for (int p = 0; p < m; ++p) s += a[i + p * m] * a[p + j * m];
        if (c[i + j * m] != s) failed = 1;
      }
    free(a);
    free(c);
  }

  const int cuda = mapped("/libcuda.so"), cublas = mapped("/libcublas");
  printf("BLAS results %s; dgemm_ %s; libcuda mapped: %s; libcublas mapped: %s\n",
         failed ? "WRONG" : "right", call_dgemm ? "called" : "not called", yes_no(cuda),
         yes_no(cublas));
  return failed || cuda < 0 || cublas < 0 ? 1 : 0;
}
