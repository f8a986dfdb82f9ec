// The lazily loaded cuBLAS entry points (common/cublas_api.hpp). This test program links
// libcublas itself, as an application would: the loader must then use that same copy (handles
// made by the application are only valid there), and each wrapper must give exactly the status
// of the function it stands for. Runs with or without a GPU: without one, cublasCreate fails
// and the calls on a null handle report it.
#include "common/cublas_api.hpp"

#include <cublas_v2.h>
#include <gtest/gtest.h>

namespace ozdgemm::test {
namespace {

using namespace detail;

TEST(CublasApi, LoadsTheCopyAlreadyInTheProcess) {
  ASSERT_TRUE(cublas_available());
  // cublasGetStatusString returns pointers to static strings of the copy it belongs to: equal
  // pointers mean the loader resolved into the copy this program linked, not a second one.
  for (cublasStatus_t st : {CUBLAS_STATUS_SUCCESS, CUBLAS_STATUS_NOT_INITIALIZED,
                            CUBLAS_STATUS_INVALID_VALUE, CUBLAS_STATUS_EXECUTION_FAILED})
    EXPECT_EQ(cublas_status_string(st), cublasGetStatusString(st)) << static_cast<int>(st);
}

TEST(CublasApi, WrappersGiveTheStatusesOfTheRealFunctions) {
  cublasHandle_t mine = nullptr, theirs = nullptr;
  const cublasStatus_t created = cublas_create(&mine);
  EXPECT_EQ(created, cublasCreate(&theirs));
  if (created == CUBLAS_STATUS_SUCCESS) {  // a GPU: the handles work across the two paths
    cudaStream_t stream = reinterpret_cast<cudaStream_t>(1);
    EXPECT_EQ(cublas_get_stream(theirs, &stream), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(stream, nullptr);
    EXPECT_EQ(cublas_destroy(theirs), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasDestroy(mine), CUBLAS_STATUS_SUCCESS);
  }

  // A null handle: every entry point reports the same failure either way.
  cudaStream_t s1 = nullptr, s2 = nullptr;
  EXPECT_EQ(cublas_get_stream(nullptr, &s1), cublasGetStream(nullptr, &s2));
  EXPECT_EQ(cublas_set_stream(nullptr, nullptr), cublasSetStream(nullptr, nullptr));
  cublasPointerMode_t p1, p2;
  EXPECT_EQ(cublas_get_pointer_mode(nullptr, &p1), cublasGetPointerMode(nullptr, &p2));
  cublasMath_t m1, m2;
  EXPECT_EQ(cublas_get_math_mode(nullptr, &m1), cublasGetMathMode(nullptr, &m2));
  EXPECT_EQ(cublas_destroy(nullptr), cublasDestroy(nullptr));
  const int one = 1;
  EXPECT_EQ(cublas_gemm_strided_batched_ex(nullptr, CUBLAS_OP_T, CUBLAS_OP_N, 16, 16, 16, &one,
                                           nullptr, CUDA_R_8I, 16, 256LL, nullptr, CUDA_R_8I, 16,
                                           256LL, &one, nullptr, CUDA_R_32I, 16, 256LL, 2,
                                           CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
            cublasGemmStridedBatchedEx(nullptr, CUBLAS_OP_T, CUBLAS_OP_N, 16, 16, 16, &one,
                                       nullptr, CUDA_R_8I, 16, 256LL, nullptr, CUDA_R_8I, 16, 256LL,
                                       &one, nullptr, CUDA_R_32I, 16, 256LL, 2, CUBLAS_COMPUTE_32I,
                                       CUBLAS_GEMM_DEFAULT));
  const cuDoubleComplex z_one{1.0, 0.0};
  EXPECT_EQ(cublas_zgemm_64(nullptr, CUBLAS_OP_N, CUBLAS_OP_C, 2, 2, 2, &z_one, nullptr, 2,
                            nullptr, 2, &z_one, nullptr, 2),
            cublasZgemm_64(nullptr, CUBLAS_OP_N, CUBLAS_OP_C, 2, 2, 2, &z_one, nullptr, 2, nullptr,
                           2, &z_one, nullptr, 2));
  EXPECT_NE(cublas_get_stream(nullptr, &s1), CUBLAS_STATUS_SUCCESS);  // not vacuous
}

}  // namespace
}  // namespace ozdgemm::test
