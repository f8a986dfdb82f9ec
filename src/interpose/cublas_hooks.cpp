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

#include "api/dgemm_internal.hpp"
#include "api/status.hpp"
#include "common/cublas_api.hpp"
#include "core/gemm_problem.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/gpu_model.hpp"
#include "dispatch/process_state.hpp"
#include "dispatch/settings.hpp"
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

struct device_request {
  const char* entry;
  cublasHandle_t handle;
  cublasOperation_t ta, tb;
  int64_t m, n, k;
  const double* alpha;
  const double* a;
  int64_t lda;
  const double* b;
  int64_t ldb;
  const double* beta;
  double* c;
  int64_t ldc;
};

// Why emulation cannot serve this call at all, or nullptr.
const char* unsupported(const device_request& r) {
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
template <class Native>
cublasStatus_t serve_device(const device_request& r, Native&& native) noexcept {
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
    if (blocked == nullptr) {
      // The GPU of the call: whether the emulation runs on it, and its rates (measured on the
      // first call the model decides, unless the stream is being captured).
      const gpu_model& gpu = model_of_device(
          current_device(),
          consults_model(*cfg, r.m, r.n, r.k) ? cfg->calibrate : calibrate_mode::off,
          capturing(r.handle));
      rec.gpu = gpu.label.c_str();
      const char* cannot = cfg->mode == run_mode::native ? nullptr : gpu.unusable;
      rt = decide_route(*cfg, call_site::device, cannot, r.m, r.n, r.k, true, gpu.rates);
    }
    rec.reason = rt.reason;
    rec.predicted_native_ms = rt.predicted.native_ms;
    rec.predicted_emulated_ms = rt.predicted.emulated_ms;
    bool served = false;
    if (rt.emulate) {
      // What the engine did, kept apart from the status: guarded() returns early on a throw.
      int ran = 0;
      const char* not_emulated = nullptr;
      const ozdgemm_status_t est = guarded("ozdgemm_dgemm", [&] {
        const device_result d =
            dgemm_device(r.handle, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda, r.b, r.ldb,
                         r.beta, r.c, r.ldc, api_options(*cfg), false);
        ran = d.s;
        not_emulated = d.not_emulated;
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

// cublasGemmEx serves FP64 only through the emulation: all types CUDA_R_64F, compute type
// CUBLAS_COMPUTE_64F (not _PEDANTIC or _EMULATED_*), default algorithm.
bool gemm_ex_is_plain_fp64(cudaDataType at, cudaDataType bt, cudaDataType ct,
                           cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  return at == CUDA_R_64F && bt == CUDA_R_64F && ct == CUDA_R_64F &&
         compute == CUBLAS_COMPUTE_64F &&
         (algo == CUBLAS_GEMM_DEFAULT || algo == CUBLAS_GEMM_DEFAULT_TENSOR_OP);
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
  using fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                int, const double*, const double*, int, const double*, int,
                                const double*, double*, int);
  static const fn next = real<fn>("cublasDgemm_v2");
  return serve_device({"cublasDgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                       beta, C, ldc},
                      [&] {
                        return next ? next(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                                           beta, C, ldc)
                                    : CUBLAS_STATUS_NOT_SUPPORTED;
                      });
}

OZDGEMM_API cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int64_t m, int64_t n,
                                             int64_t k, const double* alpha, const double* A,
                                             int64_t lda, const double* B, int64_t ldb,
                                             const double* beta, double* C, int64_t ldc) noexcept {
  using fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                int64_t, int64_t, const double*, const double*, int64_t,
                                const double*, int64_t, const double*, double*, int64_t);
  static const fn next = real<fn>("cublasDgemm_v2_64");
  return serve_device({"cublasDgemm_v2_64", handle, transa, transb, m, n, k, alpha, A, lda, B,
                       ldb, beta, C, ldc},
                      [&] {
                        return next ? next(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                                           beta, C, ldc)
                                    : CUBLAS_STATUS_NOT_SUPPORTED;
                      });
}

OZDGEMM_API cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n, int k,
                                        const void* alpha, const void* A, cudaDataType Atype,
                                        int lda, const void* B, cudaDataType Btype, int ldb,
                                        const void* beta, void* C, cudaDataType Ctype, int ldc,
                                        cublasComputeType_t computeType,
                                        cublasGemmAlgo_t algo) noexcept {
  using fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                int, const void*, const void*, cudaDataType, int, const void*,
                                cudaDataType, int, const void*, void*, cudaDataType, int,
                                cublasComputeType_t, cublasGemmAlgo_t);
  static const fn next = real<fn>("cublasGemmEx");
  auto native = [&] {
    return next ? next(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
                       C, Ctype, ldc, computeType, algo)
                : CUBLAS_STATUS_NOT_SUPPORTED;
  };
  if (!gemm_ex_is_plain_fp64(Atype, Btype, Ctype, computeType, algo)) return native();
  return serve_device({"cublasGemmEx", handle, transa, transb, m, n, k,
                       static_cast<const double*>(alpha), static_cast<const double*>(A), lda,
                       static_cast<const double*>(B), ldb, static_cast<const double*>(beta),
                       static_cast<double*>(C), ldc},
                      native);
}

OZDGEMM_API cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const void* alpha, const void* A,
                                           cudaDataType Atype, int64_t lda, const void* B,
                                           cudaDataType Btype, int64_t ldb, const void* beta,
                                           void* C, cudaDataType Ctype, int64_t ldc,
                                           cublasComputeType_t computeType,
                                           cublasGemmAlgo_t algo) noexcept {
  using fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                int64_t, int64_t, const void*, const void*, cudaDataType, int64_t,
                                const void*, cudaDataType, int64_t, const void*, void*,
                                cudaDataType, int64_t, cublasComputeType_t, cublasGemmAlgo_t);
  static const fn next = real<fn>("cublasGemmEx_64");
  auto native = [&] {
    return next ? next(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
                       C, Ctype, ldc, computeType, algo)
                : CUBLAS_STATUS_NOT_SUPPORTED;
  };
  if (!gemm_ex_is_plain_fp64(Atype, Btype, Ctype, computeType, algo)) return native();
  return serve_device({"cublasGemmEx_64", handle, transa, transb, m, n, k,
                       static_cast<const double*>(alpha), static_cast<const double*>(A), lda,
                       static_cast<const double*>(B), ldb, static_cast<const double*>(beta),
                       static_cast<double*>(C), ldc},
                      native);
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
  serve_device({"cublasDgemm", h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc}, native);
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
