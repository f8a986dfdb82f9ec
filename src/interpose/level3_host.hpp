// Host-memory Level-3 calls (dsyrk_, ztrsm_, cblas_dsymm, ...) on the GPU: the blocking of
// level3/blocked.hpp, each off-diagonal GEMM offered to the GPU host path (try_host_offload,
// try_host_zgemm_offload, which decide and log it as a GEMM of the routine's entry), the
// diagonal blocks and every GEMM the host path declines on the CPU BLAS's routines of the call's
// name family (cpu_blas.hpp: scipy_dsyrk_64_'s diagonal blocks run scipy_dsyrk_64_, its declined
// GEMMs scipy_dgemm_64_), with that family's integer width.
#pragma once

#include "interpose/cpu_blas.hpp"
#include "level3/level3_call.hpp"

namespace ozdgemm::detail {

// For F any gemm_family and Call = rank_k_call, symm_call or triangular_call of double or
// std::complex<double>.
//
// `x` (valid, column-major) served: true when the call was split and is done. False when the
// top level does not split (too small, native mode, no GPU, the model, a routine missing from
// the CPU BLAS): nothing was written, one decision line says why, and the caller forwards the
// call unchanged to the CPU BLAS. Never throws.
template <gemm_family F, class Call>
bool serve_on_host(const Call& x, const char* entry) noexcept;

// `x` (valid, column-major) on the CPU BLAS's Fortran routine of family F; false (nothing done)
// when the CPU BLAS has none. For a CBLAS call whose CPU BLAS has no CBLAS.
template <gemm_family F, class Call>
bool run_on_cpu_blas(const Call& x) noexcept;

}  // namespace ozdgemm::detail
