#include "ozdgemm/ozdgemm.h"

extern "C" {

OZDGEMM_API const char* ozdgemm_status_string(ozdgemm_status_t status) {
  switch (status) {
    case OZDGEMM_STATUS_SUCCESS: return "success";
    case OZDGEMM_STATUS_NOT_INITIALIZED: return "not initialized (null handle)";
    case OZDGEMM_STATUS_INVALID_VALUE: return "invalid value";
    case OZDGEMM_STATUS_ALLOC_FAILED: return "allocation failed";
    case OZDGEMM_STATUS_CUDA_ERROR: return "CUDA error";
    case OZDGEMM_STATUS_CUBLAS_ERROR: return "cuBLAS error";
    case OZDGEMM_STATUS_INTERNAL_ERROR: return "internal error";
  }
  return "unknown status";
}

OZDGEMM_API cublasStatus_t ozdgemm_status_to_cublas(ozdgemm_status_t status) {
  switch (status) {
    case OZDGEMM_STATUS_SUCCESS: return CUBLAS_STATUS_SUCCESS;
    case OZDGEMM_STATUS_NOT_INITIALIZED: return CUBLAS_STATUS_NOT_INITIALIZED;
    case OZDGEMM_STATUS_INVALID_VALUE: return CUBLAS_STATUS_INVALID_VALUE;
    case OZDGEMM_STATUS_ALLOC_FAILED: return CUBLAS_STATUS_ALLOC_FAILED;
    case OZDGEMM_STATUS_CUDA_ERROR: return CUBLAS_STATUS_EXECUTION_FAILED;
    case OZDGEMM_STATUS_CUBLAS_ERROR: return CUBLAS_STATUS_EXECUTION_FAILED;
    case OZDGEMM_STATUS_INTERNAL_ERROR: return CUBLAS_STATUS_INTERNAL_ERROR;
  }
  return CUBLAS_STATUS_INTERNAL_ERROR;
}

}  // extern "C"
