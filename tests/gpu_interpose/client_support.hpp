// What the plain cuBLAS test programs of this folder share: the preloaded library's C API
// found with dlsym at run time (the programs do not link libozdgemm.so, so without LD_PRELOAD
// the symbols are simply absent), the options the library reads from the environment
// (env_options.hpp), and a
// CHECK that reports and counts a failure without stopping the program.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

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

// n values uniform in [-1, 1), the same for the same seed.
inline std::vector<double> random_doubles(size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(gen);
  return v;
}

// A device copy of v (at least one element), and v back from the device once the GPU is idle.
inline double* to_device(const std::vector<double>& v) {
  double* p = nullptr;
  cudaMalloc(&p, std::max<size_t>(v.size(), 1) * sizeof(double));
  cudaMemcpy(p, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice);
  return p;
}
inline std::vector<double> to_host(const double* p, size_t n) {
  std::vector<double> v(n);
  cudaDeviceSynchronize();
  cudaMemcpy(v.data(), p, n * sizeof(double), cudaMemcpyDeviceToHost);
  return v;
}

// For the programs that check the library against native cuBLAS in one process: a handle for
// the calls under test, and one in CUBLAS_PEDANTIC_MATH, whose calls the library forwards
// unchanged (native cuBLAS). Returns 77 (ctest's skip) without a GPU, 1 if cuBLAS fails, else 0.
inline int test_and_native_handles(cublasHandle_t* tested, cublasHandle_t* native) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no GPU: nothing to test\n");
    return 77;
  }
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  if (preloaded_symbol<api_fn>("ozdgemm_dgemm") == nullptr)
    std::printf("libozdgemm.so is not loaded: every call runs native cuBLAS\n");
  if (cublasCreate(tested) != CUBLAS_STATUS_SUCCESS ||
      cublasCreate(native) != CUBLAS_STATUS_SUCCESS) {
    std::printf("FAIL: cublasCreate\n");
    return 1;
  }
  cublasSetMathMode(*native, CUBLAS_PEDANTIC_MATH);
  return 0;
}
