// What the real and the complex entries (dgemm_api.cpp, zgemm_api.cpp) share: the options,
// cuBLAS's argument rules in cuBLAS's order, the caller's stream and pointer mode, and what a
// device entry returns once the engine has run, native fallback included. One place, so that
// ZGEMM refuses exactly what DGEMM refuses.
#pragma once

#include <cuComplex.h>
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>

#include "api/dgemm_internal.hpp"
#include "api/status.hpp"
#include "common/logging.hpp"
#include "core/complex_embedding.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli_choice.hpp"
#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"
#include "engine/run.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {

scaling_mode to_mode(ozdgemm_scaling_t s);

// The arguments once checked.
struct checked_args {
  moduli_setting moduli;
  accuracy_target target;  // set when moduli.chooses_per_call()
  op_kind oa = op_kind::n, ob = op_kind::n;
  bool conj_a = false, conj_b = false;  // op C (only complex calls care)
  // What a trivial call reports (any s gives the BLAS result): the fixed s, else the smallest,
  // as the host reference.
  int trivial_s = 0;
};

// The complex problem of checked arguments (interleaved cuDoubleComplex, ld in complex elements).
inline complex_problem complex_problem_of(const checked_args& args, int64_t m, int64_t n, int64_t k,
                                          const cuDoubleComplex* A, int64_t lda,
                                          const cuDoubleComplex* B, int64_t ldb, cuDoubleComplex* C,
                                          int64_t ldc) {
  static_assert(sizeof(cuDoubleComplex) == 2 * sizeof(double),
                "cuDoubleComplex is interleaved (re, im): core/complex_embedding.hpp reads it so");
  return complex_problem{
      m,
      n,
      k,
      complex_operand_a(args.oa, args.conj_a, reinterpret_cast<const double*>(A), lda),
      complex_operand_b(args.ob, args.conj_b, reinterpret_cast<const double*>(B), ldb),
      reinterpret_cast<double*>(C),
      ldc};
}

// A device entry's checks (cublasDgemm's and cublasZgemm's rules): a null handle is
// OZDGEMM_STATUS_NOT_INITIALIZED; invalid options, an unknown op, a bad size or leading
// dimension, a null alpha or beta are OZDGEMM_STATUS_INVALID_VALUE. Nothing is read or
// enqueued. OZDGEMM_STATUS_SUCCESS fills *out.
ozdgemm_status_t check_device_args(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                   int64_t lda, int64_t ldb, int64_t ldc, const void* alpha,
                                   const void* beta, const ozdgemm_options_t& options,
                                   checked_args* out);

// The host references' checks: BLAS TRANS characters, the shape, then the options (an invalid
// option is an invalid value even when there is nothing to compute).
ozdgemm_status_t check_reference_args(char transa, char transb, int64_t m, int64_t n, int64_t k,
                                      int64_t lda, int64_t ldb, int64_t ldc,
                                      const ozdgemm_options_t& options, checked_args* out);

// The matrices the call reads and writes must lie in the address space: (cols - 1) ld + rows
// elements of `element` bytes from the base pointer, with no overflow (core/checked_math.hpp).
// Arguments that fail this describe no memory a caller can own, so they are invalid values,
// refused before any index is formed. A and B are only checked when they are read (k > 0).
bool addressable(const checked_args& args, int64_t m, int64_t n, int64_t k, const void* A,
                 int64_t lda, const void* B, int64_t ldb, const void* C, int64_t ldc, bool reads_ab,
                 size_t element);

// The stream of the caller's handle; true when its pointer mode is device (alpha and beta are
// then device pointers, read only by kernels). Throws cublas_error.
bool caller_stream(cublasHandle_t handle, cudaStream_t* stream);

// A triangle call (c_triangle) set on the engine's call: its part and its row blocks
// (engine/layout.hpp's part_row_block). False when C is not square (an invalid call).
bool take_triangle(const c_triangle& triangle, int64_t m, int64_t n, device_gemm* call);

// A device entry's answer for a call whose workspace size cannot even be counted (an
// allocation failure: the interposer then runs the native routine).
device_result unsized_workspace(const char* entry, int64_t m, int64_t n, int64_t k);

// A host reference's answer for a call whose scratch memory cannot even be counted (logged at
// info): OZDGEMM_STATUS_ALLOC_FAILED, before anything is read.
ozdgemm_status_t unsized_scratch(const char* entry, int64_t m, int64_t n, int64_t k);

// Marks this thread as running the library's own native fallback (in_native_fallback()) for
// its lifetime.
class native_fallback_scope {
 public:
  native_fallback_scope();
  ~native_fallback_scope();
  native_fallback_scope(const native_fallback_scope&) = delete;
  native_fallback_scope& operator=(const native_fallback_scope&) = delete;
};

// A device entry's answer once the engine has run: a refused workspace is
// OZDGEMM_STATUS_ALLOC_FAILED (logged at warn with run_native only: the interposer logs its own
// decision line); a per-call choice that ran no s is logged at info and, with run_native, runs
// `native` (the caller's own call on its handle, routine `native_name`) inside a
// native_fallback_scope.
template <class Native>
device_result settle_run(const char* entry, const char* native_name, int64_t m, int64_t n,
                         int64_t k, const run_outcome& run, const accuracy_target& target,
                         bool run_native, Native&& native) {
  device_result r;
  r.s = run.s;
  if (run.choice.made) r.chosen = run.choice.s;
  if (run.refused != nullptr) {
    r.not_emulated = run.refused;
    if (run_native)
      logger().warn("{}: m={} n={} k={}: workspace refused ({})", entry, m, n, k, run.refused);
    r.status = OZDGEMM_STATUS_ALLOC_FAILED;
    return r;
  }
  if (run.s != 0) return r;
  r.not_emulated = run.declined;
  // A count the gate declined is auto mode's routine choice of the faster routine, not news.
  logger().log(run.choice.gated ? spdlog::level::debug : spdlog::level::info,
               "{}: auto moduli (target {}): native {} for this call: {}", entry,
               accuracy_target_name(target), native_name, run.choice.why);
  if (run_native) {
    const native_fallback_scope scope;
    native();
  }
  return r;
}

// The _ex entries: `device` (returning a device_result) behind the exception firewall, and
// *num_moduli_used (if not null) set to the s that ran, 0 on any error or exception.
template <class Device>
ozdgemm_status_t reporting_moduli(const char* entry, int* num_moduli_used, Device&& device) {
  if (num_moduli_used != nullptr) *num_moduli_used = 0;
  return guarded(entry, [&]() -> ozdgemm_status_t {
    const device_result r = device();
    if (num_moduli_used != nullptr) *num_moduli_used = r.status == OZDGEMM_STATUS_SUCCESS ? r.s : 0;
    return r.status;
  });
}

}  // namespace ozdgemm::detail
