// Host-memory DGEMM (cblas_dgemm, dgemm_) served on the GPU.
#pragma once

#include <cstdint>

#include "core/gemm_problem.hpp"

namespace ozdgemm::detail {

// One host call in column-major terms (cblas row-major calls arrive already transposed:
// C^T = op(B)^T op(A)^T). Arguments are valid (checked by the caller with BLAS's rules).
struct host_gemm {
  op_kind opa, opb;
  int64_t m, n, k;
  double alpha;
  const double* a;
  int64_t lda;
  const double* b;
  int64_t ldb;
  double beta;
  double* c;
  int64_t ldc;
};

// Emulates on the GPU (OZDGEMM_DEVICE) when the decision says so and returns true once C
// holds the result. Returns false, having written nothing, when the call must go to the CPU
// BLAS instead (native mode, no usable GPU, too small, or an internal failure); the reason
// is logged and counted. `entry` names the intercepted symbol for the log. Never throws.
bool try_host_offload(const host_gemm& g, const char* entry) noexcept;

}  // namespace ozdgemm::detail
