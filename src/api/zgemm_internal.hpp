// The device entry point behind ozdgemm_zgemm / ozdgemm_zgemm_ex, which the cuBLAS hooks call
// too, exactly as dgemm_device (dgemm_internal.hpp: device_result, in_native_fallback).
#pragma once

#include <cuComplex.h>
#include <cublas_v2.h>

#include <cstdint>

#include "api/dgemm_internal.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {

// ozdgemm_zgemm, with what the interposer needs beyond the public API. When a per-call choice
// runs no s: with run_native, cublasZgemm runs on the caller's handle (its stream and pointer
// mode; the handle is not modified), with in_native_fallback() set on this thread, and the
// reason is logged at info; without run_native nothing runs, C is untouched and the caller
// must run native ZGEMM itself. A refused workspace is logged at warn only with run_native.
// Throws on failure (the C entry points map it to a status).
// choose_on_gpu: as for dgemm_device; a call that no s serves then runs native DGEMM on the
// embedding (docs/complex.md, section 1) inside the call, and the epilogue, whatever run_native
// says.
device_result zgemm_device(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                           const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
                           const cuDoubleComplex* B, int64_t ldb, const cuDoubleComplex* beta,
                           cuDoubleComplex* C, int64_t ldc, ozdgemm_options_t options,
                           bool run_native, bool choose_on_gpu, const moduli_gate* gate = nullptr,
                           c_triangle triangle = {});

// dgemm_strided_batch_device (dgemm_internal.hpp) for complex matrices: through their
// embedding's real batch (engine/batched_complex.hpp); each C_i equals ozdgemm_zgemm's bit for
// bit.
strided_batch_result zgemm_strided_batch_device(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
    int64_t stride_a, const cuDoubleComplex* B, int64_t ldb, int64_t stride_b,
    const cuDoubleComplex* beta, cuDoubleComplex* C, int64_t ldc, int64_t stride_c, int64_t count,
    const ozdgemm_options_t& options) noexcept;

}  // namespace ozdgemm::detail
