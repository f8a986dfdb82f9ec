// What the one-off probes (bench/probes) share: exit on a CUDA error, the median time of a
// piece of stream work, and the parameters of a CUDA graph IF node. The probes call CUDA and
// cuBLASLt directly, below the bench library.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_OK(x)                                                                            \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace ozdgemm::bench {

// Median of `reps` timed runs of f (which enqueues on st) after one warm-up, in ms.
template <class F>
double median_ms(F f, int reps, cudaStream_t st) {
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  f();
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CUDA_OK(cudaEventRecord(a, st));
    f();
    CUDA_OK(cudaEventRecord(b, st));
    CUDA_OK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CUDA_OK(cudaEventDestroy(a));
  CUDA_OK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A one-body IF node on `cond` (cudaGraphAddNode fills phGraph_out with its body).
inline cudaGraphNodeParams if_node_params(cudaGraphConditionalHandle cond) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = cond;
  p.conditional.type = cudaGraphCondTypeIf;
  p.conditional.size = 1;
  return p;
}

}  // namespace ozdgemm::bench
