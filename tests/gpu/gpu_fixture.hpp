// Shared setup of the GPU tests: skip with a stated reason when no device is present, one
// cuBLAS handle per test, and small device-buffer helpers.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/complex_gemm.hpp"
#include "engine/moduli_history.hpp"
#include "engine/speculation.hpp"

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call
#define ASSERT_CUBLAS(call) ASSERT_EQ((call), CUBLAS_STATUS_SUCCESS) << #call

inline bool gpu_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device: GPU test not run (it is not a pass)";
    forget_learnt_counts();
    ASSERT_CUBLAS(cublasCreate(&handle_));
  }
  // A certified eager call launches the largest of its shape's recent counts
  // (engine/speculation.hpp): each test starts as a fresh process would, so that its bits do not
  // depend on the data of the tests that ran before it in the same process.
  static void forget_learnt_counts() {
    cudaDeviceSynchronize();
    ozdgemm::detail::harvest_outcomes();
    ozdgemm::detail::process_moduli_history().clear();
  }
  // A test that sets the complex form and stops at a failed assertion leaves the next test the
  // process's own form.
  void TearDown() override {
    ozdgemm::detail::set_complex_form_setting(ozdgemm::detail::complex_form::setting);
    if (handle_ != nullptr) cublasDestroy(handle_);
  }
  cublasHandle_t handle_ = nullptr;
};

// The same double bit for bit; any two NaNs count as equal (payloads are not preserved).
inline bool same_bits(double x, double y) {
  if (std::isnan(x) && std::isnan(y)) return true;
  return std::memcmp(&x, &y, sizeof x) == 0;
}

template <class T>
struct device_buffer {
  T* ptr = nullptr;
  size_t count = 0;
  explicit device_buffer(size_t n) : count(n) {
    if (cudaMalloc(&ptr, (n ? n : 1) * sizeof(T)) != cudaSuccess) ptr = nullptr;
  }
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) {
    if (ptr != nullptr) cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~device_buffer() { cudaFree(ptr); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  std::vector<T> to_host() const {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};
