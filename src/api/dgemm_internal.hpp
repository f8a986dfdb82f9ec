// The device entry point behind ozdgemm_dgemm / ozdgemm_dgemm_ex, with what the interposer
// needs beyond the public API: the moduli count the call used, and whether the automatic
// moduli count's native fallback runs here or is left to the caller.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {

// ozdgemm_dgemm. *s_used (may be null) receives options.num_moduli, or with
// OZDGEMM_MODULI_AUTO the chosen s, or 0 when no s meets the target (or the stream is being
// captured, where the choice cannot synchronise): then, with run_native, cublasDgemm runs on
// the caller's handle (its stream and pointer mode; the handle is not modified) and the reason
// is logged at info; without run_native nothing runs, C is untouched and the caller (the
// interposer, which holds the real cublasDgemm) must run native DGEMM itself.
ozdgemm_status_t dgemm_device(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                              const double* alpha, const double* A, int64_t lda, const double* B,
                              int64_t ldb, const double* beta, double* C, int64_t ldc,
                              ozdgemm_options_t options, bool run_native, int* s_used);

// True on a thread while the library's own native fallback calls cublasDgemm: when the library
// is preloaded that call reaches its own cublasDgemm hook, which must forward it unchanged.
bool in_native_fallback() noexcept;

}  // namespace ozdgemm::detail
