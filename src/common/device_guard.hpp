// Makes a GPU current for a scope, for code that works on a GPU other than the caller's.
#pragma once

#include <cuda_runtime.h>

#include "common/error.hpp"

namespace ozdgemm::detail {

// Makes `device` current and restores the caller's current device on every exit path.
class device_guard {
 public:
  explicit device_guard(int device) {
    OZDGEMM_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) OZDGEMM_CUDA_TRY(cudaSetDevice(device));
  }
  ~device_guard() { cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace ozdgemm::detail
