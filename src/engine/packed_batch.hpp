// One chunk of a pointer-array batch (cublasDgemmBatched and its kin) copied into a packed
// buffer and back (kernels/batch_gather.cuh): the host then names every matrix of the chunk
// without reading the device's arrays of pointers, so it never waits for the GPU, and each
// matrix can be served as an ordinary GEMM on the packed copies. The buffer is taken and given
// back in stream order (cudaMallocAsync / cudaFreeAsync), which also works under graph capture.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "batch_gather.cuh"

namespace ozdgemm::detail {

class packed_batch {
 public:
  // Matrices [first, first + count) of the operands a, b, c (their ptrs the whole batch's
  // arrays). When the memory cannot be had, ok() is false and nothing was enqueued.
  packed_batch(const batch_operand& a, const batch_operand& b, const batch_operand& c,
               int64_t first, int64_t count, cudaStream_t stream) noexcept;
  ~packed_batch();  // gives the buffer back on the stream, after everything enqueued on it
  packed_batch(const packed_batch&) = delete;
  packed_batch& operator=(const packed_batch&) = delete;

  bool ok() const { return base_ != nullptr; }
  // The packed copy of matrix i of the chunk (0 <= i < count), leading dimension rows.
  void* a(int64_t i) const { return at(0, i); }
  void* b(int64_t i) const { return at(1, i); }
  void* c(int64_t i) const { return at(2, i); }

  // A and B (zeros where *alpha_dev is 0; alpha_dev null in host pointer mode, where the
  // caller leaves them out itself when alpha is 0: read_ab) and C into the buffer.
  void gather(const double* alpha_dev, bool read_ab);
  // C from the buffer back to the matrices.
  void scatter();

  // Bytes one matrix of the three operands takes in the buffer.
  static size_t matrix_bytes(const batch_operand& a, const batch_operand& b,
                             const batch_operand& c);
  // Matrices per chunk: as many of matrix_bytes as `cap` bytes hold, at least one (a matrix
  // larger than the cap still runs, alone), at most count.
  static int64_t per_chunk(size_t matrix_bytes, size_t cap, int64_t count);

 private:
  void* at(int part, int64_t i) const;
  batch_operand part_[3];
  int64_t first_, count_;
  cudaStream_t stream_;
  char* base_ = nullptr;
  size_t offset_[3] = {0, 0, 0};
};

}  // namespace ozdgemm::detail
