/* The CPU BLAS of a library the process loaded with RTLD_LOCAL (pip's numpy: a Python extension
 * module links its bundled scipy-openblas): dlopens local_scope_module.so (argv[1]) with
 * RTLD_LOCAL and calls scipy_dsyrk_64_ and scipy_cblas_dgemm64_ through it. Run preloaded in
 * native mode: both calls must reach the test BLAS in the module's local scope (which RTLD_NEXT
 * does not see) and give exact results on small integers. Exit 0 when both hold. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: local_scope_test path/to/local_scope_module.so\n");
    return 2;
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
