#include "common/cublas_api.hpp"

#include "common/lazy_library.hpp"

namespace ozdgemm::detail {
namespace {

constexpr const char* kLibrary = "libcublas.so.13";

// cublasGemmStridedBatchedEx has a C++ overload (64-bit sizes) in cublas_api.h, so its type is
// spelled out rather than taken with decltype.
using gemm_strided_batched_ex_fn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*,
    cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t);

struct entry_points {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasGetStream_v2) get_stream = nullptr;
  decltype(&cublasGetPointerMode_v2) get_pointer_mode = nullptr;
  decltype(&cublasSetPointerMode_v2) set_pointer_mode = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasGetMathMode) get_math_mode = nullptr;
  gemm_strided_batched_ex_fn gemm_strided_batched_ex = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  decltype(&cublasDgemm_v2_64) dgemm_64 = nullptr;
  decltype(&cublasZgemm_v2_64) zgemm_64 = nullptr;
};

constexpr lazy_library kCublas{kLibrary, spdlog::level::err, "GEMMs run natively"};

// Loads on the first call; null if cuBLAS cannot be had (logged once). A function-local static
// is initialised exactly once even when several threads arrive together (C++11 [stmt.dcl]).
const entry_points* table() noexcept {
  static const entry_points* const loaded = []() -> const entry_points* {
    void* library = kCublas.open();
    if (library == nullptr) return nullptr;
    static entry_points t;  // constant-initialised, so usable from atexit handlers too
    const bool ok =
        kCublas.resolve(library, "cublasCreate_v2", &t.create) &&
        kCublas.resolve(library, "cublasDestroy_v2", &t.destroy) &&
        kCublas.resolve(library, "cublasSetStream_v2", &t.set_stream) &&
        kCublas.resolve(library, "cublasGetStream_v2", &t.get_stream) &&
        kCublas.resolve(library, "cublasGetPointerMode_v2", &t.get_pointer_mode) &&
        kCublas.resolve(library, "cublasSetPointerMode_v2", &t.set_pointer_mode) &&
        kCublas.resolve(library, "cublasSetWorkspace_v2", &t.set_workspace) &&
        kCublas.resolve(library, "cublasGetMathMode", &t.get_math_mode) &&
        kCublas.resolve(library, "cublasGemmStridedBatchedEx", &t.gemm_strided_batched_ex) &&
        kCublas.resolve(library, "cublasGetStatusString", &t.status_string) &&
        kCublas.resolve(library, "cublasDgemm_v2_64", &t.dgemm_64) &&
        kCublas.resolve(library, "cublasZgemm_v2_64", &t.zgemm_64);
    return ok ? &t : nullptr;
  }();
  return loaded;
}

constexpr cublasStatus_t kUnavailable = CUBLAS_STATUS_NOT_INITIALIZED;

}  // namespace

bool cublas_available() noexcept { return table() != nullptr; }

cublasStatus_t cublas_create(cublasHandle_t* handle) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->create(handle) : kUnavailable;
}

cublasStatus_t cublas_destroy(cublasHandle_t handle) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->destroy(handle) : kUnavailable;
}

cublasStatus_t cublas_set_stream(cublasHandle_t handle, cudaStream_t stream) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->set_stream(handle, stream) : kUnavailable;
}

cublasStatus_t cublas_get_stream(cublasHandle_t handle, cudaStream_t* stream) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->get_stream(handle, stream) : kUnavailable;
}

cublasStatus_t cublas_get_pointer_mode(cublasHandle_t handle, cublasPointerMode_t* mode) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->get_pointer_mode(handle, mode) : kUnavailable;
}

cublasStatus_t cublas_set_pointer_mode(cublasHandle_t handle, cublasPointerMode_t mode) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->set_pointer_mode(handle, mode) : kUnavailable;
}

cublasStatus_t cublas_set_workspace(cublasHandle_t handle, void* workspace, size_t bytes) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->set_workspace(handle, workspace, bytes) : kUnavailable;
}

cublasStatus_t cublas_get_math_mode(cublasHandle_t handle, cublasMath_t* mode) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->get_math_mode(handle, mode) : kUnavailable;
}

cublasStatus_t cublas_gemm_strided_batched_ex(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void* alpha, const void* a, cudaDataType a_type, int lda, long long stride_a,
    const void* b, cudaDataType b_type, int ldb, long long stride_b, const void* beta, void* c,
    cudaDataType c_type, int ldc, long long stride_c, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->gemm_strided_batched_ex(handle, transa, transb, m, n, k, alpha, a,
                                                   a_type, lda, stride_a, b, b_type, ldb, stride_b,
                                                   beta, c, c_type, ldc, stride_c, batch, compute,
                                                   algo)
                      : kUnavailable;
}

cublasStatus_t cublas_dgemm_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const double* alpha, const double* a, int64_t lda, const double* b,
                               int64_t ldb, const double* beta, double* c, int64_t ldc) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->dgemm_64(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,
                                    c, ldc)
                      : kUnavailable;
}

cublasStatus_t cublas_zgemm_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const cuDoubleComplex* alpha, const cuDoubleComplex* a,
                               int64_t lda, const cuDoubleComplex* b, int64_t ldb,
                               const cuDoubleComplex* beta, cuDoubleComplex* c,
                               int64_t ldc) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->zgemm_64(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,
                                    c, ldc)
                      : kUnavailable;
}

const char* cublas_status_string(cublasStatus_t status) noexcept {
  const entry_points* t = table();
  return t != nullptr ? t->status_string(status) : "cuBLAS status (libcublas.so.13 not loaded)";
}

}  // namespace ozdgemm::detail
