// Launchers of the complex GEMM's embedding (core/complex_embedding.hpp): the packs of op(A)
// into A' and of op(B) into B*, before the real pipeline, and the epilogue C = alpha T + beta C
// after it. With alpha == 0 in device pointer mode the packs write zeros and read neither A nor
// B, and the epilogue reads no T.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/complex_embedding.hpp"

namespace ozdgemm::detail {

// A batch of packs or epilogues (engine/batched_complex.cpp), one matrix per grid z index: matrix
// z reads its operand (the packs) or C (the epilogue) `in` complex elements after the first, and
// writes its pack (reads its T) `out` doubles after the first. count <= 65535. One matrix: the
// default.
struct complex_batch_strides {
  int64_t count = 1;
  int64_t in = 0;
  int64_t out = 0;
};

// A' (m x 2k', ld m) from op(A), zeros in the padding; alpha_dev: alpha in device pointer mode,
// else null.
void launch_pack_a(const complex_operand& a, int64_t m, int64_t k, const double* alpha_dev,
                   double* a_pack, cudaStream_t stream, complex_batch_strides batch = {});

// B* (2k' x 2n', ld 2k') from op(B), zeros in the padding.
void launch_pack_b(const complex_operand& b, int64_t n, int64_t k, const double* alpha_dev,
                   double* b_pack, cudaStream_t stream, complex_batch_strides batch = {});

// C = alpha (T_re + i T_im) + beta C for the m x n complex C of p, T m x 2n' with ld m (null
// when alpha is known to be 0: then C = beta C; then batch.out is not used).
// part (core/gemm_problem.hpp's c_part): only that triangle of C is read and written;
// real_diagonal (HERK and its kin): the imaginary parts of C's diagonal are set to zero.
void launch_complex_epilogue(const complex_problem& p, const double* t, complex_scalar_arg alpha,
                             complex_scalar_arg beta, cudaStream_t stream,
                             complex_batch_strides batch = {}, int part = 0,
                             bool real_diagonal = false);

}  // namespace ozdgemm::detail
