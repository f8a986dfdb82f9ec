/* Whether a shared library is mapped into this process: the test programs that prove the
 * library pays no CUDA or cuBLAS start-up without a DGEMM (tests/interpose, tests/mpi). */
#ifndef OZDGEMM_TESTS_INTERPOSE_PROC_MAPS_H
#define OZDGEMM_TESTS_INTERPOSE_PROC_MAPS_H

#include <stdio.h>
#include <string.h>

/* 1 if a file whose path contains `name` is mapped into this process, 0 if not, -1 if unknown. */
static inline int mapped(const char* name) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) return -1;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (strstr(line, name) != NULL) found = 1;
  fclose(f);
  return found;
}

#endif
