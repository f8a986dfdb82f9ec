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

// Emulates on the GPU that device_select.hpp picks when the decision says so. Returns how many leading
// columns of C hold the result: g.n once the GPU served the call; 0, having written nothing,
// when the call must go to the CPU BLAS instead (native mode, no usable GPU, too small, or an
// internal failure before any output); in between when an internal failure stopped it part
// way, in which case the caller computes the remaining columns on the CPU BLAS. The reason is
// logged and counted. `entry` names the intercepted symbol for the log. Never throws.
int64_t try_host_offload(const host_gemm& g, const char* entry) noexcept;

}  // namespace ozdgemm::detail
