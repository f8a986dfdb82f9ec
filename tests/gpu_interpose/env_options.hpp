// The options an intercepted call runs with (OZDGEMM_MODULI, OZDGEMM_ACCURACY, OZDGEMM_SCALING
// as the library reads them), for the test programs that compare it with the host reference.
#pragma once

#include <cstdlib>
#include <cstring>

#include "ozdgemm/ozdgemm.h"

inline ozdgemm_options_t env_options() {
  // ozdgemm_default_options()'s values: the programs that include this may not link the library.
  ozdgemm_options_t o{OZDGEMM_DEFAULT_MODULI, OZDGEMM_SCALING_FAST, OZDGEMM_ACCURACY_NATIVE};
  if (const char* s = std::getenv("OZDGEMM_MODULI"))
    o.num_moduli = std::strcmp(s, "auto") == 0        ? OZDGEMM_MODULI_AUTO
                   : std::strcmp(s, "certified") == 0 ? OZDGEMM_MODULI_CERTIFIED
                                                      : std::atoi(s);
  if (const char* s = std::getenv("OZDGEMM_ACCURACY"))
    o.accuracy = std::strcmp(s, "native") == 0 ? OZDGEMM_ACCURACY_NATIVE
                 : std::strcmp(s, "max") == 0  ? OZDGEMM_ACCURACY_MAX
                                               : std::atoi(s);
  if (const char* s = std::getenv("OZDGEMM_SCALING"))
    o.scaling = std::strcmp(s, "accurate") == 0 ? OZDGEMM_SCALING_ACCURATE : OZDGEMM_SCALING_FAST;
  return o;
}

// The options of a real host call (cblas_dgemm, dgemm_) under the same variables: its `native`
// target is the CPU BLAS's 2^-53 (|A||B|)_ij (docs/accuracy.md, section 3), which the C API
// spells as 53 bits.
inline ozdgemm_options_t host_env_options() {
  ozdgemm_options_t o = env_options();
  if (o.accuracy == OZDGEMM_ACCURACY_NATIVE) o.accuracy = 53;
  return o;
}
