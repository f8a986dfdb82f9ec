// Complex GEMM on the host reference: the packs of core/complex_embedding.hpp into host
// buffers, reference_dgemm / reference_dgemm_auto on the embedded real problem with alpha 1 and
// beta 0, then the shared epilogue. Every step is the GPU's own arithmetic (src/core), so the
// output is bit-identical to ozdgemm_zgemm for the same inputs and options (NaN payloads aside)
// by construction. When the per-call choice runs no s, T is the plain FP64 stand-in of
// reference_fp64_gemm (the GPU runs native cublasZgemm instead: those bits differ).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/complex_embedding.hpp"
#include "core/moduli_choice.hpp"
#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

// A' and B* of p on the host, and T's storage; `real` is T = A' B* on them (m, n, k >= 1).
struct host_embedding {
  std::vector<double> a_pack, b_pack, t;
  gemm_problem real;
};
host_embedding embed_on_host(const complex_problem& p);

// C = beta C, or C = alpha T + beta C (T as embedded_problem lays it out), by the kernels'
// epilogue element by element (t null: alpha == 0). The host path's ZGEMM ends with it too.
void complex_epilogue_on_host(const complex_problem& p, const double* t, complex_value alpha,
                              complex_value beta);

// Bytes of scratch reference_zgemm allocates with s moduli (the packs, T and the real
// reference's scratch for (m, 2n, 2k)); false when that overflows.
bool reference_zgemm_scratch_bytes(int64_t m, int64_t n, int64_t k, int num_moduli, size_t* bytes);

// C = alpha op(A) op(B) + beta C with BLAS semantics (alpha == 0: A, B not read; beta == 0: C
// not read; k == 0: C = beta C). Returns the moduli count used: the fixed s, the chosen s, 0
// when the per-call choice fell back to FP64 (`choice`, optional, says why), and for trivial
// calls the fixed s or the smallest.
int reference_zgemm(const complex_problem& p, complex_value alpha, complex_value beta,
                    moduli_setting moduli, scaling_mode mode, const accuracy_target& target,
                    moduli_choice* choice = nullptr);

}  // namespace ozdgemm::detail
