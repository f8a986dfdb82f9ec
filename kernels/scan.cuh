// The per-vector reduction shared by the scaling and certification kernels: one pass over an
// operand (rows of op(A) or columns of op(B)) that folds every entry of a vector into an
// accumulator and commits it with an integer atomic, so the result does not depend on the
// scheduling. Included only by kernel translation units.
#pragma once

#include <cstdint>

#include "core/element.hpp"
#include "core/gemm_problem.hpp"
#include "launch_common.cuh"
#include "scaling.cuh"

namespace ozdgemm::detail {

// Elements of one vector handled by one block: 2048, halved (down to 128) while the grid
// has fewer than kScanBlocks blocks, so that small operands still fill the GPU (n = 2048,
// A column-major: 64 blocks at 2048, 1024 at 128). The per-vector results are integer
// atomics (max, or, add), so the chunking changes no bit.
inline constexpr int kScanChunkMax = 2048, kScanChunkMin = 128;
inline constexpr int64_t kScanBlocks = 2048;  // 132 SMs x 8 resident blocks of 256 threads, twice

// Generic per-vector reduction. Op: acc_t, init(), add(acc&, double, int64 v), merge(acc&, acc),
// commit(int64 v, acc) (an integer atomic). k-contiguous: a warp per vector, lanes along l;
// vector-contiguous: lanes along v, the 8 warps split l and meet in shared memory. A batch
// (operand_vectors::batch): blockIdx.z is the operand, at x.ptr + z batch_stride, and Op sees its
// vector v as z nvec + v.
template <bool KContig, class Op>
__global__ void __launch_bounds__(256)
    scan_kernel(operand x, int64_t nvec, int64_t k, int chunk, const double* alpha_dev, Op op,
                int64_t batch_stride) {
  if (skip_inputs(alpha_dev)) return;
  x.ptr += blockIdx.z * batch_stride;
  const int64_t vbase = blockIdx.z * nvec;
  using acc_t = typename Op::acc_t;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t l0 = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t l1 = l0 + chunk < k ? l0 + chunk : k;
  if (KContig) {
    for (int64_t v = static_cast<int64_t>(blockIdx.y) * 8 + warp; v < nvec;
         v += static_cast<int64_t>(gridDim.y) * 8) {
      acc_t acc = op.init();
      for (int64_t l = l0 + lane; l < l1; l += 32) op.add(acc, x.at(v, l), vbase + v);
#pragma unroll
      for (int mask = 16; mask > 0; mask /= 2) op.merge(acc, shfl_xor_value(acc, mask));
      if (lane == 0) op.commit(vbase + v, acc);
    }
  } else {
    __shared__ acc_t part[8][32];
    for (int64_t vb = static_cast<int64_t>(blockIdx.y) * 32; vb < nvec;
         vb += static_cast<int64_t>(gridDim.y) * 32) {
      const int64_t v = vb + lane;
      acc_t acc = op.init();
      if (v < nvec)
        for (int64_t l = l0 + warp; l < l1; l += 8) op.add(acc, x.at(v, l), vbase + v);
      part[warp][lane] = acc;
      __syncthreads();
      if (warp == 0 && v < nvec) {
        for (int w = 1; w < 8; ++w) op.merge(acc, part[w][lane]);
        op.commit(vbase + v, acc);
      }
      __syncthreads();
    }
  }
}

// batch, batch_stride: operand_vectors' (batch <= 65535, a grid dimension).
template <class Op>
void launch_scan(const operand& x, int64_t nvec, int64_t k, const double* alpha_dev, const Op& op,
                 cudaStream_t stream, int64_t batch = 1, int64_t batch_stride = 0) {
  const unsigned gy = x.k_contiguous ? grid_dim(nvec, 8, 65535) : grid_dim(nvec, 32, 65535);
  int chunk = kScanChunkMax;
  while (chunk > kScanChunkMin && int64_t{grid_dim(k, chunk)} * gy * batch < kScanBlocks)
    chunk /= 2;
  const dim3 grid(grid_dim(k, chunk), gy, static_cast<unsigned>(batch));
  if (x.k_contiguous)
    scan_kernel<true><<<grid, 256, 0, stream>>>(x, nvec, k, chunk, alpha_dev, op, batch_stride);
  else
    scan_kernel<false><<<grid, 256, 0, stream>>>(x, nvec, k, chunk, alpha_dev, op, batch_stride);
}

// emax as launch_vector_scan stores it (+ kExponentBias; 0 for a zero vector), decoded.
__device__ __forceinline__ int decode_emax(int enc) {
  return enc == 0 ? kZeroExponent : enc - kExponentBias;
}

// Warp maximum of r >= 0, then one atomicMax per warp. Every lane of the warp must call it.
__device__ __forceinline__ void warp_max_commit(double r, unsigned long long* slot) {
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    const double o = __shfl_xor_sync(0xFFFFFFFFu, r, mask);
    r = o > r ? o : r;
  }
  if (threadIdx.x % 32 == 0 && r > 0.0)
    atomicMax(slot, static_cast<unsigned long long>(double_bits(r)));
}

}  // namespace ozdgemm::detail
