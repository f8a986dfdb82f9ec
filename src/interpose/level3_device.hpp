// Device-memory Level-3 calls (cublasDsyrk_v2, cublasZtrsm_v2_64, ...) through the one engine:
// the blocking of level3/blocked.hpp on the caller's handle and stream, each off-diagonal GEMM
// served as a GEMM of the routine's entry (device_gemm.hpp: the route, the certified count, the
// decision line), the diagonal blocks and every GEMM the route declines on libcublas's own
// routines, except TRSM's diagonal blocks, which the library solves in FP64 (level3_device.cpp,
// diagonal_solver). Nothing waits for the GPU beyond what those GEMMs do.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "level3/level3_call.hpp"

namespace ozdgemm::detail {

// For Call = rank_k_call, symm_call or triangular_call of double or std::complex<double>.
//
// `x` (valid, column-major, device pointers) served on `handle`, which is in host pointer mode:
// true when the call was split and *status is its outcome. False when the top level does not
// split (too small, native mode, the handle's state, the model): nothing was enqueued, one
// decision line says why, and the caller forwards the call unchanged to cuBLAS. Never throws.
template <class Call>
bool serve_on_device(const Call& x, cublasHandle_t handle, const char* entry,
                     cublasStatus_t* status) noexcept;

// cuBLAS's out-of-place TRMM, C = alpha op(A) B: `x` is the in-place TRMM on C (x.b, x.ldb),
// b and ldb the caller's B. Once the call splits, B is copied into C on the handle's stream
// (no copy when b is x.b). As serve_on_device otherwise.
template <class T>
bool serve_trmm_on_device(const triangular_call<T>& x, const T* b, int64_t ldb,
                          cublasHandle_t handle, const char* entry,
                          cublasStatus_t* status) noexcept;

}  // namespace ozdgemm::detail
