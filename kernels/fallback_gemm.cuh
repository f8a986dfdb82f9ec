// The native-accuracy fallback of a certified call whose count is chosen on the GPU without a
// host wait (engine/speculation.hpp): an FP64 GEMM that runs only when the device-side choice
// ran no emulation (*chosen == 0: the count launched was not certified for the data, or no count
// serves). It is always enqueued; otherwise every block returns at once (about one launch).
#pragma once

#include <cuda_runtime.h>

#include "core/gemm_problem.hpp"
#include "core/scalar.hpp"

namespace ozdgemm::detail {

// C = alpha op(A) op(B) + beta C in FP64 when *chosen == 0, BLAS semantics (alpha == 0: A and B
// are not read; beta == 0: C is not read). Each element is one sequential fused multiply-add
// chain over k, so its error is within native DGEMM's bound k u (|A||B|)_ij + u |C|; the bits
// are not cuBLAS's (whose summation order is its own).
// part (core/gemm_problem.hpp's c_part): only that triangle of C is written; half > 0 (a complex
// call's embedding, T of 2 half columns): column j and half + j are both column j of it.
void launch_fallback_dgemm(const gemm_problem& p, scalar_arg alpha, scalar_arg beta,
                           const int* chosen, cudaStream_t stream, int part = 0, int64_t half = 0);
// Loads the fallback's kernel on the current device (load_kernels, launch_common.cuh).
cudaError_t load_fallback_kernels();

}  // namespace ozdgemm::detail
