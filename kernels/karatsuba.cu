#include "core/karatsuba.hpp"
#include "karatsuba.cuh"
#include "launch_common.cuh"

namespace ozdgemm::detail {
namespace {

constexpr int kThreads = 256;

// 16 residues per thread (one 16-byte load of each operand, one store).
template <bool Subtract>
__global__ void residue_sums_kernel(const int8_t* x, int64_t x_plane, int64_t ld, int64_t offset,
                                    int64_t vectors, int64_t width, modulus_table tb, int8_t* out,
                                    int64_t out_plane, int64_t out_ld, const int* chosen) {
  const int t = blockIdx.y;
  if (chosen != nullptr && t >= *chosen) return;  // a plane of no modulus the chosen s uses
  const uint32_t m = tb.m[t];
  const int64_t chunks = width / 16, total = vectors * chunks;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; c < total;
       c += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t v = c / chunks, l = (c - v * chunks) * 16;
    const int8_t* src = x + t * x_plane + v * ld + l;
    int4 lo = *reinterpret_cast<const int4*>(src);
    const int4 hi = *reinterpret_cast<const int4*>(src + offset);
    int8_t* a = reinterpret_cast<int8_t*>(&lo);
    const int8_t* b = reinterpret_cast<const int8_t*>(&hi);
#pragma unroll
    for (int e = 0; e < 16; ++e)
      a[e] = Subtract ? residue_difference(a[e], b[e], m) : residue_sum(a[e], b[e], m);
    *reinterpret_cast<int4*>(out + t * out_plane + v * out_ld + l) = lo;
  }
}

}  // namespace

void launch_residue_sums(const int8_t* x, int64_t x_plane, int64_t ld, int64_t offset,
                         int64_t vectors, int64_t width, const modulus_table& tb, int8_t* out,
                         int64_t out_plane, int64_t out_ld, cudaStream_t stream, const int* chosen,
                         bool subtract) {
  const int64_t chunks = vectors * (width / 16);
  const dim3 grid(grid_dim(chunks, kThreads, 65535), tb.s);
  if (subtract)
    residue_sums_kernel<true><<<grid, kThreads, 0, stream>>>(x, x_plane, ld, offset, vectors, width,
                                                             tb, out, out_plane, out_ld, chosen);
  else
    residue_sums_kernel<false><<<grid, kThreads, 0, stream>>>(
        x, x_plane, ld, offset, vectors, width, tb, out, out_plane, out_ld, chosen);
}

}  // namespace ozdgemm::detail
