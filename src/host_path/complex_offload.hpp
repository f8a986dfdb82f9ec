// Host-memory ZGEMM (cblas_zgemm, zgemm_) served on the GPU: the complex call runs as the real
// problem T = A' B* of docs/complex.md through the host path of offload.hpp (pinned staging,
// column tiles, several workers and GPUs), and C = alpha T + beta C is written on the host by
// the kernels' own epilogue. So C is bit-identical to ozdgemm_zgemm on the same data.
#pragma once

#include "core/complex_embedding.hpp"
#include "host_path/offload.hpp"

namespace ozdgemm::detail {

// p: a valid column-major call (checked by the caller with BLAS's rules). All or nothing: when
// the result is not served, C is untouched and the caller runs the call on the CPU BLAS. The
// packing (16 m k + 32 k n + 16 m n bytes of host memory) is only done for calls the route
// emulates. Never throws.
host_offload_result try_host_zgemm_offload(const complex_problem& p, complex_value alpha,
                                           complex_value beta, const char* entry) noexcept;

}  // namespace ozdgemm::detail
