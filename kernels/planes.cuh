// The tiled writer shared by the residue and bound-quantisation kernels: it reads a tile of
// 32 vectors x 128 k of an operand once (coalesced whichever way the operand is laid out),
// stages it in shared memory, and then each thread turns 16 consecutive k of one vector into
// per-plane INT8 values and writes every plane (k-contiguous, zero padding included) with
// one 16-byte store. No barrier inside the plane loop. Included only by kernel translation
// units. bench/results/2026-11-29_perf_issue4 has the instruction and byte counts.
#pragma once

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "launch_common.cuh"

namespace ozdgemm::detail {

inline constexpr int kPlaneRun = 16;   // consecutive k of one vector per thread: 16 bytes
inline constexpr int kTileVecs = 32;   // vectors per tile
inline constexpr int kTileK = 128;     // k per tile: 8 runs
inline constexpr int kTileThreads = kTileVecs * kTileK / kPlaneRun;  // 256
// k_pad is a multiple of kPad = 16 = kPlaneRun, so a run is wholly inside k_pad or outside,
// and every run starts 16-byte aligned in its plane (planes, rows and the workspace base are).
static_assert(kPad % kPlaneRun == 0, "a run must not straddle the end of a padded row");

// Four low bytes into one little-endian word (b0 lowest).
__device__ __forceinline__ uint32_t pack4(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
  return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410);
}

// Gen: typename vec; vec vector(int64_t v) const;           per-vector input (exponent, ...)
//      typename state; state prepare(double x, const vec&) const;
//      void pack(const state (&st)[kPlaneRun], int t, uint32_t (&w)[4]) const;  plane t's bytes
template <bool KContig, class Gen>
__global__ void __launch_bounds__(kTileThreads, 2)
    plane_tile_kernel(operand x, int64_t nvec, int64_t nvec_pad, int64_t k, int64_t k_pad,
                      const double* alpha_dev, Gen gen, int nplanes, int8_t* out) {
  // Row stride 129 doubles: the staging writes (32 consecutive k of one vector, or one k of
  // 32 vectors) and the run reads (one element of 16 vectors per half-warp) are all free of
  // bank conflicts.
  __shared__ double tile[kTileVecs][kTileK + 1];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // Run owner: a warp covers 16 vectors x 2 runs, so each store fills 16 whole 32-byte sectors.
  const int rv = (warp % 2) * 16 + lane % 16;
  const int rk = ((warp / 2) * 2 + lane / 16) * kPlaneRun;
  const int64_t l0 = static_cast<int64_t>(blockIdx.x) * kTileK;
  const bool skip = skip_inputs(alpha_dev);
  const int64_t plane_size = nvec_pad * k_pad;

  for (int64_t v0 = static_cast<int64_t>(blockIdx.y) * kTileVecs; v0 < nvec_pad;
       v0 += static_cast<int64_t>(gridDim.y) * kTileVecs) {
    double val[kPlaneRun];
#pragma unroll
    for (int i = 0; i < kPlaneRun; ++i) {  // consecutive threads: consecutive addresses
      const int f = i * kTileThreads + tid;
      const int tv = KContig ? f / kTileK : f % kTileVecs;
      const int tl = KContig ? f % kTileK : f / kTileVecs;
      const int64_t v = v0 + tv, l = l0 + tl;
      val[i] = !skip && v < nvec && l < k ? x.at(v, l) : 0.0;
    }
    __syncthreads();  // the previous tile's reads are done
#pragma unroll
    for (int i = 0; i < kPlaneRun; ++i) {
      const int f = i * kTileThreads + tid;
      tile[KContig ? f / kTileK : f % kTileVecs][KContig ? f % kTileK : f / kTileVecs] = val[i];
    }
    __syncthreads();

    const int64_t v = v0 + rv, l = l0 + rk;
    if (v >= nvec_pad || l >= k_pad) continue;
    const typename Gen::vec vc = gen.vector(v < nvec ? v : 0);  // padding rows hold zeros
    typename Gen::state st[kPlaneRun];
#pragma unroll
    for (int i = 0; i < kPlaneRun; ++i) st[i] = gen.prepare(tile[rv][rk + i], vc);
    int8_t* o = out + v * k_pad + l;
    for (int t = 0; t < nplanes; ++t) {
      uint32_t w[4];
      gen.pack(st, t, w);
      *reinterpret_cast<uint4*>(o + t * plane_size) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

template <class Gen>
void launch_plane_tiles(const operand& x, int64_t nvec, int64_t nvec_pad, int64_t k, int64_t k_pad,
                        const double* alpha_dev, const Gen& gen, int nplanes, int8_t* out,
                        cudaStream_t stream) {
  const dim3 grid(grid_dim(k_pad, kTileK), grid_dim(nvec_pad, kTileVecs, 65535));
  if (x.k_contiguous)
    plane_tile_kernel<true><<<grid, kTileThreads, 0, stream>>>(x, nvec, nvec_pad, k, k_pad,
                                                               alpha_dev, gen, nplanes, out);
  else
    plane_tile_kernel<false><<<grid, kTileThreads, 0, stream>>>(x, nvec, nvec_pad, k, k_pad,
                                                                alpha_dev, gen, nplanes, out);
}

}  // namespace ozdgemm::detail
