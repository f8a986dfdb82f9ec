// The leaves of the library's own triangular solve (interpose/diagonal_solve.hpp): op(A) X =
// alpha B or X op(A) = alpha B for a triangle of small order, by substitution in FP64, one
// right-hand vector (a column of B on the left, a row on the right) per thread with the
// triangle in shared memory. cuBLAS's TRSM takes about as long for a triangle of order 64 as
// for one of 512 (its time grows with the order times the right-hand sides at these orders,
// bench/results/level3/README.md); substitution at the leaves and GEMM updates above them
// do not.
#pragma once

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ozdgemm::detail {

// The largest order one launch solves: x of a thread stays in registers.
template <class T>
constexpr int64_t small_trsm_order() {
  return sizeof(T) == sizeof(double) ? 64 : 32;
}

// One solve, BLAS's TRSM arguments (column-major, device pointers, 1 <= order <= the largest).
// transpose/conjugate: op(A) = A^T or A^H; lower: A's stored triangle; unit: the diagonal is
// taken as 1 and not read. alpha == 0: X = 0 without reading B. Only A's stored triangle is
// read. Each x_j is a product by the reciprocal of the diagonal scaled by a power of two into
// [1, 2) (one rounding more than a division, and no overflow or lost bits where the diagonal is
// subnormal or huge): the residual stays within 4 (order + 2) u |T||x| + 2u |alpha b|
// componentwise (tests/gpu/small_trsm_test.cpp).
template <class T>
struct small_trsm_args {
  bool left, lower, transpose, conjugate, unit;
  int64_t m, n;  // B: m x n
  T alpha;
  const T* a;
  int64_t lda;
  T* b;
  int64_t ldb;
};
cudaError_t launch_small_trsm(const small_trsm_args<double>& x, cudaStream_t stream);
cudaError_t launch_small_trsm(const small_trsm_args<cuDoubleComplex>& x, cudaStream_t stream);

// Loads both kernels on the current device (launch_common.cuh, load_kernels).
cudaError_t load_small_trsm_kernels();

}  // namespace ozdgemm::detail
