// Call semantics on the GPU: argument errors (status and C untouched), trivial sizes,
// reuse of one handle across streams, CUDA graph capture, a per-call choice behind a stream held
// back by the host, and accuracy against native
// cublasDgemm measured on the same inputs.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "engine/emulate.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.hpp"
#include "support/dd_reference.hpp"

namespace {

std::vector<double> random_matrix(int64_t rows, int64_t cols, double phi, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> nd;
  std::vector<double> x(rows * cols);
  for (double& e : x) e = (u(g) - 0.5) * std::exp(phi * nd(g));
  return x;
}

// The suite of this file: GpuTest (skips without a device, one cuBLAS handle per test).
class Semantics : public GpuTest {};

TEST_F(Semantics, InvalidArgumentsReturnCublasStatusAndLeaveCUntouched) {
  const int64_t n = 8;
  device_buffer<double> a(std::vector<double>(n * n, 1.0)), b(std::vector<double>(n * n, 1.0));
  device_buffer<double> c(std::vector<double>(n * n, 42.0));
  const double one = 1.0, zero = 0.0;
  ozdgemm::options o;
  struct bad {
    int64_t m, n, k, lda, ldb, ldc;
    cublasOperation_t ta;
    int s;
  } cases[] = {
      {-1, n, n, n, n, n, CUBLAS_OP_N, 14}, {n, -1, n, n, n, n, CUBLAS_OP_N, 14},
      {n, n, -1, n, n, n, CUBLAS_OP_N, 14}, {n, n, n, n - 1, n, n, CUBLAS_OP_N, 14},
      {n, n, n, n, n - 1, n, CUBLAS_OP_N, 14}, {n, n, n, n, n, n - 1, CUBLAS_OP_N, 14},
      {n, n, n, n, n, n, static_cast<cublasOperation_t>(42), 14},
      {n, n, n, n, n, n, CUBLAS_OP_N, 1}, {n, n, n, n, n, n, CUBLAS_OP_N, 21},
  };
  for (const bad& x : cases) {
    o.num_moduli = x.s;
    EXPECT_EQ(ozdgemm::dgemm(handle_, x.ta, CUBLAS_OP_N, x.m, x.n, x.k, &one, a.ptr, x.lda, b.ptr,
                             x.ldb, &zero, c.ptr, x.ldc, o),
              OZDGEMM_STATUS_INVALID_VALUE);
    // cuBLAS gives the same verdict for the same arguments (moduli count aside).
    if (x.s == 14)
      EXPECT_EQ(cublasDgemm(handle_, x.ta, CUBLAS_OP_N, static_cast<int>(x.m), static_cast<int>(x.n),
                            static_cast<int>(x.k), &one, a.ptr, static_cast<int>(x.lda), b.ptr,
                            static_cast<int>(x.ldb), &zero, c.ptr, static_cast<int>(x.ldc)),
                CUBLAS_STATUS_INVALID_VALUE);
  }
  o.num_moduli = 14;
  EXPECT_EQ(ozdgemm::dgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n,
                           &zero, c.ptr, n, o),
            OZDGEMM_STATUS_NOT_INITIALIZED);
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (double x : c.to_host()) ASSERT_EQ(x, 42.0);
}

TEST_F(Semantics, TrivialSizes) {
  device_buffer<double> c(std::vector<double>(12, 3.0));
  const double one = 1.0, half = 0.5;
  // m == 0: no-op.
  EXPECT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 0, 3, 4, &one, nullptr, 1, nullptr, 4,
                           &half, c.ptr, 1),
            OZDGEMM_STATUS_SUCCESS);
  // k == 0: C = beta C.
  EXPECT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 4, 3, 0, &one, nullptr, 4, nullptr, 1,
                           &half, c.ptr, 4),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (double x : c.to_host()) EXPECT_EQ(x, 1.5);
}

TEST_F(Semantics, OneHandleAcrossStreamsAndGraphCapture) {
  const int64_t m = 300, n = 200, k = 500;
  const auto ha = random_matrix(m, k, 1.0, 1), hb = random_matrix(k, n, 1.0, 2);
  device_buffer<double> a(ha), b(hb), c1(m * n), c2(m * n), c3(m * n);
  const double one = 1.0, zero = 0.0;
  cudaStream_t s1, s2;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  ozdgemm::options o;
  // A fixed s: the default chooses s per call, which runs native under capture (below).
  o.num_moduli = 14;
  ASSERT_CUBLAS(cublasSetStream(handle_, s1));
  ASSERT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a.ptr, m, b.ptr, k,
                           &zero, c1.ptr, m, o),
            OZDGEMM_STATUS_SUCCESS);
  // Same handle, another stream, no host sync in between: the workspace is shared, so the
  // library must order s2 after s1's use of it.
  ASSERT_CUBLAS(cublasSetStream(handle_, s2));
  ASSERT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a.ptr, m, b.ptr, k,
                           &zero, c2.ptr, m, o),
            OZDGEMM_STATUS_SUCCESS);
  // Capture a warm call into a graph on s2 and replay it.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal));
  const ozdgemm_status_t st = ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                             a.ptr, m, b.ptr, k, &zero, c3.ptr, m, o);
  ASSERT_CUDA(cudaStreamEndCapture(s2, &graph));
  ASSERT_EQ(st, OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, s2));
  ASSERT_CUDA(cudaStreamSynchronize(s2));
  ASSERT_CUDA(cudaStreamSynchronize(s1));
  const auto r1 = c1.to_host(), r2 = c2.to_host(), r3 = c3.to_host();
  EXPECT_EQ(r1, r2);
  EXPECT_EQ(r1, r3);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

__global__ void spin_until_released(volatile int* flag) {
  while (*flag == 0) {
  }
}

// A stream held back by a kernel that waits for the host (a flag set after the call returns):
// the default's per-call choice must not wait for the stream for ever. It gives up after
// kChoiceWaitSeconds, enqueues native cublasDgemm behind the kernel and returns; once the host
// releases the kernel, C holds native's bits. Under a default that synchronised the stream, this
// program would hang.
TEST_F(Semantics, ChoiceBehindAKernelWaitingForTheHostRunsNativeInsteadOfHanging) {
  const int64_t n = 256;
  const auto ha = random_matrix(n, n, 1.0, 11), hb = random_matrix(n, n, 1.0, 12);
  device_buffer<double> a(ha), b(hb), c(n * n), c_native(n * n);
  const double one = 1.0, zero = 0.0;
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, s));
  const ozdgemm_options_t o = ozdgemm_default_options();
  // Warm: every kernel either route needs is loaded now (with lazy loading, a first launch would
  // wait for the spinning kernel).
  int used = -1;
  ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n,
                             &zero, c.ptr, n, o, &used),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_GT(used, 0) << "the default emulates this call when the stream is free";
  ASSERT_CUBLAS(cublasDgemm_64(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n,
                               &zero, c_native.ptr, n));
  ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_CUDA(cudaMemset(c.ptr, 0, n * n * sizeof(double)));
  int* flag = nullptr;
  int* flag_dev = nullptr;
  ASSERT_CUDA(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  ASSERT_CUDA(cudaHostGetDevicePointer(&flag_dev, flag, 0));
  *reinterpret_cast<volatile int*>(flag) = 0;
  ASSERT_CUDA(cudaDeviceSynchronize());
  spin_until_released<<<1, 1, 0, s>>>(flag_dev);
  const auto t0 = std::chrono::steady_clock::now();
  const ozdgemm_status_t st = ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                                               a.ptr, n, b.ptr, n, &zero, c.ptr, n, o, &used);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *reinterpret_cast<volatile int*>(flag) = 1;
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(st, OZDGEMM_STATUS_SUCCESS);
  EXPECT_EQ(used, 0) << "the call should have run native";
  EXPECT_GE(waited, 0.9 * ozdgemm::detail::kChoiceWaitSeconds);
  EXPECT_LT(waited, ozdgemm::detail::kChoiceWaitSeconds + 2.0);
  EXPECT_EQ(c.to_host(), c_native.to_host()) << "C is not native cublasDgemm's result";
  cudaFreeHost(flag);
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(s);
}

// Measured, not assumed: errors of native cublasDgemm and ozdgemm against a double-double
// reference on sampled entries. At s = 20 the truncation error is ~2^-70 relative to
// (|A||B|)_ij, far below native's rounding, so ozdgemm must be at least as accurate.
TEST_F(Semantics, AccuracyAgainstNativeDgemm) {
  for (int64_t n : {1024, 2048})
    for (double phi : {0.5, 2.0}) {
      const auto ha = random_matrix(n, n, phi, 10 + n), hb = random_matrix(n, n, phi, 20 + n);
      device_buffer<double> a(ha), b(hb), c(n * n);
      const double one = 1.0, zero = 0.0;
      std::mt19937_64 g(7);
      std::vector<std::pair<int64_t, int64_t>> pos(256);
      for (auto& p : pos) p = {static_cast<int64_t>(g() % n), static_cast<int64_t>(g() % n)};
      std::vector<double> ref(pos.size()), absab(pos.size());
      for (size_t t = 0; t < pos.size(); ++t) {  // 1x1 products: row i of A times column j of B
        const double* arow = &ha[pos[t].first];
        const double* bcol = &hb[pos[t].second * n];
        ref[t] = 0.0;
        ozdgemm::test::dd_gemm('N', 'N', 1, 1, n, 1.0, arow, n, bcol, n, 0.0, &ref[t], 1);
        ozdgemm::test::abs_product('N', 'N', 1, 1, n, arow, n, bcol, n, &absab[t], 1);
      }
      auto errors = [&](double* rel, double* scaled) {
        const auto hc = c.to_host();
        *rel = *scaled = 0.0;
        for (size_t t = 0; t < pos.size(); ++t) {
          const double v = hc[pos[t].second * n + pos[t].first], d = std::fabs(v - ref[t]);
          if (ref[t] != 0.0) *rel = std::max(*rel, d / std::fabs(ref[t]));
          if (absab[t] != 0.0) *scaled = std::max(*scaled, d / absab[t]);
        }
      };
      ASSERT_CUBLAS(cublasDgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr,
                                n, &zero, c.ptr, n));
      ASSERT_CUDA(cudaDeviceSynchronize());
      double native_rel, native_scaled;
      errors(&native_rel, &native_scaled);
      std::printf("n=%lld phi=%.1f native        rel %.3e scaled %.3e\n",
                  static_cast<long long>(n), phi, native_rel, native_scaled);
      for (ozdgemm::scaling mode : {ozdgemm::scaling::fast, ozdgemm::scaling::accurate})
        for (int s : {14, 16, 18, 20}) {
          ozdgemm::options o;
          o.num_moduli = s;
          o.scaling = mode;
          ASSERT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n,
                                   b.ptr, n, &zero, c.ptr, n, o),
                    OZDGEMM_STATUS_SUCCESS);
          ASSERT_CUDA(cudaDeviceSynchronize());
          double rel, scaled;
          errors(&rel, &scaled);
          std::printf("n=%lld phi=%.1f ozdgemm %-4s s=%2d rel %.3e scaled %.3e\n",
                      static_cast<long long>(n), phi,
                      mode == ozdgemm::scaling::fast ? "fast" : "acc", s, rel, scaled);
          RecordProperty("n" + std::to_string(n) + "_phi" + std::to_string(phi) + "_s" +
                             std::to_string(s) + (mode == ozdgemm::scaling::fast ? "_fast" : "_acc"),
                         std::to_string(rel));
          if (s == 20) {
            EXPECT_LE(rel, native_rel) << "s=20 must match or beat native";
            EXPECT_LE(scaled, native_scaled) << "s=20 must match or beat native";
          }
        }
      ozdgemm_release_handle(handle_);
    }
}

}  // namespace
