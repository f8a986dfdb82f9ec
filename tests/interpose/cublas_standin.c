/* A stand-in for libcublas.so.13, built under that file name and soname in a folder of its own
 * (build/tests/interpose/cublas-standin/) that no other target links from. It lets CI check the
 * audit module (src/audit/audit.c) without CUDA: the module treats it as cuBLAS by its name,
 * and libozdgemm.so's hooks find it as their "real" cuBLAS (dlopen of libcublas.so.13 returns
 * the copy already loaded). Each entry point records which object called it and returns
 * CUBLAS_STATUS_ARCH_MISMATCH (8), a status the hooks never make up themselves.
 * Plain C types only: a cublasHandle_t is a pointer, the enums are ints. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "standin_caller.h"

/* Intercepted by libozdgemm.so. */
__attribute__((visibility("default"), noinline)) int cublasDgemm_v2(
    void* handle, int transa, int transb, int m, int n, int k, const double* alpha, const double* a,
    int lda, const double* b, int ldb, const double* beta, double* c, int ldc) {
  (void)handle, (void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha, (void)a;
  (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
  record_caller(__builtin_return_address(0));
  return STANDIN_STATUS;
}

/* Not intercepted: must never be redirected. */
__attribute__((visibility("default"), noinline)) int cublasSgemm_v2(
    void* handle, int transa, int transb, int m, int n, int k, const float* alpha, const float* a,
    int lda, const float* b, int ldb, const float* beta, float* c, int ldc) {
  (void)handle, (void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha, (void)a;
  (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
  record_caller(__builtin_return_address(0));
  return STANDIN_STATUS;
}

/* Which object made the latest call of the two above. */
__attribute__((visibility("default"))) const char* cublas_standin_last_caller(void) {
  return last_caller;
}
