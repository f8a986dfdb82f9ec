// What the library keeps per caller cuBLAS handle (and device): a private cuBLAS handle for
// the INT8 GEMMs, so the caller's handle is never modified, and a grow-only workspace.
//
// Ordering: a call runs on the caller's current stream. If the previous call on this context
// used another stream, the new stream first waits for the event recorded at the end of that
// call, so the shared workspace is never used by two streams at once. No host sync.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <mutex>

namespace ozdgemm::detail {

class handle_context {
 public:
  explicit handle_context(int device);
  ~handle_context();
  handle_context(const handle_context&) = delete;
  handle_context& operator=(const handle_context&) = delete;

  // Held for the whole enqueue of one call.
  std::mutex& mutex() { return mutex_; }
  int device() const { return device_; }
  cublasHandle_t cublas() const { return cublas_; }

  // Orders `stream` after the previous call and binds the private handle to it.
  void begin(cudaStream_t stream);
  // A workspace of at least `bytes`, stream-ordered on the stream given to begin().
  void* workspace(size_t bytes);
  // Marks the end of this call's work on the stream.
  void end();

 private:
  std::mutex mutex_;
  int device_;
  cublasHandle_t cublas_ = nullptr;
  cudaEvent_t done_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t last_stream_ = nullptr;
  bool used_ = false;
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
};

// The context of (caller handle, current device), created on first use.
std::shared_ptr<handle_context> context_for(cublasHandle_t caller);

// Drops every context of `caller`; memory is freed once pending work on it completes.
void release_contexts(cublasHandle_t caller);

}  // namespace ozdgemm::detail
