// Intercepted cuBLAS GEMM entry points. Each is a thin layer: it turns its arguments into one
// device request, lets serve_device() (device_gemm.hpp) choose, and either runs the emulation or
// forwards the call, unchanged, to the real cuBLAS. Invalid arguments always reach the real cuBLAS, so the
// caller gets exactly the status cuBLAS gives. No exception leaves these functions.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <mutex>

#include "common/cublas_api.hpp"
#include "common/logging.hpp"
#include "core/gemm_problem.hpp"
#include "dispatch/performance_model.hpp"
#include "dispatch/process_state.hpp"
#include "engine/handle_context.hpp"
#include "interpose/cublas_next.hpp"
#include "interpose/device_gemm.hpp"
#include "interpose/real_symbol.hpp"
#include "ozdgemm/export.h"

namespace ozdgemm::detail {
namespace {

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
  auto native = [&] {
    return next ? next(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
                : CUBLAS_STATUS_NOT_SUPPORTED;
  };
  return serve_device(
      device_request<T>{entry, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc}, native,
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
  static const auto next = cublas_next<gemm_fn<double, int>>("cublasDgemm_v2");
  return serve_gemm("cublasDgemm_v2", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc);
}

OZDGEMM_API cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int64_t m, int64_t n,
                                             int64_t k, const double* alpha, const double* A,
                                             int64_t lda, const double* B, int64_t ldb,
                                             const double* beta, double* C, int64_t ldc) noexcept {
  static const auto next = cublas_next<gemm_fn<double, int64_t>>("cublasDgemm_v2_64");
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
  static const auto next = cublas_next<gemm_fn<cuDoubleComplex, int>>("cublasZgemm_v2");
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
  static const auto next = cublas_next<gemm_fn<cuDoubleComplex, int64_t>>("cublasZgemm_v2_64");
  return serve_gemm("cublasZgemm_v2_64", next, handle, transa, transb, m, n, k, alpha, A, lda, B,
                    ldb, beta, C, ldc);
}

OZDGEMM_API cublasStatus_t cublasZgemm3m(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const cuDoubleComplex* alpha, const cuDoubleComplex* A,
                                         int lda, const cuDoubleComplex* B, int ldb,
                                         const cuDoubleComplex* beta, cuDoubleComplex* C,
                                         int ldc) noexcept {
  static const auto next = cublas_next<gemm_fn<cuDoubleComplex, int>>("cublasZgemm3m");
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
  static const auto next = cublas_next<gemm_fn<cuDoubleComplex, int64_t>>("cublasZgemm3m_64");
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
  static const auto next = cublas_next<gemm_ex_fn<int>>("cublasGemmEx");
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
  static const auto next = cublas_next<gemm_ex_fn<int64_t>>("cublasGemmEx_64");
  return serve_gemm_ex("cublasGemmEx_64", next, handle, transa, transb, m, n, k, alpha, A, Atype,
                       lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

// Releases what the library cached for the handle, then destroys it.
OZDGEMM_API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) noexcept {
  using fn = cublasStatus_t (*)(cublasHandle_t);
  static const fn next = cublas_next<fn>("cublasDestroy_v2");
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
  static const fn next = cublas_next<fn>("cublasDgemm");
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
  static const fn next = cublas_next<fn>("cublasSetKernelStream");
  const cublasStatus_t st = next != nullptr ? next(stream) : CUBLAS_STATUS_NOT_INITIALIZED;
  if (st == CUBLAS_STATUS_SUCCESS) legacy_stream.store(stream);
  return st;
}
