// Small CUDA/cuBLAS helpers for the benchmarks: RAII owners (every exit path frees what it
// made), statistics, and the CUDA-event timing loop that all methods share.
//
// Constructors throw (OZDGEMM_CUDA_TRY / OZDGEMM_CUBLAS_TRY, with file:line); destructors never
// throw.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace ozdgemm::bench {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
class device_array {
 public:
  device_array() = default;
  explicit device_array(size_t count) : count_(count) {
    if (count > 0) OZDGEMM_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  ~device_array() {
    if (ptr_ != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaFree(ptr_));
  }
  device_array(device_array&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  device_array& operator=(device_array&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  T* get() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

class cuda_stream {
 public:
  cuda_stream();
  ~cuda_stream();
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Events with timing enabled (default flags).
class event_pool {
 public:
  explicit event_pool(size_t count);
  ~event_pool();
  event_pool(const event_pool&) = delete;
  event_pool& operator=(const event_pool&) = delete;
  cudaEvent_t operator[](size_t i) const { return ev_.at(i); }
  size_t size() const { return ev_.size(); }

 private:
  std::vector<cudaEvent_t> ev_;
};

// A cuBLAS handle bound to `stream`. ozdgemm may have cached a private handle and workspace
// for it: those are released first, as ozdgemm.h asks.
class cublas_handle {
 public:
  explicit cublas_handle(cudaStream_t stream);
  ~cublas_handle();
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

float elapsed_ms(cudaEvent_t from, cudaEvent_t to);

double median(std::vector<double> v);

// After a failure we handled: drain the stream and clear the runtime's last-error slot, so a
// later cudaGetLastError() (the library checks launches with it) does not report our error.
void recover(cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Timing. `enqueue(copy)` enqueues one call on input set `copy` on `stream` and returns "" or
// an error message. Warm-up calls come first; the last one is timed alone to choose the rep
// count when it is adaptive (about target_ms of timed work, clamped to [min_reps, max_reps],
// so large shapes take few reps). The timed calls are then enqueued back to back, an event
// between each two, with one host synchronisation at the end: no extra syncs in the timed run.

struct timing_policy {
  int reps = 0;  // > 0: fixed; 0: adaptive
  int warmup = 2;
  double target_ms = 1000.0;
  int min_reps = 5;
  int max_reps = 50;
};

struct timing {
  double median_ms = kNaN, min_ms = kNaN;
  int reps = 0;
  std::string error;
};

// Timed calls for a probe of `probe_ms` per call.
inline int adaptive_reps(const timing_policy& tp, double probe_ms) {
  if (tp.reps > 0) return tp.reps;
  const int r = probe_ms > 0.0 ? static_cast<int>(std::ceil(tp.target_ms / probe_ms)) : tp.max_reps;
  return std::min(std::max(r, tp.min_reps), tp.max_reps);
}

template <class Enqueue>
timing time_calls(Enqueue&& enqueue, int ncopies, const timing_policy& tp, cudaStream_t stream,
                  const event_pool& ev) {
  timing t;
  int call = 0;
  const int warm = tp.reps > 0 ? tp.warmup : std::max(tp.warmup, 1);
  for (int w = 0; w < warm; ++w) {
    if (w == warm - 1) OZDGEMM_CUDA_TRY(cudaEventRecord(ev[0], stream));
    t.error = enqueue(call++ % ncopies);
    if (!t.error.empty()) {
      recover(stream);
      return t;
    }
  }
  int reps = tp.reps;
  if (warm > 0) {
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[1], stream));
    OZDGEMM_CUDA_TRY(cudaEventSynchronize(ev[1]));
    reps = adaptive_reps(tp, elapsed_ms(ev[0], ev[1]));
  }
  reps = std::max(1, std::min<int>(reps, static_cast<int>(ev.size()) - 1));

  OZDGEMM_CUDA_TRY(cudaEventRecord(ev[0], stream));
  for (int r = 0; r < reps; ++r) {
    t.error = enqueue(call++ % ncopies);
    if (!t.error.empty()) {
      recover(stream);
      return t;
    }
    OZDGEMM_CUDA_TRY(cudaEventRecord(ev[r + 1], stream));
  }
  OZDGEMM_CUDA_TRY(cudaEventSynchronize(ev[reps]));
  std::vector<double> ms(reps);
  for (int r = 0; r < reps; ++r) ms[r] = elapsed_ms(ev[r], ev[r + 1]);
  t.reps = reps;
  t.median_ms = median(ms);
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  return t;
}

}  // namespace ozdgemm::bench
