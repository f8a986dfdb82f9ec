#include "bench_cuda.hpp"

#include <ozdgemm/ozdgemm.h>

#include <cstdio>

namespace ozdgemm::bench {

cuda_stream::cuda_stream() {
  OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}

cuda_stream::~cuda_stream() {
  OZDGEMM_CUDA_TRY_NOTHROW(cudaStreamSynchronize(s_));
  OZDGEMM_CUDA_TRY_NOTHROW(cudaStreamDestroy(s_));
}

event_pool::event_pool(size_t count) : ev_(count, nullptr) {
  for (auto& e : ev_) OZDGEMM_CUDA_TRY(cudaEventCreate(&e));
}

event_pool::~event_pool() {
  for (auto e : ev_)
    if (e != nullptr) OZDGEMM_CUDA_TRY_NOTHROW(cudaEventDestroy(e));
}

cublas_handle::cublas_handle(cudaStream_t stream) {
  OZDGEMM_CUBLAS_TRY(cublasCreate(&h_));
  const cublasStatus_t st = cublasSetStream(h_, stream);
  if (st != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(h_);
    h_ = nullptr;
    OZDGEMM_CUBLAS_TRY(st);
  }
}

cublas_handle::~cublas_handle() {
  if (h_ == nullptr) return;
  ozdgemm_release_handle(h_);
  const cublasStatus_t st = cublasDestroy(h_);
  if (st != CUBLAS_STATUS_SUCCESS)
    std::fprintf(stderr, "ozdgemm_bench: cublasDestroy: %s\n", cublasGetStatusString(st));
}

float elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0.0f;
  OZDGEMM_CUDA_TRY(cudaEventElapsedTime(&ms, from, to));
  return ms;
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

void recover(cudaStream_t stream) {
  (void)cudaStreamSynchronize(stream);
  (void)cudaGetLastError();
}

}  // namespace ozdgemm::bench
