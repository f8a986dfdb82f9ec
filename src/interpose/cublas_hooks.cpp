// Intercepted cuBLAS entry points. Each is a thin layer: it turns its arguments into one
// device request, lets serve_device() choose, and either runs the emulation or forwards the
// call, unchanged, to the real cuBLAS. Invalid arguments always reach the real cuBLAS, so the
// caller gets exactly the status cuBLAS gives. No exception leaves these functions.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <type_traits>

#include "api/dgemm_internal.hpp"
#include "api/status.hpp"
#include "api/zgemm_internal.hpp"
#include "common/cublas_api.hpp"
#include "core/gemm_problem.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/gpu_model.hpp"
#include "engine/moduli_history.hpp"
#include "dispatch/process_state.hpp"
#include "dispatch/settings.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/gpu_choice.hpp"
#include "engine/handle_context.hpp"
#include "interpose/real_symbol.hpp"
#include "ozdgemm/export.h"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {
namespace {

constexpr const char* kCublas = "libcublas.so.13";

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(resolve_next(name, kCublas));
}

// One intercepted call; T is double (DGEMM) or cuDoubleComplex (ZGEMM).
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
};

// The engine entry of each element type.
device_result run_device(const device_request<double>& r, const ozdgemm_options_t& o,
                         const moduli_gate* gate) {
  return dgemm_device(r.handle, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda, r.b, r.ldb,
                      r.beta, r.c, r.ldc, o, false, true, gate);
}
device_result run_device(const device_request<cuDoubleComplex>& r, const ozdgemm_options_t& o,
                         const moduli_gate* gate) {
  return zgemm_device(r.handle, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda, r.b, r.ldb, r.beta,
                      r.c, r.ldc, o, false, true, gate);
}
// Whether the engine learns the call's count and applies the gate (engine/run.cpp): not for a
// certified count chosen in graph conditionals (under capture), for real and complex calls alike.
bool chooses_on_host(const config& cfg, bool captured) {
  return !(cfg.moduli.is_certified() &&
           (captured || eager_choice() == eager_choice_kind::graphs));
}
const char* api_name(const device_request<double>&) { return "ozdgemm_dgemm"; }
const char* api_name(const device_request<cuDoubleComplex>&) { return "ozdgemm_zgemm"; }

// The real problem the model prices: ZGEMM runs as one real GEMM of m x 2n x 2k (the embedding
// of docs/complex.md), which is also what native ZGEMM's 8mnk flops amount to; the model counts
// the Karatsuba form where the call will run it (engine/complex_gemm.hpp, uses_karatsuba), and
// native ZGEMM at its own rate (kZgemmNativeWork).
struct model_shape {
  int64_t m, n, k;
  bool karatsuba;
  double native_work;
};
model_shape priced(const device_request<double>& r, scaling_mode) {
  return {r.m, r.n, r.k, false, 1.0};
}
model_shape priced(const device_request<cuDoubleComplex>& r, scaling_mode mode) {
  return {r.m, 2 * r.n, 2 * r.k, uses_karatsuba(complex_form::setting, mode, r.m, r.n, r.k),
          kZgemmNativeWork};
}

// Why emulation cannot serve this call at all, or nullptr.
template <class T>
const char* unsupported(const device_request<T>& r) {
  if (!cuda_usable_in_this_process()) return cuda_unusable_reason();  // touch no CUDA state
  if (r.handle == nullptr) return "null handle";
  if (r.m <= 0 || r.n <= 0 || r.k <= 0) return "empty or invalid sizes";
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  if (cublas_get_math_mode(r.handle, &math) != CUBLAS_STATUS_SUCCESS) return "unreadable handle";
  if ((math & CUBLAS_PEDANTIC_MATH) != 0) return "pedantic math requested on the handle";
  if ((math & CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH) != 0)
    return "cuBLAS FP64 emulation requested on the handle";
  return nullptr;
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) (void)cudaGetLastError();
  return device;
}

// Whether the handle's stream is being captured into a CUDA graph (unknown: yes, the cautious
// answer for what it decides: no calibration now).
bool capturing(cublasHandle_t handle) {
  cudaStream_t stream = nullptr;
  if (cublas_get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS) return true;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

// Runs the emulation or `native()` (a callable forwarding the original call), and logs the
// outcome once.
// native_work: the native routine's time relative to cublasZgemm's (cublasZgemm3m).
template <class T, class Native>
cublasStatus_t serve_device(const device_request<T>& r, Native&& native,
                            double native_work = 1.0) noexcept {
  // The library's own native fallback (api/dgemm_internal.hpp) also comes through here.
  if (inside_interception() || in_native_fallback()) return native();
  interception_scope scope;
  const auto t0 = std::chrono::steady_clock::now();
  call_record rec{r.entry, r.m, r.n, r.k, outcome::native, nullptr, 0, 0.0, 0.0, 0.0};
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  try {
    const char* blocked = unsupported(r);
    const config* cfg = blocked == nullptr ? &settings() : nullptr;
    route rt{false, blocked, {0.0, 0.0}};
    // Auto mode with a per-call choice: the shape's recent counts price the call, and the
    // count this call's choice returns joins them.
    bool learns = false;
    history_key key{};
    if (blocked == nullptr) {
      // The GPU of the call: whether the emulation runs on it, and its rates (measured on the
      // first call the model decides, unless the stream is being captured).
      // (The capture query only matters where the model is consulted: it defers calibration.)
      const model_shape sh = priced(r, cfg->scaling);
      const bool consults = consults_model(*cfg, sh.m, sh.n, sh.k);
      const bool captured = consults && capturing(r.handle);
      const gpu_model& gpu = model_of_device(
          current_device(), consults ? cfg->calibrate : calibrate_mode::off, captured);
      rec.gpu = gpu.label.c_str();
      const char* cannot = cfg->mode == run_mode::native ? nullptr : gpu.unusable;
      learns = consults && cfg->moduli.chooses_per_call();
      moduli_outlook outlook;
      if (learns) {
        key = key_of_call(r.m, r.n, r.k, !std::is_same_v<T, double>, cfg->scaling,
                          api_options(*cfg).accuracy);
        outlook = process_moduli_history().lookup(key);
        outlook.host_choice = chooses_on_host(*cfg, captured);
      }
      rt = decide_route(*cfg, call_site::device, cannot, sh.m, sh.n, sh.k, true, gpu.rates,
                        native_work * sh.native_work, sh.karatsuba,
                        learns ? &outlook : nullptr);
    }
    rec.reason = rt.reason;
    rec.predicted_native_ms = rt.predicted.native_ms;
    rec.predicted_emulated_ms = rt.predicted.emulated_ms;
    bool served = false;
    if (rt.emulate) {
      // What the engine did, kept apart from the status: guarded() returns early on a throw.
      int ran = 0;
      const char* not_emulated = nullptr;
      const ozdgemm_status_t est = guarded(api_name(r), [&] {
        const device_result d =
            run_device(r, api_options(*cfg), rt.gate.active() ? &rt.gate : nullptr);
        ran = d.s;
        not_emulated = d.not_emulated;  // the engine has recorded the count it learnt
        return d.status;
      });
      if (est == OZDGEMM_STATUS_SUCCESS && ran != 0) {
        served = true;
        rec.result = outcome::emulated;
        rec.num_moduli = ran;
      } else if (not_emulated != nullptr) {  // declined by the choice, or refused up front
        rec.reason = not_emulated;
      } else if (est == OZDGEMM_STATUS_INVALID_VALUE) {  // cuBLAS states the exact status
        rec.reason = "invalid arguments";
        rec.predicted_native_ms = rec.predicted_emulated_ms = 0.0;
      } else {
        logger().warn("{}: emulation failed ({}); running the native routine", r.entry,
                      ozdgemm_status_string(est));
        rec.result = outcome::fallback;
        rec.reason = ozdgemm_status_string(est);
      }
    }
    if (!served) st = native();
  } catch (...) {
    st = native();
    rec.result = outcome::fallback;
    rec.reason = "internal error";
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_call(rec);
  return st;
}

// The stream legacy handle-less calls run on: the legacy default stream unless the
// application called cublasSetKernelStream (hooked below, then forwarded).
std::atomic<cudaStream_t> legacy_stream{nullptr};

// The legacy handle-less API runs on a library-owned handle per device, bound to
// legacy_stream for each call.
cublasHandle_t legacy_handle() {
  static std::mutex mutex;
  static auto* handles = new std::map<int, cublasHandle_t>();  // leaked: used until exit
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  cublasHandle_t& h = (*handles)[device];
  if (h == nullptr && cublas_create(&h) != CUBLAS_STATUS_SUCCESS) h = nullptr;
  return h;
}

// A legacy TRANS character as the cublasOperation_t the engine takes (C is T for real data);
// false for an invalid one.
bool op_from_char(char c, cublasOperation_t* op) {
  op_kind k;
  if (!parse_op(c, op_spelling::blas_char, &k)) return false;
  *op = k == op_kind::n ? CUBLAS_OP_N : CUBLAS_OP_T;
  return true;
}

// cublasGemmEx is served for plain FP64 only: all types CUDA_R_64F (DGEMM) or all CUDA_C_64F
// (ZGEMM), compute type CUBLAS_COMPUTE_64F (not _PEDANTIC or _EMULATED_*), default algorithm.
enum class fp64_kind { none, real, complex };
fp64_kind gemm_ex_fp64_kind(cudaDataType at, cudaDataType bt, cudaDataType ct,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  if (compute != CUBLAS_COMPUTE_64F ||
      (algo != CUBLAS_GEMM_DEFAULT && algo != CUBLAS_GEMM_DEFAULT_TENSOR_OP) || at != bt ||
      at != ct)
    return fp64_kind::none;
  return at == CUDA_R_64F ? fp64_kind::real : at == CUDA_C_64F ? fp64_kind::complex : fp64_kind::none;
}

// cublasGemmEx's untyped arguments as the typed request of its data type.
template <class T, class Int>
device_request<T> typed_request(const char* entry, cublasHandle_t h, cublasOperation_t ta,
                                cublasOperation_t tb, Int m, Int n, Int k, const void* alpha,
                                const void* a, Int lda, const void* b, Int ldb, const void* beta,
                                void* c, Int ldc) {
  return {entry, h, ta, tb, m, n, k, static_cast<const T*>(alpha), static_cast<const T*>(a), lda,
          static_cast<const T*>(b), ldb, static_cast<const T*>(beta), static_cast<T*>(c), ldc};
}

// The typed cuBLAS GEMM routines (cublasDgemm_v2, cublasZgemm_v2, their _64 and 3m forms).
template <class T, class Int>
using gemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int, Int,
                                   Int, const T*, const T*, Int, const T*, Int, const T*, T*, Int);

// Native cublasZgemm3m against cublasZgemm (performance_model.hpp).
constexpr double kGaussNativeWork = kZgemm3mNativeWork / kZgemmNativeWork;

// One typed hook: the request, and the real routine called with the same arguments.
template <class T, class Int>
cublasStatus_t serve_gemm(const char* entry, gemm_fn<T, Int> next, cublasHandle_t h,
                          cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k,
                          const T* alpha, const T* a, Int lda, const T* b, Int ldb, const T* beta,
                          T* c, Int ldc, double native_work = 1.0) noexcept {
  return serve_device(
      device_request<T>{entry, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc},
      [&] {
        return next ? next(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
                    : CUBLAS_STATUS_NOT_SUPPORTED;
      },
      native_work);
}

// cublasGemmEx and cublasGemmEx_64: plain FP64 real or complex calls as the typed request,
// anything else forwarded unchanged.
template <class Int>
using gemm_ex_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, Int,
                                      Int, Int, const void*, const void*, cudaDataType, Int,
                                      const void*, cudaDataType, Int, const void*, void*,
                                      cudaDataType, Int, cublasComputeType_t, cublasGemmAlgo_t);

template <class Int>
cublasStatus_t serve_gemm_ex(const char* entry, gemm_ex_fn<Int> next, cublasHandle_t h,
                             cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k,
                             const void* alpha, const void* a, cudaDataType at, Int lda,
                             const void* b, cudaDataType bt, Int ldb, const void* beta, void* c,
                             cudaDataType ct, Int ldc, cublasComputeType_t compute,
                             cublasGemmAlgo_t algo) noexcept {
  auto native = [&] {
    return next ? next(h, ta, tb, m, n, k, alpha, a, at, lda, b, bt, ldb, beta, c, ct, ldc,
                       compute, algo)
                : CUBLAS_STATUS_NOT_SUPPORTED;
  };
  switch (gemm_ex_fp64_kind(at, bt, ct, compute, algo)) {
    case fp64_kind::real:
      return serve_device(
          typed_request<double>(entry, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
          native);
    case fp64_kind::complex:
      return serve_device(typed_request<cuDoubleComplex>(entry, h, ta, tb, m, n, k, alpha, a, lda,
                                                         b, ldb, beta, c, ldc),
                          native);
    case fp64_kind::none: break;
  }
  return native();
}

}  // namespace
}  // namespace ozdgemm::detail

using namespace ozdgemm::detail;

// The handle-less legacy routine (cublas.h) is declared here under another C++ name: the
// cublas_v2.h macros rename cublasDgemm to cublasDgemm_v2.
extern "C" OZDGEMM_API void ozdgemm_legacy_cublas_dgemm(char, char, int, int, int, double,
                                                       const double*, int, const double*, int,
                                                       double, double*, int) noexcept
    __asm__("cublasDgemm");

extern "C" {

OZDGEMM_API cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const double* alpha, const double* A, int lda,
                                          const double* B, int ldb, const double* beta,
                                          double* C, int ldc) noexcept {
  static const auto next = real<gemm_fn<double, int>>("cublasDgemm_v2");
  return serve_gemm("cublasDgemm_v2", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc);
}

OZDGEMM_API cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int64_t m, int64_t n,
                                             int64_t k, const double* alpha, const double* A,
                                             int64_t lda, const double* B, int64_t ldb,
                                             const double* beta, double* C, int64_t ldc) noexcept {
  static const auto next = real<gemm_fn<double, int64_t>>("cublasDgemm_v2_64");
  return serve_gemm("cublasDgemm_v2_64", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc);
}

// Complex: ops N, T and C (conjugate transpose). cublasZgemm3m is served by the same emulation;
// its native routine (Gauss's three real products) is what the model compares with.
OZDGEMM_API cublasStatus_t cublasZgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const cuDoubleComplex* alpha, const cuDoubleComplex* A,
                                          int lda, const cuDoubleComplex* B, int ldb,
                                          const cuDoubleComplex* beta, cuDoubleComplex* C,
                                          int ldc) noexcept {
  static const auto next = real<gemm_fn<cuDoubleComplex, int>>("cublasZgemm_v2");
  return serve_gemm("cublasZgemm_v2", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc);
}

OZDGEMM_API cublasStatus_t cublasZgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int64_t m, int64_t n,
                                             int64_t k, const cuDoubleComplex* alpha,
                                             const cuDoubleComplex* A, int64_t lda,
                                             const cuDoubleComplex* B, int64_t ldb,
                                             const cuDoubleComplex* beta, cuDoubleComplex* C,
                                             int64_t ldc) noexcept {
  static const auto next = real<gemm_fn<cuDoubleComplex, int64_t>>("cublasZgemm_v2_64");
  return serve_gemm("cublasZgemm_v2_64", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc);
}

OZDGEMM_API cublasStatus_t cublasZgemm3m(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const cuDoubleComplex* alpha, const cuDoubleComplex* A,
                                         int lda, const cuDoubleComplex* B, int ldb,
                                         const cuDoubleComplex* beta, cuDoubleComplex* C,
                                         int ldc) noexcept {
  static const auto next = real<gemm_fn<cuDoubleComplex, int>>("cublasZgemm3m");
  return serve_gemm("cublasZgemm3m", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc, kGaussNativeWork);
}

OZDGEMM_API cublasStatus_t cublasZgemm3m_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n,
                                            int64_t k, const cuDoubleComplex* alpha,
                                            const cuDoubleComplex* A, int64_t lda,
                                            const cuDoubleComplex* B, int64_t ldb,
                                            const cuDoubleComplex* beta, cuDoubleComplex* C,
                                            int64_t ldc) noexcept {
  static const auto next = real<gemm_fn<cuDoubleComplex, int64_t>>("cublasZgemm3m_64");
  return serve_gemm("cublasZgemm3m_64", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc, kGaussNativeWork);
}

OZDGEMM_API cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n, int k,
                                        const void* alpha, const void* A, cudaDataType Atype,
                                        int lda, const void* B, cudaDataType Btype, int ldb,
                                        const void* beta, void* C, cudaDataType Ctype, int ldc,
                                        cublasComputeType_t computeType,
                                        cublasGemmAlgo_t algo) noexcept {
  static const auto next = real<gemm_ex_fn<int>>("cublasGemmEx");
  return serve_gemm_ex("cublasGemmEx", next, handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                       B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

OZDGEMM_API cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const void* alpha, const void* A,
                                           cudaDataType Atype, int64_t lda, const void* B,
                                           cudaDataType Btype, int64_t ldb, const void* beta,
                                           void* C, cudaDataType Ctype, int64_t ldc,
                                           cublasComputeType_t computeType,
                                           cublasGemmAlgo_t algo) noexcept {
  static const auto next = real<gemm_ex_fn<int64_t>>("cublasGemmEx_64");
  return serve_gemm_ex("cublasGemmEx_64", next, handle, transa, transb, m, n, k, alpha, A, Atype,
                       lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

// Releases what the library cached for the handle, then destroys it.
OZDGEMM_API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) noexcept {
  using fn = cublasStatus_t (*)(cublasHandle_t);
  static const fn next = real<fn>("cublasDestroy_v2");
  // In a forked child the cached contexts belong to the parent's CUDA state: left alone.
  if (!inside_interception() && handle != nullptr && cuda_usable_in_this_process()) {
    // The private handles destroyed below go straight to libcublas (common/cublas_api.hpp);
    // the scope keeps anything cuBLAS itself calls back into from re-entering the library.
    interception_scope scope;
    try {
      release_contexts(handle);
    } catch (...) {
      logger().warn("cublasDestroy: releasing the cached workspace failed");
    }
  }
  return next ? next(handle) : CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // extern "C"

void ozdgemm_legacy_cublas_dgemm(char transa, char transb, int m, int n, int k, double alpha,
                                 const double* A, int lda, const double* B, int ldb, double beta,
                                 double* C, int ldc) noexcept {
  using fn = void (*)(char, char, int, int, int, double, const double*, int, const double*, int,
                      double, double*, int);
  static const fn next = real<fn>("cublasDgemm");
  auto native = [&] {
    if (next) next(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return CUBLAS_STATUS_SUCCESS;  // the legacy API reports errors through cublasGetError()
  };
  cublasOperation_t ta, tb;
  if (!op_from_char(transa, &ta) || !op_from_char(transb, &tb)) {
    native();
    return;
  }
  // No library handle in a forked child (CUDA is unusable there): serve_device forwards.
  cublasHandle_t h =
      inside_interception() || !cuda_usable_in_this_process() ? nullptr : legacy_handle();
  // The legacy API has one kernel stream per process; legacy calls are serialised so that
  // binding the shared handle to it and enqueueing are one step.
  static std::mutex legacy_mutex;
  std::lock_guard<std::mutex> lock(legacy_mutex);
  if (h != nullptr && cublas_set_stream(h, legacy_stream.load()) != CUBLAS_STATUS_SUCCESS)
    h = nullptr;
  serve_device(device_request<double>{"cublasDgemm", h, ta, tb, m, n, k, &alpha, A, lda, B, ldb,
                                      &beta, C, ldc},
               native);
}

// Legacy cublas.h: sets the stream of later handle-less calls. Forwarded unchanged; on success
// the stream is remembered for the emulated legacy cublasDgemm.
extern "C" OZDGEMM_API cublasStatus_t cublasSetKernelStream(cudaStream_t stream) noexcept {
  using fn = cublasStatus_t (*)(cudaStream_t);
  static const fn next = real<fn>("cublasSetKernelStream");
  const cublasStatus_t st = next != nullptr ? next(stream) : CUBLAS_STATUS_NOT_INITIALIZED;
  if (st == CUBLAS_STATUS_SUCCESS) legacy_stream.store(stream);
  return st;
}
