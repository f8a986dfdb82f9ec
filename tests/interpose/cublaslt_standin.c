/* A stand-in for libcublasLt.so.13, beside the libcublas.so.13 one (cublas_standin.c, which says
 * why): cublasLtMatmul, whose lookups the audit module answers with libozdgemm.so's
 * ozdgemm_audit_cublasLtMatmul, and cublasLtMatmulAlgoGetHeuristic, which it must not redirect.
 * The descriptor getter reports every matmul as FP32 (CUBLAS_COMPUTE_32F), which the library
 * forwards untouched. Each entry records which object called it and returns
 * CUBLAS_STATUS_ARCH_MISMATCH (8). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "standin_caller.h"

#define COMPUTE_32F 68 /* CUBLAS_COMPUTE_32F */

__attribute__((visibility("default"), noinline)) int cublasLtMatmul(
    void* light, void* desc, const void* alpha, const void* a, void* a_desc, const void* b,
    void* b_desc, const void* beta, const void* c, void* c_desc, void* d, void* d_desc,
    const void* algo, void* workspace, size_t workspace_bytes, void* stream) {
  (void)light, (void)desc, (void)alpha, (void)a, (void)a_desc, (void)b, (void)b_desc, (void)beta;
  (void)c, (void)c_desc, (void)d, (void)d_desc, (void)algo, (void)workspace;
  (void)workspace_bytes, (void)stream;
  record_caller(__builtin_return_address(0));
  return STANDIN_STATUS;
}

__attribute__((visibility("default"), noinline)) int cublasLtMatmulAlgoGetHeuristic(
    void* light, void* desc, void* a, void* b, void* c, void* d, void* preference, int requested,
    void* results, int* returned) {
  (void)light, (void)desc, (void)a, (void)b, (void)c, (void)d, (void)preference, (void)requested;
  (void)results, (void)returned;
  record_caller(__builtin_return_address(0));
  return STANDIN_STATUS;
}

/* Every attribute reads as the compute type FP32. */
__attribute__((visibility("default"))) int cublasLtMatmulDescGetAttribute(void* desc, int attr,
                                                                          void* buf, size_t size,
                                                                          size_t* written) {
  (void)desc, (void)attr;
  const int32_t compute = COMPUTE_32F;
  if (size < sizeof compute) return 7; /* CUBLAS_STATUS_INVALID_VALUE */
  memcpy(buf, &compute, sizeof compute);
  *written = sizeof compute;
  return 0;
}
__attribute__((visibility("default"))) int cublasLtMatrixLayoutGetAttribute(void* layout, int attr,
                                                                            void* buf, size_t size,
                                                                            size_t* written) {
  (void)layout, (void)attr, (void)buf, (void)size, (void)written;
  return 7;
}

__attribute__((visibility("default"))) const char* cublaslt_standin_last_caller(void) {
  return last_caller;
}
