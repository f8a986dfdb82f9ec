// What the plain cuBLAS test programs of this folder share: the preloaded library's C API
// found with dlsym at run time (the programs do not link libozdgemm.so, so without LD_PRELOAD
// the symbols are simply absent), the options the library reads from the environment
// (env_options.hpp), and a
// CHECK that reports and counts a failure without stopping the program.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "env_options.hpp"
#include "ozdgemm/ozdgemm.h"

using ref_fn = decltype(&ozdgemm_dgemm_reference);
using api_fn = decltype(&ozdgemm_dgemm);
using to_cublas_fn = decltype(&ozdgemm_status_to_cublas);
using cblas_fn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                          int, double, double*, int);

// A symbol of the preloaded library (or of anything else loaded), null when absent.
template <class F>
F preloaded_symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

// Failures so far, over all threads; the program's exit status comes from it.
inline std::atomic<int> failures{0};

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                        \
      std::fprintf(stderr, "\n");                               \
      ++failures;                                               \
    }                                                           \
  } while (0)
