// Error handling inside the library: one macro family that throws, with file:line, two
// exception types for the two libraries underneath, and a no-throw variant for cleanup.
// Exceptions never leave the library: every extern "C" entry point catches them
// (src/api/status.cpp maps them to status codes).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "common/cublas_api.hpp"

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
// "file:line: expr failed: detail", the file as the project names it (from its src/, kernels/ or
// include/ folder on), not where the library was built.
std::string error_location(const char* file, int line, const char* expr, const char* detail);
const char* project_path(const char* file);
void log_ignored_cuda_error(cudaError_t code, const char* file, int line, const char* expr);

// Running out of memory: an allocation failure of CUDA or cuBLAS, or of the host. On a GPU
// shared by several processes this is an expected outcome (logged at warn, served natively),
// not a fault; the C API's exception firewall and the host path's workers both ask here.
inline bool is_allocation_failure(const std::exception& e) noexcept {
  if (const auto* c = dynamic_cast<const cuda_error*>(&e))
    return c->code == cudaErrorMemoryAllocation;
  if (const auto* b = dynamic_cast<const cublas_error*>(&e))
    return b->code == CUBLAS_STATUS_ALLOC_FAILED;
  return dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
}
}  // namespace detail

}  // namespace ozdgemm

// A failure is also cleared from the runtime's last error (a sticky one stays), so that the next
// call's launch checks do not report it as theirs.
#define OZDGEMM_CUDA_TRY(call)                                                                   \
  do {                                                                                           \
    const cudaError_t ozdgemm_err_ = (call);                                                     \
    if (ozdgemm_err_ != cudaSuccess && (static_cast<void>(cudaGetLastError()), true))           \
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
// exit (cudaErrorCudartUnloading) is expected and stays silent. The error is cleared from the
// runtime's last error, so that the next call's launch checks do not report it as theirs.
#define OZDGEMM_CUDA_TRY_NOTHROW(call)                                                          \
  do {                                                                                          \
    const cudaError_t ozdgemm_err_ = (call);                                                    \
    if (ozdgemm_err_ != cudaSuccess) (void)cudaGetLastError();                                  \
    if (ozdgemm_err_ != cudaSuccess && ozdgemm_err_ != cudaErrorCudartUnloading)                \
      ::ozdgemm::detail::log_ignored_cuda_error(ozdgemm_err_, __FILE__, __LINE__, #call);       \
  } while (0)
