// The host side of a pointer-array batch's packed chunks (src/engine/packed_batch.hpp): how
// many matrices a chunk holds, the buffer's size, and a buffer that cannot be had (no GPU here:
// cudaMallocAsync fails), which the chunk reports so that the caller runs it natively.
#include "engine/packed_batch.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>

namespace ozdgemm::detail {
namespace {

TEST(PackedBatch, AChunkHoldsWhatTheCapAllowsAndAtLeastOneMatrix) {
  EXPECT_EQ(packed_batch::per_chunk(100, 1000, 64), 10);
  EXPECT_EQ(packed_batch::per_chunk(100, 1099, 64), 10);
  EXPECT_EQ(packed_batch::per_chunk(100, 1000, 7), 7) << "the whole batch fits";
  EXPECT_EQ(packed_batch::per_chunk(5000, 1000, 64), 1) << "a matrix over the cap runs alone";
  EXPECT_EQ(packed_batch::per_chunk(100, 0, 64), 1);
  EXPECT_EQ(packed_batch::per_chunk(0, 0, 64), 64) << "k = 0 and empty operands: no bytes";
  EXPECT_EQ(packed_batch::per_chunk(100, 1000, 1), 1);
  EXPECT_EQ(packed_batch::per_chunk(1, SIZE_MAX, INT64_MAX), INT64_MAX);
}

TEST(PackedBatch, MatrixBytesCountEveryOperandOfOneMatrix) {
  const batch_operand a{nullptr, 40, 30, 20, 8}, b{nullptr, 25, 20, 10, 8}, c{nullptr, 30, 30, 10, 8};
  EXPECT_EQ(packed_batch::matrix_bytes(a, b, c), (30 * 20 + 20 * 10 + 30 * 10) * 8u)
      << "packed: the rows, not the leading dimension";
  const batch_operand z{nullptr, 7, 5, 3, 16};
  EXPECT_EQ(packed_batch::matrix_bytes(z, z, z), 3 * 5 * 3 * 16u);
}

TEST(PackedBatch, WithoutItsBufferAChunkIsNotOk) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
    GTEST_SKIP() << "a GPU is present: the allocation would succeed";
  (void)cudaGetLastError();
  const batch_operand x{nullptr, 8, 8, 8, 8};
  const packed_batch pk(x, x, x, 0, 4, nullptr);
  EXPECT_FALSE(pk.ok()) << "the caller then runs the chunk natively";
}

}  // namespace
}  // namespace ozdgemm::detail
