// The tiled writer shared by the residue and bound-quantisation kernels: it reads a tile of
// 32 vectors x 128 k of an operand once (coalesced whichever way the operand is laid out),
// stages it in shared memory, and then each thread turns 8 consecutive k of one vector into
// per-plane INT8 values and writes every plane (k-contiguous, zero padding included) with
// one 8-byte store; the four lanes that share a vector fill one 32-byte sector. No barrier
// inside the plane loop. Runs of 8 (not 16) keep the per-element state in 64 registers, for
// twice the resident warps: the writer is bound by instruction issue, not by memory (ncu,
// bench/results/probes/README.md). Included only by kernel translation units.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/gemm_problem.hpp"
#include "launch_common.cuh"

namespace ozdgemm::detail {

inline constexpr int kPlaneRun = 8;   // consecutive k of one vector per thread: 8 bytes
inline constexpr int kTileVecs = 32;  // vectors per tile
inline constexpr int kTileK = 128;    // k per tile: 16 runs
inline constexpr int kTileThreads = kTileVecs * kTileK / kPlaneRun;  // 512
// k_pad is a multiple of kPad = 16, so a run is wholly inside k_pad or outside, and every
// run starts 8-byte aligned in its plane (planes, rows and the workspace base are).
static_assert(kPad % kPlaneRun == 0, "a run must not straddle the end of a padded row");

// Four low bytes into one little-endian word (b0 lowest).
__device__ __forceinline__ uint32_t pack4(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
  return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410);
}

// Gen: typename vec; vec vector(int64_t v) const;           per-vector input (exponent, ...)
//      typename state; state prepare(double x, const vec&) const;
//      bool narrow(const state&) const;   the state takes the cheaper plane path (any answer
//                                         is correct; the warp takes it only if all agree)
//      template <bool Narrow, bool First> void pack(const state (&st)[kPlaneRun], int t,
//                                                   uint32_t (&w)[2]) const;
//          plane t's 8 bytes; First: t == 0, known at compile time (plane 0 is written before
//          the loop over the others, so neither path branches on t)
//      static constexpr int kExtraPlanes (optional, default 0): planes of a second product of
//          the same pass over the operand, laid out as the others from int8_t* extra_out (a
//          member), plane d filled from the run's inputs by
//          void extra(const double (&x)[kPlaneRun], int64_t v, int d, uint32_t (&w)[2]) const
//      void skip_vectors(int64_t n) (Batched kernels only): per-vector inputs from vector n on
//      static constexpr bool kMirrorExtra (optional, default false): each run's extra bytes
//          also go to offset extra_mirror(v, l, k_pad) of each extra plane (another vector's
//          run that holds the same magnitudes: the Karatsuba form's B, residues.cuh)
// nplanes_dev (may be null): the plane count in device memory, read in place of nplanes (a count
// chosen on the GPU, engine/gpu_choice.hpp); 0 writes nothing. Each vector's k in [0, k_write)
// is written (k_write <= k_pad, a multiple of kPad), at the row stride k_pad.
template <class Gen, class = void>
struct extra_planes_of {
  static constexpr int value = 0;
};
template <class Gen>
struct extra_planes_of<Gen, std::void_t<decltype(Gen::kExtraPlanes)>> {
  static constexpr int value = Gen::kExtraPlanes;
};
template <class Gen, class = void>
struct mirrors_extra {
  static constexpr bool value = false;
};
template <class Gen>
struct mirrors_extra<Gen, std::void_t<decltype(Gen::kMirrorExtra)>> {
  static constexpr bool value = Gen::kMirrorExtra;
};

template <bool KContig, class Gen, bool Batched = false>
__global__ void __launch_bounds__(kTileThreads, 2)
    plane_tile_kernel(operand x, int64_t nvec, int64_t nvec_pad, int64_t k, int64_t k_pad,
                      int64_t k_write, int64_t plane_size, const double* alpha_dev, Gen gen,
                      int nplanes, const int* nplanes_dev, int8_t* out, int64_t batch_stride) {
  if (nplanes_dev != nullptr) nplanes = *nplanes_dev;
  if (nplanes == 0) return;  // uniform: before any barrier
  // Batched (operand_vectors::batch): blockIdx.z is the operand, its planes laid out as one
  // call's, nplanes planes after the previous operand's; Gen, moved on by z nvec vectors
  // (gen.skip_vectors), sees its vectors as one call's. A template parameter: the single call's
  // kernels stay as they were (this kernel is held at 64 registers and spills already).
  if constexpr (Batched) {
    x.ptr += blockIdx.z * batch_stride;
    out += blockIdx.z * (nplanes * plane_size);
    gen.skip_vectors(blockIdx.z * nvec);
  }
  // Row stride 129 doubles: the staging writes (32 consecutive k of one vector, or one k of
  // 32 vectors) and the run reads (8 vectors x 2 runs per half-warp) are free of bank
  // conflicts.
  __shared__ double tile[kTileVecs][kTileK + 1];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // Run owner: a warp covers 8 vectors x 4 runs; lanes l, l + 8, l + 16, l + 24 hold the 4
  // runs of one vector, so each 8-byte store of the warp fills 8 whole 32-byte sectors.
  const int rv = (warp % 4) * 8 + lane % 8;
  const int rk = ((warp / 4) * 4 + lane / 8) * kPlaneRun;
  const int64_t l0 = static_cast<int64_t>(blockIdx.x) * kTileK;
  const bool skip = skip_inputs(alpha_dev);

  for (int64_t v0 = static_cast<int64_t>(blockIdx.y) * kTileVecs; v0 < nvec_pad;
       v0 += static_cast<int64_t>(gridDim.y) * kTileVecs) {
    double val[kPlaneRun];
    if (!skip && v0 + kTileVecs <= nvec && l0 + kTileK <= k) {
      // A whole tile inside the operand (all but the edges): element i of this thread lies a
      // fixed stride after element 0, so no per-element index arithmetic or bounds checks.
      constexpr int kStep = KContig ? kTileThreads / kTileK : kTileThreads / kTileVecs;
      const int tv0 = KContig ? tid / kTileK : tid % kTileVecs;
      const int tl0 = KContig ? tid % kTileK : tid / kTileVecs;
      const double* p =
          &x.ptr[KContig ? (v0 + tv0) * x.ld + l0 + tl0 : (l0 + tl0) * x.ld + v0 + tv0];
      const int64_t stride = kStep * x.ld;
#pragma unroll
      for (int i = 0; i < kPlaneRun; ++i) val[i] = p[i * stride];
    } else {
#pragma unroll
      for (int i = 0; i < kPlaneRun; ++i) {  // consecutive threads: consecutive addresses
        const int f = i * kTileThreads + tid;
        const int tv = KContig ? f / kTileK : f % kTileVecs;
        const int tl = KContig ? f % kTileK : f / kTileVecs;
        const int64_t v = v0 + tv, l = l0 + tl;
        val[i] = !skip && v < nvec && l < k ? x.at(v, l) : 0.0;
      }
    }
    __syncthreads();  // the previous tile's reads are done
#pragma unroll
    for (int i = 0; i < kPlaneRun; ++i) {
      const int f = i * kTileThreads + tid;
      tile[KContig ? f / kTileK : f % kTileVecs][KContig ? f % kTileK : f / kTileVecs] = val[i];
    }
    __syncthreads();

    const int64_t v = v0 + rv, l = l0 + rk;
    if (v >= nvec_pad || l >= k_write) continue;
    // The second product first: its registers are free again before the residue state is made.
    if constexpr (extra_planes_of<Gen>::value > 0) {
      double x[kPlaneRun];
#pragma unroll
      for (int i = 0; i < kPlaneRun; ++i) x[i] = tile[rv][rk + i];
      int8_t* o = gen.extra_out + v * k_pad + l;
      [[maybe_unused]] int8_t* o2 = nullptr;
      if constexpr (mirrors_extra<Gen>::value) o2 = gen.extra_out + gen.extra_mirror(v, l, k_pad);
#pragma unroll
      for (int d = 0; d < extra_planes_of<Gen>::value; ++d, o += plane_size) {
        uint32_t w[2];
        gen.extra(x, v < nvec ? v : 0, d, w);
        *reinterpret_cast<uint2*>(o) = make_uint2(w[0], w[1]);
        if constexpr (mirrors_extra<Gen>::value) {
          *reinterpret_cast<uint2*>(o2) = make_uint2(w[0], w[1]);
          o2 += plane_size;
        }
      }
    }
    const typename Gen::vec vc = gen.vector(v < nvec ? v : 0);  // padding rows hold zeros
    typename Gen::state st[kPlaneRun];
    bool narrow = true;
#pragma unroll
    for (int i = 0; i < kPlaneRun; ++i) {
      st[i] = gen.prepare(tile[rv][rk + i], vc);
      narrow = narrow && gen.narrow(st[i]);
    }
    auto write_planes = [&](auto narrow_path) {
      constexpr bool kNarrow = decltype(narrow_path)::value;
      // plane_size is a kernel parameter (nvec_pad k_pad), so stepping to the next plane is
      // one 64-bit add from the constant bank, not a product rematerialised per plane.
      int8_t* o = out + v * k_pad + l;
      uint32_t w[2];
      gen.template pack<kNarrow, true>(st, 0, w);
      *reinterpret_cast<uint2*>(o) = make_uint2(w[0], w[1]);
#pragma unroll 1
      for (int t = 1; t < nplanes; ++t) {
        o += plane_size;
        gen.template pack<kNarrow, false>(st, t, w);
        *reinterpret_cast<uint2*>(o) = make_uint2(w[0], w[1]);
      }
    };
    // Uniform per warp: the lanes that reached here agree on the path.
    if (__all_sync(__activemask(), narrow))
      write_planes(std::true_type{});
    else
      write_planes(std::false_type{});
  }
}

// k_written: operand_vectors::k_written (0: k_pad); batch, batch_stride: operand_vectors' (batch
// <= 65535, a grid dimension; a batch needs the count on the host: nplanes_dev null), read only
// by the Batched kernels.
template <bool Batched = false, class Gen>
void launch_plane_tiles(const operand& x, int64_t nvec, int64_t nvec_pad, int64_t k, int64_t k_pad,
                        const double* alpha_dev, const Gen& gen, int nplanes, int8_t* out,
                        cudaStream_t stream, const int* nplanes_dev = nullptr,
                        int64_t k_written = 0, int64_t batch = 1, int64_t batch_stride = 0) {
  const int64_t kw = k_written > 0 ? k_written : k_pad;
  const dim3 grid(grid_dim(kw, kTileK), grid_dim(nvec_pad, kTileVecs, 65535),
                  Batched ? static_cast<unsigned>(batch) : 1u);
  if (x.k_contiguous)
    plane_tile_kernel<true, Gen, Batched><<<grid, kTileThreads, 0, stream>>>(
        x, nvec, nvec_pad, k, k_pad, kw, nvec_pad * k_pad, alpha_dev, gen, nplanes, nplanes_dev,
        out, batch_stride);
  else
    plane_tile_kernel<false, Gen, Batched><<<grid, kTileThreads, 0, stream>>>(
        x, nvec, nvec_pad, k, k_pad, kw, nvec_pad * k_pad, alpha_dev, gen, nplanes, nplanes_dev,
        out, batch_stride);
}

}  // namespace ozdgemm::detail
