// Host-memory DGEMM (cblas_dgemm, dgemm_) served on the GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "core/gemm_problem.hpp"
#include "dispatch/decision.hpp"
#include "host_path/tile_queue.hpp"

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

// What the GPU did with a host call.
struct host_offload_result {
  // false: nothing was written; the caller runs the whole call on the CPU BLAS (native mode,
  // no usable GPU, too small, or an internal failure before any output).
  bool served = false;
  // When served: the column ranges of C the GPU did not compute (workers failed part way),
  // left to right, for the caller to compute on the CPU BLAS; empty when the GPU did all. The
  // other columns hold their final values and must not be computed again (beta may read C).
  std::vector<column_range> left;
};

// A host call the GPU runs as another, real problem (ZGEMM: the embedding of docs/complex.md),
// built only once the route says emulate (the packing is not paid by calls that go native) and
// turned into the caller's C once the GPU has computed all of the real problem. Until finish()
// the caller's C is untouched, so a failure anywhere leaves the whole call to the CPU BLAS.
class host_embedded_call {
 public:
  virtual ~host_embedded_call() = default;
  // The real problem on buffers the object owns. May throw (out of memory).
  virtual host_gemm build() = 0;
  // The caller's C from the real problem's result. Must not throw.
  virtual void finish() noexcept = 0;
  // The caller's shape, for the decision line.
  int64_t m = 0, n = 0, k = 0;
};

// Emulates on the GPU(s) of device_select.hpp (OZDGEMM_DEVICES, else the one GPU of
// OZDGEMM_DEVICE's rule) when the decision says so. The reason is logged and counted. `entry`
// names the intercepted symbol for the log. Never throws.
//
// embedded (optional): g is then only the shape the model prices (its pointers unused; alpha
// nonzero, beta nonzero iff the caller's C is read), and the GPU runs embedded->build(). The
// result is all or nothing: served with nothing left, or not served with C untouched.
host_offload_result try_host_offload(const host_gemm& g, const char* entry,
                                     host_embedded_call* embedded = nullptr) noexcept;

// Why try_host_offload would not emulate a call of this shape now (the GPU unusable, the mode,
// the model: a static string), or nullptr when it would; no log line, no count. complex: a
// ZGEMM of that shape, priced as its real embedding (m x 2n x 2k). The Level-3 routines ask it
// before splitting a block into GEMMs. Never throws.
const char* host_gemm_declines(int64_t m, int64_t n, int64_t k, bool complex) noexcept;
// The route behind that answer, with the model's times of the CPU BLAS and of the emulation
// (zero where the route was decided before the model).
route host_gemm_route(int64_t m, int64_t n, int64_t k, bool complex) noexcept;

}  // namespace ozdgemm::detail
