// The tiled writer shared by the residue and bound-quantisation kernels: it reads a 32x32
// tile of an operand once (coalesced whichever way the operand is laid out), turns each
// element into per-plane INT8 values, and writes every plane k-contiguous through shared
// memory, zero-filling the padding. Included only by kernel translation units.
#pragma once

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "launch_common.cuh"

namespace ozdgemm::detail {

inline constexpr int kTile = 32;

// Gen: typename state; state prepare(double x, int64_t v) const; int8_t plane(const state&, int t) const.
template <bool KContig, class Gen>
__global__ void __launch_bounds__(256) plane_tile_kernel(operand x, int64_t nvec, int64_t nvec_pad,
                                                         int64_t k, int64_t k_pad,
                                                         const double* alpha_dev, Gen gen,
                                                         int nplanes, int8_t* out) {
  __shared__ int8_t tile[kTile][kTile + 4];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  const int64_t l0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const bool skip = skip_inputs(alpha_dev);
  const int64_t plane_size = nvec_pad * k_pad;
  // Write mapping: 8 threads per vector, 4 bytes each.
  const int tid = ty * 32 + tx;
  const int wv = tid / 8, wl = (tid % 8) * 4;

  for (int64_t v0 = static_cast<int64_t>(blockIdx.y) * kTile; v0 < nvec_pad;
       v0 += static_cast<int64_t>(gridDim.y) * kTile) {
    typename Gen::state st[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t v = KContig ? v0 + ty + 8 * i : v0 + tx;
      const int64_t l = KContig ? l0 + tx : l0 + ty + 8 * i;
      const bool in = !skip && v < nvec && l < k;
      st[i] = gen.prepare(in ? x.at(v, l) : 0.0, v < nvec ? v : 0);
    }
    const int64_t ov = v0 + wv, ol = l0 + wl;
    for (int t = 0; t < nplanes; ++t) {
      __syncthreads();
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int vv = KContig ? ty + 8 * i : tx;
        const int ll = KContig ? tx : ty + 8 * i;
        tile[vv][ll] = gen.plane(st[i], t);
      }
      __syncthreads();
      if (ov < nvec_pad && ol < k_pad) {
        const uint32_t word = static_cast<uint8_t>(tile[wv][wl]) |
                              (static_cast<uint32_t>(static_cast<uint8_t>(tile[wv][wl + 1])) << 8) |
                              (static_cast<uint32_t>(static_cast<uint8_t>(tile[wv][wl + 2])) << 16) |
                              (static_cast<uint32_t>(static_cast<uint8_t>(tile[wv][wl + 3])) << 24);
        *reinterpret_cast<uint32_t*>(out + t * plane_size + ov * k_pad + ol) = word;
      }
    }
    __syncthreads();
  }
}

template <class Gen>
void launch_plane_tiles(const operand& x, int64_t nvec, int64_t nvec_pad, int64_t k, int64_t k_pad,
                        const double* alpha_dev, const Gen& gen, int nplanes, int8_t* out,
                        cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid(grid_dim(k_pad, kTile), grid_dim(nvec_pad, kTile, 65535));
  if (x.k_contiguous)
    plane_tile_kernel<true><<<grid, block, 0, stream>>>(x, nvec, nvec_pad, k, k_pad, alpha_dev,
                                                        gen, nplanes, out);
  else
    plane_tile_kernel<false><<<grid, block, 0, stream>>>(x, nvec, nvec_pad, k, k_pad, alpha_dev,
                                                         gen, nplanes, out);
}

}  // namespace ozdgemm::detail
