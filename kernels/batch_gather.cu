#include "batch_gather.cuh"
#include "launch_common.cuh"

namespace ozdgemm::detail {
namespace {

constexpr int kThreads = 256;

// An element of either width. Copied as doubles: a complex matrix need only be 8-byte aligned
// for this copy, whatever cuBLAS itself asks of it.
template <int Bytes>
struct element {
  double part[Bytes / 8];
};

template <int Bytes>
__device__ __forceinline__ bool alpha_is_zero(const double* alpha_dev) {
  if (alpha_dev == nullptr) return false;
  return Bytes == 8 ? alpha_dev[0] == 0.0 : alpha_dev[0] == 0.0 && alpha_dev[1] == 0.0;
}

// Matrices over blockIdx.y (strided by gridDim.y), their elements over the x dimension, in the
// packed order (column-major, leading dimension rows): consecutive threads, consecutive rows.
template <int Bytes, bool Gather>
__global__ void batch_copy_kernel(const void* const* ptrs, int64_t ld, int64_t rows, int64_t cols,
                                  int64_t count, element<Bytes>* packed, const double* alpha_dev) {
  // alpha = 0 (device pointer mode): A and B are not read, as BLAS says (their pointers may be
  // null); their packed copies are zero, so the GEMM on them gives beta C.
  const bool zero = Gather && alpha_is_zero<Bytes>(alpha_dev);
  const int64_t per = rows * cols;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = blockIdx.y; i < count; i += gridDim.y) {
    auto* matrix = zero ? nullptr : static_cast<element<Bytes>*>(const_cast<void*>(ptrs[i]));
    element<Bytes>* p = packed + i * per;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < per;
         e += stride) {
      const int64_t r = e % rows, c = e / rows;
      if (zero)
        p[e] = element<Bytes>{};
      else if (Gather)
        p[e] = matrix[c * ld + r];
      else
        matrix[c * ld + r] = p[e];
    }
  }
}

template <int Bytes, bool Gather>
void launch(const batch_operand& x, int64_t count, const void* packed, const double* alpha_dev,
            cudaStream_t stream) {
  const int64_t per = x.rows * x.cols;
  if (per == 0 || count == 0) return;
  const dim3 grid(grid_dim(per, kThreads, 4096), grid_dim(count, 1, 65535));
  batch_copy_kernel<Bytes, Gather><<<grid, kThreads, 0, stream>>>(
      x.ptrs, x.ld, x.rows, x.cols, count,
      static_cast<element<Bytes>*>(const_cast<void*>(packed)), alpha_dev);
}

}  // namespace

void launch_batch_gather(const batch_operand& x, int64_t count, void* packed,
                         const double* alpha_dev, cudaStream_t stream) {
  if (x.elem_bytes == 16)
    launch<16, true>(x, count, packed, alpha_dev, stream);
  else
    launch<8, true>(x, count, packed, alpha_dev, stream);
}

void launch_batch_scatter(const batch_operand& x, int64_t count, const void* packed,
                          cudaStream_t stream) {
  if (x.elem_bytes == 16)
    launch<16, false>(x, count, packed, nullptr, stream);
  else
    launch<8, false>(x, count, packed, nullptr, stream);
}

cudaError_t load_batch_gather_kernels() {
  return load_kernels(batch_copy_kernel<8, true>, batch_copy_kernel<8, false>,
                      batch_copy_kernel<16, true>, batch_copy_kernel<16, false>);
}

}  // namespace ozdgemm::detail
