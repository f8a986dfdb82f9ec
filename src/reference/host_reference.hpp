// The Ozaki Scheme II pipeline in plain C++: the same stages and the same per-element
// arithmetic (src/core) as the CUDA kernels, with the INT8 GEMMs as integer loops. Output
// is bit-identical to the GPU pipeline for the same inputs and options (NaN payloads aside).
// It is slow (O(s m n k) integer operations) and meant for tests and for machines with no
// GPU; it never calls a floating-point GEMM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

// Per-vector results of the scaling stage.
struct scaling_result {
  std::vector<int> exp_a, exp_b;          // A'_il = op(A)_il 2^exp_a[i] rounded, likewise B'
  std::vector<uint8_t> flags_a, flags_b;  // kHasNaN | kHasPosInf | kHasNegInf
  // Round to nearest (rounds_to_nearest(tb, k)), else toward zero. Prototype rules that only
  // prove their bound for truncation leave it false.
  bool nearest = false;
};

scaling_result reference_scaling(const gemm_problem& p, int num_moduli, scaling_mode mode);

// Accurate mode in two steps, the first independent of s: U = u(A)^T u(B) (column-major,
// u[j * m + i], exact), then the exponents for one moduli table. reference_scaling() uses
// exactly these, so exponents derived here for any s equal its own.
std::vector<double> bound_product(const gemm_problem& p, const std::vector<int>& emax_a,
                                  const std::vector<int>& emax_b);
void accurate_exponents_from_u(const std::vector<double>& u, int64_t m, int64_t n,
                               const std::vector<int>& emax_a, const std::vector<int>& emax_b,
                               const modulus_table& tb, std::vector<int>& ea,
                               std::vector<int>& eb);

// Bytes of scratch reference_dgemm allocates for an m x n x k problem with s moduli; false
// when that overflows (or exceeds PTRDIFF_MAX). Sizes from callers are checked with it before
// anything is read or allocated.
bool reference_scratch_bytes(int64_t m, int64_t n, int64_t k, int num_moduli, size_t* bytes);

// C = alpha op(A) op(B) + beta C with BLAS semantics (alpha == 0: A, B not read;
// beta == 0: C not read; k == 0: C = beta C).
void reference_dgemm(const gemm_problem& p, double alpha, double beta, int num_moduli,
                     scaling_mode mode);

// The residue, INT8-GEMM and CRT stages with given exponents (m, n, k >= 1, alpha != 0): for
// prototype scaling rules. The caller guarantees sum_l |A'_il||B'_lj| <= L for every (i, j).
void reference_dgemm_with_scaling(const gemm_problem& p, double alpha, double beta,
                                  int num_moduli, const scaling_result& sc);

}  // namespace ozdgemm::detail
