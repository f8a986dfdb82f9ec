// One intercepted FP64 GEMM on device memory, and the one place that serves it: the cuBLAS GEMM
// hooks, and the GEMM blocks of the Level-3 hooks (level3_cublas.cpp), come through here. It
// decides the route (decision.hpp), runs the emulation or the native routine it is given, and
// logs the outcome once under the request's entry name.
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <type_traits>

#include "api/dgemm_internal.hpp"
#include "dispatch/decision.hpp"

namespace ozdgemm::detail {

// T is double (DGEMM) or cuDoubleComplex (ZGEMM); alpha and beta as the handle's pointer mode
// says.
template <class T>
struct device_request {
  const char* entry;
  cublasHandle_t handle;
  cublasOperation_t ta, tb;
  int64_t m, n, k;
  const T* alpha;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  const T* beta;
  T* c;
  int64_t ldc;
  // One triangle of C (the Level-3 hooks' SYRK and HERK as one emulation, api/dgemm_internal.hpp).
  c_triangle triangle{};
};

// The native routine of one request: a callable held by reference (it must outlive the call).
class native_call {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, native_call>>>
  native_call(F& f) noexcept  // NOLINT(google-explicit-constructor): a parameter type
      : run_([](void* p) { return (*static_cast<F*>(p))(); }), f_(&f) {}
  cublasStatus_t operator()() const { return run_(f_); }

 private:
  cublasStatus_t (*run_)(void*);
  void* f_;
};

// Runs the emulation or `native`, and logs the outcome once. native_work: the native routine's
// time relative to the typed GEMM's (cublasZgemm3m). Never throws.
cublasStatus_t serve_device(const device_request<double>& r, native_call native,
                            double native_work = 1.0) noexcept;
cublasStatus_t serve_device(const device_request<cuDoubleComplex>& r, native_call native,
                            double native_work = 1.0) noexcept;

// The route serve_device would take for `r` now, with the model's times (what cannot serve it,
// native mode, the size floor, the model). Runs nothing, logs nothing, and does not count as a
// decision of the shape.
route device_gemm_route(const device_request<double>& r) noexcept;
route device_gemm_route(const device_request<cuDoubleComplex>& r) noexcept;

// The route of a batch of `count` matrices like `r` (decision.hpp's batch_route over
// device_gemm_route): engine_may says the batch's pointers and strides let the batched engine take
// it (api/dgemm_internal.hpp); a route with `engine` set must then run the engine or the native
// routine, any other emulated route one serve_device per matrix. Runs nothing, logs nothing.
route device_batch_route(const device_request<double>& r, int64_t count, bool engine_may) noexcept;
route device_batch_route(const device_request<cuDoubleComplex>& r, int64_t count,
                         bool engine_may) noexcept;

// Why serve_device would run `r` natively at its start, or nullptr when it would emulate it.
template <class T>
const char* device_gemm_declines(const device_request<T>& r) noexcept {
  const route rt = device_gemm_route(r);
  return rt.emulate ? nullptr : rt.reason != nullptr ? rt.reason : "native";
}

}  // namespace ozdgemm::detail
