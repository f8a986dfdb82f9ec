// Launchers that move the matrices of a pointer-array batch (cublasDgemmBatched and its kin,
// whose arrays of matrix pointers live in device memory) to and from one packed buffer, so that
// the host can name every matrix without reading the arrays, i.e. without waiting for the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ozdgemm::detail {

// One operand of a pointer-array batch: matrix i is rows x cols (column-major, leading dimension
// ld) at ptrs[i]; in the packed buffer it is at packed + i rows cols with leading dimension rows.
// elem_bytes: 8 (double) or 16 (complex double).
struct batch_operand {
  const void* const* ptrs;
  int64_t ld, rows, cols;
  int elem_bytes;
};

// packed <- matrices [0, count) of x. alpha_dev (device pointer mode, else null): where *alpha
// is 0 (both parts for complex) nothing of x is read, as BLAS reads neither A nor B then, and
// packed is set to zero, so that a GEMM on it gives beta C.
void launch_batch_gather(const batch_operand& x, int64_t count, void* packed,
                         const double* alpha_dev, cudaStream_t stream);

// Matrices [0, count) of x <- packed (x.ptrs taken as the destinations).
void launch_batch_scatter(const batch_operand& x, int64_t count, const void* packed,
                          cudaStream_t stream);

// Loads both kernels now (launch_common.cuh, load_kernels).
cudaError_t load_batch_gather_kernels();

}  // namespace ozdgemm::detail
