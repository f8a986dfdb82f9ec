// The device entry point behind ozdgemm_dgemm / ozdgemm_dgemm_ex, which the cuBLAS hooks call
// too: the moduli count the call used, why it was not emulated, and whether the per-call
// choice's native fallback runs here or is left to the caller.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {

class moduli_gate;

// One triangle of a square C instead of all of it, for the Level-3 hooks (SYRK, HERK and their
// kin as one emulation: engine/emulate.hpp's device_gemm::part); real_diagonal (complex): the
// imaginary parts of C's diagonal set to zero (HERK). Such a call declines (not_emulated, C
// untouched) where the engine cannot compute a triangle alone: nothing to multiply (the caller's
// routine scales the triangle), a complex call outside the Karatsuba form.
struct c_triangle {
  c_part part = c_part::all;
  bool real_diagonal = false;
};
inline constexpr const char* kTriangleNothingToMultiply =
    "a triangle with nothing to multiply (k = 0 or alpha = 0): the native routine scales it";
inline constexpr const char* kTriangleNotKaratsuba =
    "a complex triangle needs the Karatsuba form (fast scaling, large enough)";

// What the device entry did with one call.
struct device_result {
  ozdgemm_status_t status = OZDGEMM_STATUS_SUCCESS;
  // The moduli count that ran: the fixed s or the chosen one (trivial calls: the smallest, as
  // the host reference reports); 0 when nothing was emulated.
  int s = 0;
  // Why the call was not emulated although its arguments were valid (static strings): the
  // workspace limits refused it up front (status OZDGEMM_STATUS_ALLOC_FAILED, nothing enqueued),
  // or a per-call choice ran no s (status OZDGEMM_STATUS_SUCCESS; engine/run.hpp's reasons).
  const char* not_emulated = nullptr;
  // What a per-call choice made on the host returned: the chosen s, whether it ran or the gate
  // declined it, or 0 when no s met the target; kNoHostChoice when no choice was made on the
  // host (a fixed count, a count chosen on the GPU, a choice turned away or waited out).
  int chosen = kNoHostChoice;
  static constexpr int kNoHostChoice = -1;
};

// ozdgemm_dgemm, with what the interposer needs beyond the public API. When a per-call choice
// runs no s: with run_native, cublasDgemm runs on the caller's handle (its stream and pointer
// mode; the handle is not modified) and the reason is logged at info; without run_native
// nothing runs, C is untouched and the caller (the interposer, which holds the real
// cublasDgemm) must run native DGEMM itself. A refused workspace is logged at warn only with
// run_native (the interposer logs its own decision line). Throws on failure (the C entry
// points map it to a status).
// choose_on_gpu: a certified count is chosen on the GPU (engine/gpu_choice.hpp): no host
// synchronisation, s = kChosenOnGpu in the result, and a call that no s serves runs native DGEMM
// inside the call (on the library's private handle) whatever run_native says. Without it the
// host chooses after one synchronisation and learns s (ozdgemm_dgemm_ex reports it).
// gate: asked for the count a choice on the host returned (engine/emulate.hpp); a declined count
// is handled as a choice that ran no s.
device_result dgemm_device(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                           const double* alpha, const double* A, int64_t lda, const double* B,
                           int64_t ldb, const double* beta, double* C, int64_t ldc,
                           ozdgemm_options_t options, bool run_native, bool choose_on_gpu,
                           const moduli_gate* gate = nullptr, c_triangle triangle = {});

// What dgemm_strided_batch_device did: matrices [0, done) are enqueued, with s moduli, in chunks
// of per_chunk; the rest (all of them when done is 0, `declined` saying why) are the caller's to
// serve matrix by matrix. declined is a static string.
struct strided_batch_result {
  int64_t done = 0;
  int s = 0;
  int64_t per_chunk = 0;
  const char* declined = nullptr;
};

// A strided batch of real GEMMs (cuBLAS's arguments; matrix i at A + i stride_a, likewise B, C)
// through the batched engine (engine/batched_emulate.hpp), chunk by chunk, when the engine can
// take it: a fixed count, nonnegative strides, C matrices apart, one matrix's
// products in one block of rows, alpha not a host zero, k > 0. A chunk holds as many matrices as
// fit OZDGEMM_MAX_WORKSPACE's cap (set_workspace_cap), else min(2 GiB, a quarter of the free
// device memory; 1 GiB under capture). Each C_i equals the single call's (ozdgemm_dgemm) bit for
// bit. Nothing is enqueued for a declined batch; a chunk that throws or is refused by the
// workspace limits ends the loop (logged), C of its matrices untouched. Never throws.
strided_batch_result dgemm_strided_batch_device(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const double* alpha, const double* A, int64_t lda, int64_t stride_a, const double* B,
    int64_t ldb, int64_t stride_b, const double* beta, double* C, int64_t ldc, int64_t stride_c,
    int64_t count, const ozdgemm_options_t& options) noexcept;

// Whether a strided batch's strides let the batched engine take it: none negative, and the C
// matrices (n columns of ldc elements) apart, since the engine runs its matrices concurrently
// where the per-matrix loop runs them in order. Pure.
bool engine_strides(int64_t n, int64_t ldc, int64_t stride_a, int64_t stride_b, int64_t stride_c,
                    int64_t count) noexcept;

// Why the batched engine would not take a strided batch of `count` real m x n x k matrices
// with these options, from its shape alone (a static string), or nullptr: a fixed count, the
// engine's scope (batch_engine_refusal), more than one matrix, and one matrix's INT32 products
// within half the L2 cache of the current device (products_fit_cache). What the model prices a
// batch by (interpose/device_gemm.cpp); dgemm_strided_batch_device checks the same first.
// complex: m x n x k complex matrices (their embedding's real batch, engine/batched_complex.hpp).
const char* batch_engine_shape_refusal(int64_t m, int64_t n, int64_t k, int64_t count,
                                       const ozdgemm_options_t& options, bool complex) noexcept;

// True on a thread while the library's own native fallback calls cublasDgemm: when the library
// is preloaded that call reaches its own cublasDgemm hook, which must forward it unchanged.
bool in_native_fallback() noexcept;

}  // namespace ozdgemm::detail
