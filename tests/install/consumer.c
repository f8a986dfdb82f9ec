/* A program built against an installed ozdgemm through pkg-config or find_package(ozdgemm):
 * it includes the public header, links libozdgemm.so and calls the C API (no GPU needed). */
#include <stdio.h>

#include <ozdgemm/ozdgemm.h>

int main(void) {
  const ozdgemm_options_t o = ozdgemm_default_options();
  /* Invalid arguments come back as a status, with no device touched. */
  const ozdgemm_status_t st = ozdgemm_dgemm_reference('X', 'N', 1, 1, 1, 1.0, NULL, 1, NULL, 1,
                                                      0.0, NULL, 1, o);
  printf("default moduli %d, status of an invalid call: %s\n", o.num_moduli,
         ozdgemm_status_string(st));
  return o.num_moduli == OZDGEMM_DEFAULT_MODULI && st == OZDGEMM_STATUS_INVALID_VALUE ? 0 : 1;
}
