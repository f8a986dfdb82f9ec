// Error handling inside the library: one macro family that throws, with file:line, two
// exception types for the two libraries underneath, and a no-throw variant for cleanup.
// Exceptions never leave the library: every extern "C" entry point catches them
// (src/api/status.cpp maps them to status codes).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "common/cublas_api.hpp"

#include <stdexcept>
#include <string>

namespace ozdgemm {

struct cuda_error : std::runtime_error {
  cudaError_t code;
  cuda_error(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

struct cublas_error : std::runtime_error {
  cublasStatus_t code;
  cublas_error(cublasStatus_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

namespace detail {
std::string error_location(const char* file, int line, const char* expr, const char* detail);
void log_ignored_cuda_error(cudaError_t code, const char* file, int line, const char* expr);
}  // namespace detail

}  // namespace ozdgemm

#define OZDGEMM_CUDA_TRY(call)                                                                   \
  do {                                                                                           \
    const cudaError_t ozdgemm_err_ = (call);                                                     \
    if (ozdgemm_err_ != cudaSuccess)                                                             \
      throw ::ozdgemm::cuda_error(ozdgemm_err_,                                                  \
                                  ::ozdgemm::detail::error_location(                             \
                                      __FILE__, __LINE__, #call, cudaGetErrorString(ozdgemm_err_))); \
  } while (0)

// After a kernel launch: configuration errors surface here, not at the next sync.
#define OZDGEMM_CHECK_LAUNCH() OZDGEMM_CUDA_TRY(cudaGetLastError())

#define OZDGEMM_CUBLAS_TRY(call)                                                                \
  do {                                                                                          \
    const cublasStatus_t ozdgemm_st_ = (call);                                                  \
    if (ozdgemm_st_ != CUBLAS_STATUS_SUCCESS)                                                   \
      throw ::ozdgemm::cublas_error(                                                            \
          ozdgemm_st_, ::ozdgemm::detail::error_location(                                       \
                           __FILE__, __LINE__, #call,                                           \
                           ::ozdgemm::detail::cublas_status_string(ozdgemm_st_)));              \
  } while (0)

#define OZDGEMM_EXPECTS(cond, msg)                                                              \
  do {                                                                                          \
    if (!(cond))                                                                                \
      throw std::invalid_argument(                                                              \
          ::ozdgemm::detail::error_location(__FILE__, __LINE__, #cond, msg));                   \
  } while (0)

// For destructors and cleanup: never throws; a runtime that is already unloading at process
// exit (cudaErrorCudartUnloading) is expected and stays silent.
#define OZDGEMM_CUDA_TRY_NOTHROW(call)                                                          \
  do {                                                                                          \
    const cudaError_t ozdgemm_err_ = (call);                                                    \
    if (ozdgemm_err_ != cudaSuccess && ozdgemm_err_ != cudaErrorCudartUnloading)                \
      ::ozdgemm::detail::log_ignored_cuda_error(ozdgemm_err_, __FILE__, __LINE__, #call);       \
  } while (0)
