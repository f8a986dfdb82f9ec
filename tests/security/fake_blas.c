/* A stand-in for a library named by OZDGEMM_CPU_BLAS. Its constructor announces that it was
 * loaded, so security_test.sh can tell that a setgid process never loads it. */
#include <stdio.h>

__attribute__((constructor)) static void announce(void) {
  fputs("fake_blas: loaded\n", stderr);
}

void dgemm_(void) {}
