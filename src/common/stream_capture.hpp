// Whether a stream is being captured into a CUDA graph, for the engine's decisions that depend
// on it (what may synchronise, allocate or be cached). Throws cuda_error when CUDA cannot say.
#pragma once

#include <cuda_runtime.h>

#include "common/error.hpp"

namespace ozdgemm::detail {

inline bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  OZDGEMM_CUDA_TRY(cudaStreamIsCapturing(stream, &capture));
  return capture != cudaStreamCaptureStatusNone;
}

}  // namespace ozdgemm::detail
