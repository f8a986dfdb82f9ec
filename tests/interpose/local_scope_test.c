/* The CPU BLAS of a library the process loaded with RTLD_LOCAL (pip's numpy: a Python extension
 * module links its bundled scipy-openblas): dlopens local_scope_module.so (argv[1]) with
 * RTLD_LOCAL and calls scipy_dsyrk_64_ and scipy_cblas_dgemm64_ through it. Run preloaded in
 * native mode: both calls must reach the test BLAS in the module's local scope (which RTLD_NEXT
 * does not see) and give exact results on small integers. Exit 0 when both hold.
 *
 * Before loading the module, the program calls both names as the global scope defines them (the
 * preloaded library's; none without it), when no library defines them yet: those calls can do
 * nothing, and must not leave the names unresolved for the module's calls later. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: local_scope_test path/to/local_scope_module.so\n");
    return 2;
  }
  typedef void (*syrk_fn)(const char*, const char*, const int64_t*, const int64_t*, const double*,
                          const double*, const int64_t*, const double*, double*, const int64_t*,
                          size_t, size_t);
  typedef void (*gemm_fn)(int, int, int, int64_t, int64_t, int64_t, double, const double*,
                          int64_t, const double*, int64_t, double, double*, int64_t);
  const syrk_fn early_syrk = (syrk_fn)dlsym(RTLD_DEFAULT, "scipy_dsyrk_64_");
  const gemm_fn early_gemm = (gemm_fn)dlsym(RTLD_DEFAULT, "scipy_cblas_dgemm64_");
  if (early_syrk != NULL && early_gemm != NULL) {
    const int64_t one = 1;
    const double x = 2.0, alpha = 1.0, beta = 0.0;
    double y = 0.0;
    early_syrk("L", "N", &one, &one, &alpha, &x, &one, &beta, &y, &one, 1, 1);
    early_gemm(102, 111, 111, 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &y, 1);
    printf("called both names before any library defined them\n");
  }
  void* module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (module == NULL) {
    fprintf(stderr, "FAIL: dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
  typedef int (*products_fn)(int64_t, int64_t, const double*, double*, double*);
  const products_fn products = (products_fn)dlsym(module, "module_products");
  if (products == NULL) {
    fprintf(stderr, "FAIL: module_products not found\n");
    return 1;
  }
  enum { n = 5, k = 3 };
  double a[n * k], c[n * n], c2[n * n];
  for (int i = 0; i < n * k; ++i) a[i] = (double)(i % 7) - 3.0;
  for (int i = 0; i < n * n; ++i) c[i] = c2[i] = -1.0;
  const int calls = products(n, k, a, c, c2);
  int fail = 0;
  if (calls != 2) {
    fprintf(stderr, "FAIL: the test BLAS received %d of the 2 calls\n", calls);
    fail = 1;
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double want = 0.0;
      for (int l = 0; l < k; ++l) want += a[i + l * n] * a[j + l * n];
      if (c2[i + j * n] != want || (i >= j && c[i + j * n] != want) ||
          (i < j && c[i + j * n] != -1.0)) {
        fprintf(stderr, "FAIL: element (%d, %d): syrk %g, gemm %g, want %g\n", i, j,
                c[i + j * n], c2[i + j * n], want);
        fail = 1;
      }
    }
  if (!fail) printf("both calls reached the locally loaded test BLAS, exact results\n");
  return fail;
}
