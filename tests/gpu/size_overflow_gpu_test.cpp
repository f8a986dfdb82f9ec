// Valid sizes whose workspace cannot be allocated: ozdgemm_dgemm returns
// OZDGEMM_STATUS_ALLOC_FAILED (cuBLAS: CUBLAS_STATUS_ALLOC_FAILED) with C untouched and
// nothing read, and the handle keeps working: the next ordinary call succeeds and is correct.
// (Sizes whose workspace cannot even be counted are refused before the handle is used:
// tests/cpu/size_overflow_test.cpp.)
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"

namespace {

using SizeOverflowGpu = GpuTest;

TEST_F(SizeOverflowGpu, UnallocatableWorkspaceIsAnAllocationFailureAndTheHandleSurvives) {
  // m = n = k = 2^20: operands of 2^43 bytes (never read: the call fails before any kernel),
  // a workspace of about 100 TiB.
  const int64_t big = int64_t{1} << 20;
  const double sentinel = 12345.0;
  device_buffer<double> A(std::vector<double>(64 * 64, 1.0)), B(std::vector<double>(64 * 64, 2.0)),
      C(std::vector<double>(64 * 64, sentinel));
  ASSERT_NE(A.ptr, nullptr);
  const double alpha = 1.0, beta = 0.0;
  const ozdgemm_options_t o = ozdgemm_default_options();
  EXPECT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, big, big, big, &alpha, A.ptr, big,
                          B.ptr, big, &beta, C.ptr, big, o),
            OZDGEMM_STATUS_ALLOC_FAILED);
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (double c : C.to_host()) ASSERT_EQ(c, sentinel) << "C was written by a failed call";

  // The same handle, an ordinary call: A = 1, B = 2, k = 64 gives 128 everywhere (exact).
  ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &alpha, A.ptr, 64, B.ptr,
                          64, &beta, C.ptr, 64, o),
            OZDGEMM_STATUS_SUCCESS)
      << "a failed allocation must not poison the next call (stale cudaGetLastError?)";
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (double c : C.to_host()) ASSERT_EQ(c, 128.0);
  ozdgemm_release_handle(handle_);
}

}  // namespace
