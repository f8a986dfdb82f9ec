// Small device helpers shared by the kernel families.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace ozdgemm::detail {

// Butterfly shuffle of any trivially copyable value, one 32-bit word at a time.
template <class T>
__device__ __forceinline__ T shfl_xor_value(const T& v, int mask) {
  static_assert(sizeof(T) % 4 == 0, "shuffle needs whole words");
  uint32_t w[sizeof(T) / 4];
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(T) / 4); ++i)
    w[i] = __shfl_xor_sync(0xFFFFFFFFu, w[i], mask);
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}

// alpha == 0 in device pointer mode: A and B must not be read (BLAS semantics).
__device__ __forceinline__ bool skip_inputs(const double* alpha_dev) {
  return alpha_dev != nullptr && *alpha_dev == 0.0;
}

// Loads `kernels` on the current device now. Under CUDA's lazy loading (the default since CUDA
// 12.2) a kernel is loaded at its first launch, and loading can wait for the work already on the
// device: a call that must not wait (a speculated count, engine/speculation.hpp) may be the
// first to launch a kernel, so the contexts load such kernels when they are made.
template <class... Kernel>
cudaError_t load_kernels(Kernel... kernels) {
  cudaFuncAttributes attributes;
  for (const void* kernel : {reinterpret_cast<const void*>(kernels)...}) {
    const cudaError_t e = cudaFuncGetAttributes(&attributes, kernel);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

inline unsigned grid_dim(int64_t work, int64_t per_block, int64_t limit = 2147483647) {
  int64_t g = (work + per_block - 1) / per_block;
  if (g < 1) g = 1;
  return static_cast<unsigned>(g < limit ? g : limit);
}

}  // namespace ozdgemm::detail
