/* What the batch client programs (batch_strided_test.c, group_batch_test.c) share: their modes
 * and start-up, the flags, and the test library's recorder (test_batch_blas.h).
 *   forwarded  linked to libozdgemm_test_batch.so: calls reach it (past LD_PRELOAD);
 *   emulated   the same with the reference host offload preloaded; argv[2] is the fixed moduli
 *              count, argv[3] libozdgemm.so's path (its ozdgemm_?gemm_reference);
 *   gpu        emulated, with libozdgemm.so itself preloaded on a machine with a GPU (exit 77,
 *              skipped, without one): the GPU host path computes the reference's bits;
 *   missing    linked -lozdgemm in place of -lblas: reference BLAS (libblas.so.3) is the
 *              expectation. */
#ifndef OZDGEMM_TESTS_INTERPOSE_BATCH_CLIENT_H
#define OZDGEMM_TESTS_INTERPOSE_BATCH_CLIENT_H

#include <ctype.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRowMajor = 101, kColMajor = 102 };
enum mode { forwarded, emulated, missing };

typedef struct {
  int num_moduli, scaling, accuracy;
} options_t; /* ozdgemm_options_t: int, enum, int */

typedef struct {
  enum mode mode;
  int moduli;
  void* own_library;    /* libozdgemm_test_batch.so (forwarded, emulated) */
  void* reference_blas; /* libblas.so.3 (missing) */
  void* api;            /* libozdgemm.so, opened RTLD_LOCAL (emulated) */
} batch_client;

static batch_client client = {forwarded, 16, NULL, NULL, NULL};

/* One routine of a client: its name, and whether it is a CBLAS and a complex one. */
typedef struct {
  const char* name;
  int cblas, cplx;
} routine;

/* Whether the CUDA runtime sees a GPU (dlopen: the client links no CUDA). */
static inline int batch_client_has_gpu(void) {
  void* cudart = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  int (*count)(int*) = cudart != NULL ? (int (*)(int*))dlsym(cudart, "cudaGetDeviceCount") : NULL;
  int n = 0;
  return count != NULL && count(&n) == 0 && n > 0;
}

/* Reads the mode from argv; 0 when the client can run, else the exit status (2: usage, 77: no
 * GPU for the gpu mode). */
static inline int batch_client_start(int argc, char** argv) {
  const int gpu = argc > 3 && strcmp(argv[1], "gpu") == 0;
  if (gpu && !batch_client_has_gpu()) {
    printf("no GPU: the gpu mode is skipped\n");
    return 77;
  }
  if (argc >= 2 && strcmp(argv[1], "forwarded") == 0) {
    client.mode = forwarded;
  } else if (argc > 3 && (gpu || strcmp(argv[1], "emulated") == 0)) {
    client.mode = emulated;
    client.moduli = atoi(argv[2]);
    /* The reference offload keeps its copy of the C API hidden: take libozdgemm.so's, opened
     * RTLD_LOCAL so that none of its hooks joins the process's symbols. */
    client.api = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
    if (client.api == NULL) {
      fprintf(stderr, "FAIL: %s: %s\n", argv[3], dlerror());
      return 1;
    }
  } else if (argc >= 2 && strcmp(argv[1], "missing") == 0) {
    client.mode = missing;
    client.reference_blas = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
    if (client.reference_blas == NULL) {
      fprintf(stderr, "FAIL: libblas.so.3: %s\n", dlerror());
      return 1;
    }
  } else {
    fprintf(stderr, "usage: %s forwarded|emulated S LIBOZDGEMM|gpu S LIBOZDGEMM|missing\n",
            argv[0]);
    return 2;
  }
  if (client.mode != missing) {
    client.own_library = dlopen("libozdgemm_test_batch.so", RTLD_NOW | RTLD_NOLOAD);
    if (client.own_library == NULL) {
      fprintf(stderr, "FAIL: libozdgemm_test_batch.so is not loaded: %s\n", dlerror());
      return 1;
    }
  }
  return 0;
}

/* libozdgemm.so's entry `name` (emulated), or null with a FAIL line. */
static inline void* batch_client_api(const char* name) {
  void* f = client.api != NULL ? dlsym(client.api, name) : NULL;
  if (f == NULL) fprintf(stderr, "FAIL: no %s in libozdgemm.so\n", name);
  return f;
}

/* The CBLAS code of a Fortran flag (99 for none); op N, in either case. */
static inline int cblas_op(char t) {
  t = (char)toupper((unsigned char)t);
  return t == 'N' ? 111 : t == 'T' ? 112 : t == 'C' ? 113 : 99;
}
static inline int plain(char t) { return toupper((unsigned char)t) == 'N'; }

/* The test library's recorder, when it is loaded (not in the missing mode). */
static inline void test_batch_reset_if_any(void) {
  if (client.own_library != NULL) ((void (*)(void))dlsym(client.own_library, "test_batch_reset"))();
}
static inline const char* test_batch_last_call_if_any(void) {
  return client.own_library != NULL
             ? ((const char* (*)(void))dlsym(client.own_library, "test_batch_last_call"))()
             : NULL;
}
static inline int test_batch_reports_if_any(const char** routine, int* info) {
  *routine = "";
  *info = 0;
  return client.own_library != NULL ? ((int (*)(const char**, int*))dlsym(
                                          client.own_library, "test_batch_reports"))(routine, info)
                                    : 0;
}

#endif
