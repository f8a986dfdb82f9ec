// The C API under workspace limits and after failed calls (engine/handle_context.hpp):
// a call whose workspace exceeds the cap returns OZDGEMM_STATUS_ALLOC_FAILED and writes
// nothing; lifting the cap makes the same call succeed, bit for bit equal to the host
// reference; a call after a failed one, on another stream, is ordered after it and correct.
#include <cstring>
#include <random>
#include <vector>

#include "engine/emulate.hpp"
#include "engine/handle_context.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.hpp"

namespace {

// Sets the process-wide cap for the scope of a test, whatever way the test ends.
struct cap_scope {
  explicit cap_scope(size_t bytes) { ozdgemm::detail::set_workspace_cap(bytes); }
  ~cap_scope() { ozdgemm::detail::set_workspace_cap(0); }
  void set(size_t bytes) { ozdgemm::detail::set_workspace_cap(bytes); }
};

std::vector<double> uniform(size_t count, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(count);
  for (double& e : x) e = u(g);
  return x;
}

// The suite of this file: GpuTest (skips without a device, one cuBLAS handle per test).
class WorkspaceLimits : public GpuTest {};

// The calls below run the default options: the workspace they need is the certified count's.
static_assert(OZDGEMM_DEFAULT_MODULI == OZDGEMM_MODULI_CERTIFIED);  // and fast scaling

TEST_F(WorkspaceLimits, WorkspaceCapRefusesThenRecovers) {
  const int64_t n = 384;
  const auto ha = uniform(n * n, 1), hb = uniform(n * n, 2), hc = uniform(n * n, 3);
  device_buffer<double> a(ha), b(hb), c(hc);
  const double one = 1.0, half = 0.5;
  ozdgemm::options o;
  const size_t need = ozdgemm::detail::emulation_workspace_bytes(
      n, n, n, ozdgemm::detail::moduli_setting::certified(),
      ozdgemm::detail::scaling_mode::fast);
  cudaStream_t s1, s2;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, s1));

  cap_scope cap(need - 1);
  EXPECT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n,
                           &half, c.ptr, n, o),
            OZDGEMM_STATUS_ALLOC_FAILED);
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(c.to_host(), hc) << "a refused call wrote C";

  cap.set(need);  // exactly enough
  ASSERT_CUBLAS(cublasSetStream(handle_, s2));
  EXPECT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n,
                           &half, c.ptr, n, o),
            OZDGEMM_STATUS_SUCCESS);
  cap.set(0);
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<double> ref = hc;
  ASSERT_EQ(ozdgemm_dgemm_reference('N', 'N', n, n, n, 1.0, ha.data(), n, hb.data(), n, 0.5,
                                    ref.data(), n, ozdgemm_default_options()),
            OZDGEMM_STATUS_SUCCESS);
  const std::vector<double> got = c.to_host();
  EXPECT_EQ(std::memcmp(got.data(), ref.data(), got.size() * sizeof(double)), 0)
      << "the call after a refused one differs from the host reference";
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

TEST_F(WorkspaceLimits, WorkspaceNeverTakesMostOfTheFreeMemory) {
  // A problem whose workspace would fit in the free device memory but take ~95% of it is
  // refused up front (ALLOC_FAILED, C untouched) instead of exhausting the GPU.
  size_t free_bytes = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  ozdgemm::options o;
  auto bytes = [&](int64_t m) {
    return static_cast<double>(ozdgemm::detail::emulation_workspace_bytes(
        m, m, 16, ozdgemm::detail::moduli_setting::certified(),
        ozdgemm::detail::scaling_mode::fast));
  };
  // The workspace grows with m (mostly s m^2 4 bytes of INT32 products): bisect for ~95%.
  int64_t lo = 16, hi = int64_t{1} << 20;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (bytes(mid) < 0.95 * static_cast<double>(free_bytes) ? lo : hi) = mid;
  }
  const int64_t m = hi;
  const double share = bytes(m) / static_cast<double>(free_bytes);
  ASSERT_GT(share, 0.9);
  ASSERT_LT(share, 0.99);
  // A and B need only m x 16 doubles each; C is never touched, so one small buffer stands in
  // (ldc = m would be out of bounds if anything wrote it: the call must fail before).
  device_buffer<double> a(m * 16), b(m * 16), c(16);
  ASSERT_NE(a.ptr, nullptr);
  ASSERT_NE(b.ptr, nullptr);
  ASSERT_CUDA(cudaMemset(c.ptr, 0, 16 * sizeof(double)));
  const double one = 1.0, zero = 0.0;
  EXPECT_EQ(ozdgemm::dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_T, m, m, 16, &one, a.ptr, m, b.ptr, m,
                           &zero, c.ptr, m, o),
            OZDGEMM_STATUS_ALLOC_FAILED);
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (double x : c.to_host()) EXPECT_EQ(x, 0.0);
  ozdgemm_release_handle(handle_);
}

}  // namespace
