// First-use calibration on a real GPU (dispatch/calibration.hpp, dispatch/gpu_model.hpp): the
// short measurement lands within 20% of what large problems reach on the same GPU, the GPU
// this build runs on is usable, and on an H200 the calibrated rates make the same decisions
// on the recorded sweep as the rates measured by the full benchmark.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "availability.cuh"
#include "dispatch/calibration.hpp"
#include "dispatch/gpu_model.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
#include "support/h200_sweep.hpp"

namespace {

using namespace ozdgemm::detail;

class Calibration : public GpuTest {
 protected:
  // Seconds of the fastest of 3 runs after a warm-up, on the default stream.
  template <class F>
  double best_of_three(F&& work) {
    cudaEvent_t a, b;
    EXPECT_EQ(cudaEventCreate(&a), cudaSuccess);
    EXPECT_EQ(cudaEventCreate(&b), cudaSuccess);
    double best = 1e30;
    for (int run = 0; run < 4; ++run) {
      EXPECT_EQ(cudaEventRecord(a, nullptr), cudaSuccess);
      work();
      EXPECT_EQ(cudaEventRecord(b, nullptr), cudaSuccess);
      EXPECT_EQ(cudaEventSynchronize(b), cudaSuccess);
      float ms = 0;
      EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
      if (run > 0) best = std::min(best, ms * 1e-3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return best;
  }
  gpu_identity identity() {
    int device = 0;
    EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
    return model_of_device(device, calibrate_mode::off).id;
  }
};

TEST_F(Calibration, ThisGpuIsUsableAndHasAPrior) {
  int device = 0;
  ASSERT_CUDA(cudaGetDevice(&device));
  EXPECT_EQ(kernel_image_status(), cudaSuccess);
  const gpu_model& m = model_of_device(device, calibrate_mode::off);
  EXPECT_EQ(m.unusable, nullptr) << m.label;
  EXPECT_FALSE(m.rates.source.empty()) << m.label << ": no prior";
  EXPECT_NE(m.label.find(m.id.name), std::string::npos);
}

// The measurement against large problems on this GPU: an 8192^3 DGEMM, an INT8 GEMM of
// 8192 x 8192 x 16384 through cublasGemmEx, a 256 MiB copy from pinned memory.
TEST_F(Calibration, MeasuresWithinTwentyPercentOfLargeProblems) {
  const gpu_rates prior = prior_for(identity());
  gpu_rates measured;
  std::string why;
  ASSERT_TRUE(measure_rates(prior, size_t{1} << 34, &measured, &why)) << why;
  std::printf("[ calibrate] FP64 %.3g, INT8 %.3g, preparation %.3g, CRT %.3g, host %.3g\n",
              measured.fp64, measured.int8, measured.prep_bw, measured.crt_bw, measured.host_link);

  constexpr int64_t n = 8192, k8 = 16384;
  device_buffer<double> a(std::vector<double>(n * n, 0.5)), b(std::vector<double>(n * n, 0.25));
  device_buffer<double> c(n * n);
  const double one = 1.0, zero = 0.0;
  const double t64 = best_of_three([&] {
    cublasDgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n, &zero, c.ptr,
                n);
  });
  const double fp64 = 2.0 * n * n * n / t64;

  int8_t* a8 = nullptr;
  int8_t* b8 = nullptr;
  int32_t* c32 = nullptr;
  ASSERT_CUDA(cudaMalloc(&a8, n * k8));
  ASSERT_CUDA(cudaMalloc(&b8, n * k8));
  ASSERT_CUDA(cudaMalloc(&c32, n * n * 4));
  ASSERT_CUDA(cudaMemset(a8, 0x3F, n * k8));
  ASSERT_CUDA(cudaMemset(b8, 0x3F, n * k8));
  const int32_t ione = 1, izero = 0;
  const double t8 = best_of_three([&] {
    cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, n, k8, &ione, a8, CUDA_R_8I, k8, b8,
                 CUDA_R_8I, k8, &izero, c32, CUDA_R_32I, n, CUBLAS_COMPUTE_32I,
                 CUBLAS_GEMM_DEFAULT);
  });
  const double int8 = 2.0 * n * n * k8 / t8;
  cudaFree(a8);
  cudaFree(b8);
  cudaFree(c32);

  constexpr size_t bytes = size_t{256} << 20;
  void* host = nullptr;
  void* dev = nullptr;
  ASSERT_CUDA(cudaMallocHost(&host, bytes));
  ASSERT_CUDA(cudaMalloc(&dev, bytes));
  const double tl =
      best_of_three([&] { cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice); });
  const double link = bytes / tl;
  cudaFreeHost(host);
  cudaFree(dev);

  std::printf("[ large    ] FP64 %.3g, INT8 %.3g, host %.3g\n", fp64, int8, link);
  EXPECT_NEAR(measured.fp64 / fp64, 1.0, 0.2);
  EXPECT_NEAR(measured.int8 / int8, 1.0, 0.2);
  EXPECT_NEAR(measured.host_link / link, 1.0, 0.2);
  // The bandwidths of the library's own passes are the model's; they must be positive and
  // below the memory's peak.
  const gpu_identity id = identity();
  if (id.mem_bw > 0) {
    EXPECT_LT(measured.prep_bw, id.mem_bw);
    EXPECT_LT(measured.crt_bw, id.mem_bw);
  }
  EXPECT_GT(measured.prep_bw, 0);
  EXPECT_GT(measured.crt_bw, 0);
}

// The model's rates from calibration make the decisions the recorded H200 sweep asks for.
TEST_F(Calibration, OnAnH200TheCalibratedModelAgreesWithTheSweep) {
  const gpu_identity id = identity();
  if (id.name.find("H200") == std::string::npos)
    GTEST_SKIP() << "the recorded sweep is an H200's; this GPU is " << id.name;
  int device = 0;
  ASSERT_CUDA(cudaGetDevice(&device));
  // The measurement goes to a cache folder of this test's own.
  char dir[] = "/tmp/ozdgemm_calibration_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("XDG_CACHE_HOME", dir, 1);
  const gpu_model& m = model_of_device(device, calibrate_mode::force);
  gpu_rates cached;
  int driver = 0;
  ASSERT_CUDA(cudaDriverGetVersion(&driver));
  const std::string version = std::to_string(OZDGEMM_VERSION_MAJOR) + "." +
                              std::to_string(OZDGEMM_VERSION_MINOR) + "." +
                              std::to_string(OZDGEMM_VERSION_PATCH);
  const calibration_key key{id.name, id.cc_major, id.cc_minor, driver, version};
  EXPECT_TRUE(load_cached_rates(std::string(dir) + "/ozdgemm", key, &cached))
      << "the measurement was cached";
  ASSERT_EQ(m.rates.source.rfind("calibrated", 0), 0u) << m.rates.source;
  EXPECT_GT(ozdgemm::test::expect_sweep_decisions(m.rates), 0);
}

}  // namespace
