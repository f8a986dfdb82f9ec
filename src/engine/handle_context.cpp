#include "engine/handle_context.hpp"

#include <map>
#include <vector>
#include <utility>

#include "common/error.hpp"
#include "common/logging.hpp"

namespace ozdgemm::detail {

handle_context::handle_context(int device) : device_(device) {
  OZDGEMM_CUBLAS_TRY(cublasCreate(&cublas_));
  const cudaError_t e = cudaEventCreateWithFlags(&done_, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    cublasDestroy(cublas_);
    OZDGEMM_CUDA_TRY(e);
  }
}

handle_context::~handle_context() {
  // The caller's current device is restored: releasing a context has no visible side effect.
  int current = device_;
  OZDGEMM_CUDA_TRY_NOTHROW(cudaGetDevice(&current));
  if (current != device_) OZDGEMM_CUDA_TRY_NOTHROW(cudaSetDevice(device_));
  // Free stream-ordered after the last call, so pending kernels never see freed memory.
  if (ws_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaFreeAsync(ws_, last_stream_));
  if (done_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaEventDestroy(done_));
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (current != device_) OZDGEMM_CUDA_TRY_NOTHROW(cudaSetDevice(current));
}

void handle_context::begin(cudaStream_t stream) {
  if (used_ && stream != last_stream_) OZDGEMM_CUDA_TRY(cudaStreamWaitEvent(stream, done_, 0));
  stream_ = stream;
  OZDGEMM_CUBLAS_TRY(cublasSetStream(cublas_, stream));
}

void* handle_context::workspace(size_t bytes) {
  if (bytes <= ws_bytes_) return ws_;
  // Grow by at least 1/4 so a slowly growing sequence of shapes reallocates rarely.
  const size_t want = bytes > ws_bytes_ + ws_bytes_ / 4 ? bytes : ws_bytes_ + ws_bytes_ / 4;
  if (ws_ != nullptr) {
    OZDGEMM_CUDA_TRY(cudaFreeAsync(ws_, stream_));
    ws_ = nullptr;
    ws_bytes_ = 0;
  }
  OZDGEMM_CUDA_TRY(cudaMallocAsync(&ws_, want, stream_));
  ws_bytes_ = want;
  logger().debug("workspace grown to {} MiB on device {}", want >> 20, device_);
  return ws_;
}

void handle_context::end() {
  OZDGEMM_CUDA_TRY(cudaEventRecord(done_, stream_));
  last_stream_ = stream_;
  used_ = true;
}

namespace {

std::mutex registry_mutex;
using registry_map = std::map<std::pair<cublasHandle_t, int>, std::shared_ptr<handle_context>>;

// Leaked on purpose: contexts must not be destroyed by static destructors after the CUDA
// runtime has started unloading.
registry_map& registry() {
  static auto* r = new registry_map();
  return *r;
}

}  // namespace

std::shared_ptr<handle_context> context_for(cublasHandle_t caller) {
  int device = 0;
  OZDGEMM_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto& slot = registry()[{caller, device}];
  if (!slot) slot = std::make_shared<handle_context>(device);
  return slot;
}

void release_contexts(cublasHandle_t caller) {
  // Destroyed after the registry lock is released: a context's destructor destroys its private
  // cuBLAS handle, which (when the library intercepts cublasDestroy) comes back here.
  std::vector<std::shared_ptr<handle_context>> released;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto& r = registry();
    for (auto it = r.begin(); it != r.end();) {
      if (it->first.first == caller) {
        released.push_back(std::move(it->second));
        it = r.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace ozdgemm::detail
