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
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

// Per-vector results of the scaling stage.
struct scaling_result {
  std::vector<int> exp_a, exp_b;          // A'_il = trunc(op(A)_il 2^exp_a[i]), likewise B'
  std::vector<uint8_t> flags_a, flags_b;  // kHasNaN | kHasPosInf | kHasNegInf
};

scaling_result reference_scaling(const gemm_problem& p, int num_moduli, scaling_mode mode);

// Bytes of scratch reference_dgemm allocates for an m x n x k problem with s moduli; false
// when that overflows (or exceeds PTRDIFF_MAX). Sizes from callers are checked with it before
// anything is read or allocated.
bool reference_scratch_bytes(int64_t m, int64_t n, int64_t k, int num_moduli, size_t* bytes);

// C = alpha op(A) op(B) + beta C with BLAS semantics (alpha == 0: A, B not read;
// beta == 0: C not read; k == 0: C = beta C).
void reference_dgemm(const gemm_problem& p, double alpha, double beta, int num_moduli,
                     scaling_mode mode);

}  // namespace ozdgemm::detail
