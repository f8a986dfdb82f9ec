/* xerbla_ and cblas_xerbla that record the report (routine, lower case, and parameter number)
 * instead of printing it and, for cblas_xerbla, exiting, as reference BLAS lets a program do.
 * Included by exactly one translation unit of a test program, which must be linked with
 * -rdynamic (ENABLE_EXPORTS) so that these definitions come first in the global scope. */
#ifndef OZDGEMM_TESTS_INTERPOSE_XERBLA_RECORDER_H
#define OZDGEMM_TESTS_INTERPOSE_XERBLA_RECORDER_H

#include <cblas.h>
#include <ctype.h>
#include <stddef.h>
#include <string.h>

static int handler_calls = 0;
static char last_routine[32];
static int last_info = 0;

static void record(const char* name, size_t len, int info) {
  size_t n = 0;
  for (; n < len && n + 1 < sizeof last_routine && name[n] != '\0'; ++n)
    last_routine[n] = (char)tolower((unsigned char)name[n]);
  while (n > 0 && last_routine[n - 1] == ' ') --n;
  last_routine[n] = '\0';
  last_info = info;
  ++handler_calls;
}

void xerbla_(const char* srname, const int* info, size_t len) { record(srname, len, *info); }

void cblas_xerbla(CBLAS_INT info, const char* rout, const char* form, ...) {
  (void)form;
  record(rout, strlen(rout), (int)info);
}

#endif
