// A kernel that keeps one stream busy for a given time, for the tests that check a call returns
// to the host without waiting for the work before it (gpu_choice_test.cu,
// speculative_count_test.cu). Device code: include from .cu files only.
#pragma once

#include <cuda_runtime.h>

namespace ozdgemm::test {

__global__ inline void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Cycles of about `ms` milliseconds on the current device.
inline long long spin_cycles(double ms) {
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  return static_cast<long long>(ms * khz);
}

}  // namespace ozdgemm::test
