/* A cuBLAS client as XLA is one: it dlopens the library RTLD_LOCAL and takes every entry point
 * with dlsym on that handle, so LD_PRELOAD alone never reaches its calls.
 *
 * Usage: dlsym_client LIBCUBLAS LIBCUBLASLT redirected|direct
 *   redirected: dlsym of cublasDgemm_v2 must give libozdgemm.so's definition, and its call must
 *     reach the library's own cuBLAS (LIBCUBLAS) from libozdgemm.so, with that library's
 *     status (LD_PRELOAD=libozdgemm.so LD_AUDIT=libozdgemm_audit.so); likewise dlsym of
 *     cublasLtMatmul on LIBCUBLASLT gives libozdgemm.so's ozdgemm_audit_cublasLtMatmul, whose
 *     call reaches LIBCUBLASLT's from libozdgemm.so;
 *   direct: dlsym must give LIBCUBLAS's and LIBCUBLASLT's definitions, called from this program
 *     (no audit module, or no libozdgemm.so).
 * In both, cublasSgemm_v2 and cublasLtMatmulAlgoGetHeuristic (not intercepted) are the
 * libraries' own, called from this program.
 * Exits 0 when every check holds. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef int (*dgemm_fn)(void*, int, int, int, int, int, const double*, const double*, int,
                        const double*, int, const double*, double*, int);
typedef int (*sgemm_fn)(void*, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
typedef const char* (*last_caller_fn)(void);
typedef int (*lt_matmul_fn)(void*, void*, const void*, const void*, void*, const void*, void*,
                            const void*, const void*, void*, void*, void*, const void*, void*,
                            size_t, void*);
typedef int (*lt_heuristic_fn)(void*, void*, void*, void*, void*, void*, void*, int, void*, int*);

enum { kStandinStatus = 8 }; /* what cublas_standin.c returns */

static int failures = 0;

static const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

/* The file name of the object that defines `p`. */
static const char* defined_in(void* p) {
  Dl_info info;
  if (dladdr(p, &info) == 0 || info.dli_fname == NULL) return "(unknown)";
  return base_name(info.dli_fname);
}

static void expect_prefix(const char* what, const char* got, const char* prefix) {
  const int ok = strncmp(got, prefix, strlen(prefix)) == 0;
  printf("%-28s %-28s %s\n", what, got, ok ? "ok" : "FAIL");
  if (!ok) {
    fprintf(stderr, "FAIL: %s is %s, expected %s...\n", what, got, prefix);
    ++failures;
  }
}

static void expect_status(const char* what, int got) {
  printf("%-28s %-28d %s\n", what, got, got == kStandinStatus ? "ok" : "FAIL");
  if (got != kStandinStatus) {
    fprintf(stderr, "FAIL: %s returned %d, the stand-in's status is %d\n", what, got,
            kStandinStatus);
    ++failures;
  }
}

int main(int argc, char** argv) {
  if (argc != 4 || (strcmp(argv[3], "redirected") != 0 && strcmp(argv[3], "direct") != 0)) {
    fprintf(stderr, "usage: %s LIBCUBLAS LIBCUBLASLT redirected|direct\n", argv[0]);
    return 2;
  }
  const int redirected = strcmp(argv[3], "redirected") == 0;
  const char* standin_lt = base_name(argv[2]);
  const char* standin = base_name(argv[1]);
  char self[256];
  snprintf(self, sizeof self, "%s", base_name(argv[0]));

  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "FAIL: dlopen(%s): %s\n", argv[1], dlerror());
    return 1;
  }
  dgemm_fn dgemm = (dgemm_fn)dlsym(lib, "cublasDgemm_v2");
  sgemm_fn sgemm = (sgemm_fn)dlsym(lib, "cublasSgemm_v2");
  last_caller_fn last_caller = (last_caller_fn)dlsym(lib, "cublas_standin_last_caller");
  if (dgemm == NULL || sgemm == NULL || last_caller == NULL) {
    fprintf(stderr, "FAIL: an entry point is missing from %s\n", argv[1]);
    return 1;
  }

  /* A null handle: the library forwards the call untouched (no GPU needed). */
  double a[16 * 16] = {0}, b[16 * 16] = {0}, c[16 * 16] = {0};
  const double one = 1.0, zero = 0.0;
  expect_prefix("cublasDgemm_v2 defined in", defined_in((void*)dgemm),
                redirected ? "libozdgemm.so" : standin);
  expect_status("cublasDgemm_v2 status",
                dgemm(NULL, 0, 0, 16, 16, 16, &one, a, 16, b, 16, &zero, c, 16));
  expect_prefix("cublasDgemm_v2 reached from", last_caller(), redirected ? "libozdgemm.so" : self);

  float sa[4] = {0}, sb[4] = {0}, sc[4] = {0};
  const float sone = 1.0f, szero = 0.0f;
  expect_prefix("cublasSgemm_v2 defined in", defined_in((void*)sgemm), standin);
  expect_status("cublasSgemm_v2 status",
                sgemm(NULL, 0, 0, 2, 2, 2, &sone, sa, 2, sb, 2, &szero, sc, 2));
  expect_prefix("cublasSgemm_v2 reached from", last_caller(), self);

  void* lt = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (lt == NULL) {
    fprintf(stderr, "FAIL: dlopen(%s): %s\n", argv[2], dlerror());
    return 1;
  }
  lt_matmul_fn matmul = (lt_matmul_fn)dlsym(lt, "cublasLtMatmul");
  lt_heuristic_fn heuristic = (lt_heuristic_fn)dlsym(lt, "cublasLtMatmulAlgoGetHeuristic");
  last_caller_fn lt_last_caller = (last_caller_fn)dlsym(lt, "cublaslt_standin_last_caller");
  if (matmul == NULL || heuristic == NULL || lt_last_caller == NULL) {
    fprintf(stderr, "FAIL: an entry point is missing from %s\n", argv[2]);
    return 1;
  }
  /* Arbitrary non-null descriptors and scalars: the stand-in reads every matmul as FP32. */
  char desc[64] = {0};
  expect_prefix("cublasLtMatmul defined in", defined_in((void*)matmul),
                redirected ? "libozdgemm.so" : standin_lt);
  expect_status("cublasLtMatmul status", matmul(NULL, desc, &one, a, desc, b, desc, &zero, c, desc,
                                                c, desc, NULL, NULL, 0, NULL));
  expect_prefix("cublasLtMatmul reached from", lt_last_caller(),
                redirected ? "libozdgemm.so" : self);
  int returned = 0;
  expect_prefix("cublasLtMatmulAlgoGetHeuristic defined in", defined_in((void*)heuristic),
                standin_lt);
  expect_status("cublasLtMatmulAlgoGetHeuristic status",
                heuristic(NULL, desc, desc, desc, desc, desc, NULL, 1, NULL, &returned));
  expect_prefix("cublasLtMatmulAlgoGetHeuristic reached from", lt_last_caller(), self);

  printf("%s\n", failures ? "checks failed" : "every check holds");
  return failures != 0;
}
