/* What the cuBLAS and cuBLASLt stand-ins (cublas_standin.c, cublaslt_standin.c) share: every
 * entry returns STANDIN_STATUS and records which object called it, each library for itself. */
#pragma once

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define STANDIN_STATUS 8 /* CUBLAS_STATUS_ARCH_MISMATCH, a status the hooks never make up */

static char last_caller[256] = "(none)";

/* The file name, without folders, of the object that holds `code`. */
static void record_caller(const void* code) {
  Dl_info info;
  const char* name = "(unknown)";
  if (dladdr(code, &info) != 0 && info.dli_fname != NULL) {
    const char* slash = strrchr(info.dli_fname, '/');
    name = slash != NULL ? slash + 1 : info.dli_fname;
  }
  snprintf(last_caller, sizeof last_caller, "%s", name);
}
