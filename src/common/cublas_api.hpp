// The cuBLAS entry points the library itself calls, loaded on first use.
//
// libozdgemm.so does not link libcublas: cuBLASLt 13 (which libcublas needs) opens the CUDA
// driver and relocates ~500 MB of code from a load-time constructor, which every process that
// preloads the library would pay even if it never calls DGEMM. These wrappers dlopen
// libcublas.so.13 on the first call instead. An application that uses cuBLAS has it loaded
// already, and dlopen then returns that same copy, so the handles the application passes in
// are valid for the calls made here on them.
//
// They resolve to libcublas's own definitions, never to the cuBLAS symbols libozdgemm.so
// exports (cublasDestroy_v2 is one): the library's calls on its private handles bypass its own
// hooks.
//
// If libcublas.so.13 cannot be loaded, the reason is logged once (error level) and every wrapper
// returns CUBLAS_STATUS_NOT_INITIALIZED, which the callers turn into a native fallback.
#pragma once

#include <cublas_v2.h>

namespace ozdgemm::detail {

// True once libcublas.so.13 and every entry point below are resolved; the first call loads
// them (thread-safe, once per process). Never throws.
bool cublas_available() noexcept;

cublasStatus_t cublas_create(cublasHandle_t* handle) noexcept;
cublasStatus_t cublas_destroy(cublasHandle_t handle) noexcept;
cublasStatus_t cublas_set_stream(cublasHandle_t handle, cudaStream_t stream) noexcept;
cublasStatus_t cublas_get_stream(cublasHandle_t handle, cudaStream_t* stream) noexcept;
cublasStatus_t cublas_get_pointer_mode(cublasHandle_t handle, cublasPointerMode_t* mode) noexcept;
cublasStatus_t cublas_set_pointer_mode(cublasHandle_t handle, cublasPointerMode_t mode) noexcept;
cublasStatus_t cublas_set_workspace(cublasHandle_t handle, void* workspace, size_t bytes) noexcept;
cublasStatus_t cublas_get_math_mode(cublasHandle_t handle, cublasMath_t* mode) noexcept;
cublasStatus_t cublas_gemm_strided_batched_ex(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void* alpha, const void* a, cudaDataType a_type, int lda, long long stride_a,
    const void* b, cudaDataType b_type, int ldb, long long stride_b, const void* beta, void* c,
    cudaDataType c_type, int ldc, long long stride_c, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) noexcept;

// cublasGetStatusString, or a fixed text while cuBLAS is not loaded.
// libcublas's own cublasDgemm_v2_64 (never the library's exported hook of that name): the
// native fallback of the automatic moduli count.
cublasStatus_t cublas_dgemm_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const double* alpha, const double* a, int64_t lda, const double* b,
                               int64_t ldb, const double* beta, double* c, int64_t ldc) noexcept;
// libcublas's own cublasZgemm_v2_64: the native fallback of the complex entry's per-call choice.
cublasStatus_t cublas_zgemm_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const cuDoubleComplex* alpha, const cuDoubleComplex* a,
                               int64_t lda, const cuDoubleComplex* b, int64_t ldb,
                               const cuDoubleComplex* beta, cuDoubleComplex* c,
                               int64_t ldc) noexcept;
const char* cublas_status_string(cublasStatus_t status) noexcept;

}  // namespace ozdgemm::detail
