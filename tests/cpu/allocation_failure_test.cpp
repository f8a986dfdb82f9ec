// is_allocation_failure (common/error.hpp): the one place that tells "out of memory" from other
// failures, for the C API's exception firewall (logged at warn, OZDGEMM_STATUS_ALLOC_FAILED)
// and the host path's workers (a worker that cannot get memory is expected on a shared GPU).
// Every exception type the library throws, with an allocation code and with another.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "api/status.hpp"
#include "common/error.hpp"

namespace ozdgemm::test {
namespace {

using detail::is_allocation_failure;

TEST(AllocationFailure, ClassifiesEveryExceptionTheLibraryThrows) {
  EXPECT_TRUE(is_allocation_failure(cuda_error(cudaErrorMemoryAllocation, "oom")));
  EXPECT_FALSE(is_allocation_failure(cuda_error(cudaErrorLaunchFailure, "launch")));
  EXPECT_TRUE(is_allocation_failure(cublas_error(CUBLAS_STATUS_ALLOC_FAILED, "oom")));
  EXPECT_FALSE(is_allocation_failure(cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "exec")));
  EXPECT_TRUE(is_allocation_failure(std::bad_alloc()));
  EXPECT_FALSE(is_allocation_failure(std::invalid_argument("bad")));
  EXPECT_FALSE(is_allocation_failure(std::runtime_error("other")));
}

// The firewall maps what it catches to the status the classification implies.
TEST(AllocationFailure, GuardedMapsToTheMatchingStatus) {
  EXPECT_EQ(
      detail::guarded(
          "t", []() -> ozdgemm_status_t { throw cuda_error(cudaErrorMemoryAllocation, "oom"); }),
      OZDGEMM_STATUS_ALLOC_FAILED);
  EXPECT_EQ(
      detail::guarded(
          "t", []() -> ozdgemm_status_t { throw cuda_error(cudaErrorLaunchFailure, "launch"); }),
      OZDGEMM_STATUS_CUDA_ERROR);
  EXPECT_EQ(
      detail::guarded(
          "t", []() -> ozdgemm_status_t { throw cublas_error(CUBLAS_STATUS_ALLOC_FAILED, "oom"); }),
      OZDGEMM_STATUS_ALLOC_FAILED);
  EXPECT_EQ(detail::guarded("t",
                            []() -> ozdgemm_status_t {
                              throw cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "exec");
                            }),
            OZDGEMM_STATUS_CUBLAS_ERROR);
  EXPECT_EQ(detail::guarded("t", []() -> ozdgemm_status_t { throw std::bad_alloc(); }),
            OZDGEMM_STATUS_ALLOC_FAILED);
  EXPECT_EQ(detail::guarded("t", []() -> ozdgemm_status_t { return OZDGEMM_STATUS_SUCCESS; }),
            OZDGEMM_STATUS_SUCCESS);
}

}  // namespace
}  // namespace ozdgemm::test
