// The GPU pipeline of Ozaki Scheme II for one call, enqueued on one stream with no host
// synchronisation:
//   1. scaling: per-vector exponent scan, then the fast (norm) or accurate (INT8 bound GEMM)
//      exponents;
//   2. residues: s INT8 planes per operand;
//   3. s INT8 x INT8 -> INT32 GEMMs, strided-batched over the moduli, per k-block;
//   4. reduction mod m_t fused with CRT reconstruction, inverse scaling and alpha/beta.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "core/gemm_problem.hpp"
#include "core/scalar.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

// Optional instrumentation: events recorded at the stage boundaries (start, after scaling
// and residues, after the INT8 GEMMs, after CRT). Recording adds no synchronisation.
struct stage_events {
  cudaEvent_t start, prepared, multiplied, finished;
};

// How the s modulus GEMMs are issued: automatic picks by size (emulate.cpp says why).
enum class gemm_batching { automatic, batched, looped };

struct device_gemm {
  gemm_problem p;  // device pointers; m, n, k > 0
  scalar_arg alpha, beta;
  int num_moduli;
  scaling_mode mode;
  cudaStream_t stream;
  cublasHandle_t int8_handle;  // private handle bound to `stream`
  stage_events* events;        // may be null
  gemm_batching batching = gemm_batching::automatic;
  // The workspace already holds A's scaling and residues from the previous call on it with the
  // same A, m, k, alpha, moduli and fast scaling (only another B, n, C): skip A's passes. Fast
  // scaling only: there each row's exponent depends on that row alone, so the result is
  // bit-identical to one call over all columns. The host path's column tiles use it.
  bool reuse_a = false;
};

// Workspace the call needs, in bytes. The sizes may come from callers: false when the
// count overflows (or exceeds PTRDIFF_MAX), checked before anything is allocated.
bool emulation_workspace_bytes(int64_t m, int64_t n, int64_t k, int num_moduli,
                               scaling_mode mode, size_t* bytes) noexcept;
// The same for sizes known to fit; throws std::length_error when they do not.
size_t emulation_workspace_bytes(int64_t m, int64_t n, int64_t k, int num_moduli,
                                 scaling_mode mode);

// Enqueues the whole pipeline. Throws cuda_error / cublas_error on failure.
void enqueue_emulation(const device_gemm& call, void* workspace);

}  // namespace ozdgemm::detail
