// Complex test inputs (ZGEMM), built from the real generators of inputs.hpp and
// auto_inputs.hpp. Plain C++ (no GMP, no CUDA) so the GPU tests can reuse them.
#pragma once

#include <cstdint>
#include <vector>

#include "support/dd_reference.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {

// A column-major complex host matrix: element (i, j) at data[j * ld + i].
struct zmatrix {
  int64_t rows = 0, cols = 0, ld = 1;
  std::vector<zdouble> data;
  zdouble& operator()(int64_t i, int64_t j) { return data[static_cast<size_t>(j * ld + i)]; }
  zdouble operator()(int64_t i, int64_t j) const { return data[static_cast<size_t>(j * ld + i)]; }
  zdouble* ptr() { return data.data(); }
  const zdouble* ptr() const { return data.data(); }
};

// rows x cols, leading dimension max(ld, rows, 1), every entry (padding included) = fill.
zmatrix make_zmatrix(int64_t rows, int64_t cols, int64_t ld, zdouble fill);

// Real and imaginary parts from two real matrices of the same shape.
zmatrix from_parts(const host_matrix& re, const host_matrix& im);

// (U - 0.5) exp(phi N(0, 1)) in both parts (independent draws).
zmatrix phi_zmatrix(int64_t rows, int64_t cols, double phi, uint64_t seed);

// The stored matrix whose op(.) under `trans` ('N', 'T' or 'C') is `op` ('C': the conjugate
// transpose is stored), with `extra_ld` padding rows poisoned with NaN + NaN i.
zmatrix store_for_zop(const zmatrix& op, char trans, int64_t extra_ld);

// Anti-aligned complex op(A) (m x k) and op(B) (k x n): both parts carry the magnitudes of
// anti_aligned_inputs(phi, ...) (the large entries of op(B)'s columns meet the small ones of
// row 0 of op(A)), each entry's imaginary part scaled by its own random factor in [-1, 1).
void anti_aligned_zinputs(double phi, int64_t m, int64_t n, int64_t k, uint64_t seed, zmatrix* a,
                          zmatrix* b);

}  // namespace ozdgemm::test
