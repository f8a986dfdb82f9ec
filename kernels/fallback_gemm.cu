#include "core/hd.hpp"
#include "fallback_gemm.cuh"
#include "launch_common.cuh"

namespace ozdgemm::detail {
namespace {

// A 64 x 64 tile of C per block of 256 threads, 4 x 4 elements per thread, k in steps of 16
// through shared memory. Loads follow each operand's contiguous direction (coalesced in both
// layouts). Speed is secondary (it runs only after a wrong guess), but it must not be far from
// the FP64 units' rate: a 16384^3 call must finish in seconds, not minutes.
constexpr int kTile = 64;
constexpr int kStep = 16;
constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 1056;  // 8 per SM of an H100/H200 (132 SMs)

// Tile rows [v0, v0 + 64) x k [l0, l0 + 16) of an operand into s[l][v] (zeros outside).
__device__ __forceinline__ void load_tile(const operand& x, int64_t nvec, int64_t k, int64_t v0,
                                          int64_t l0, double (*s)[kTile + 1]) {
  for (int e = threadIdx.x; e < kTile * kStep; e += kThreads) {
    // The contiguous index runs fastest across threads.
    const int v = x.k_contiguous ? e / kStep : e % kTile;
    const int l = x.k_contiguous ? e % kStep : e / kTile;
    const int64_t gv = v0 + v, gl = l0 + l;
    s[l][v] = gv < nvec && gl < k ? x.at(gv, gl) : 0.0;
  }
}

__global__ void __launch_bounds__(kThreads)
    fallback_dgemm_kernel(gemm_problem p, scalar_arg alpha_arg, scalar_arg beta_arg,
                          const int* chosen, int part, int64_t half) {
  if (*chosen != 0) return;  // the emulation wrote C
  __shared__ double sa[kStep][kTile + 1];
  __shared__ double sb[kStep][kTile + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const double alpha = alpha_arg.get();
  const double beta = beta_arg.get();
  const int64_t row_tiles = (p.m + kTile - 1) / kTile;
  const int64_t tiles = row_tiles * ((p.n + kTile - 1) / kTile);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t i0 = tile % row_tiles * kTile, j0 = tile / row_tiles * kTile;
    // A tile wholly outside the part (none of its rows reaches its columns' triangle) is skipped;
    // whether it is depends on the block only, so the whole block skips it together.
    // (A tile across the two halves of a complex call's T is never skipped.)
    const bool straddles = half > 0 && j0 < half && j0 + kTile > half;
    const int64_t jt = half > 0 && j0 >= half ? j0 - half : j0;
    if (!straddles && part == 1 && i0 + kTile - 1 < jt) continue;
    if (!straddles && part == 2 && i0 > jt + kTile - 1) continue;
    double acc[4][4] = {};
    if (alpha != 0.0) {
      for (int64_t l0 = 0; l0 < p.k; l0 += kStep) {
        load_tile(p.a, p.m, p.k, i0, l0, sa);
        load_tile(p.b, p.n, p.k, j0, l0, sb);
        __syncthreads();
#pragma unroll
        for (int l = 0; l < kStep; ++l) {
          double a[4], b[4];
#pragma unroll
          for (int r = 0; r < 4; ++r) a[r] = sa[l][tx + 16 * r];
#pragma unroll
          for (int c = 0; c < 4; ++c) b[c] = sb[l][ty + 16 * c];
#pragma unroll
          for (int r = 0; r < 4; ++r)
#pragma unroll
            for (int c = 0; c < 4; ++c) acc[r][c] = fma_rn(a[r], b[c], acc[r][c]);
        }
        __syncthreads();
      }
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int64_t j = j0 + ty + 16 * c;
      if (j >= p.n) continue;
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int64_t i = i0 + tx + 16 * r;
        if (i >= p.m || outside_part(part, i, half > 0 && j >= half ? j - half : j, 0)) continue;
        double* e = p.c + j * p.ldc + i;
        // alpha == 0: C = beta C, neither A nor B read (their tiles were never loaded).
        const double v = alpha == 0.0 ? 0.0 : mul_rn(alpha, acc[r][c]);
        *e = beta == 0.0 ? v : fma_rn(beta, *e, v);
      }
    }
  }
}

}  // namespace

cudaError_t load_fallback_kernels() { return load_kernels(fallback_dgemm_kernel); }

void launch_fallback_dgemm(const gemm_problem& p, scalar_arg alpha, scalar_arg beta,
                           const int* chosen, cudaStream_t stream, int part, int64_t half) {
  // A grid-stride loop over the tiles with a few blocks per SM: when the emulation wrote C, the
  // launch costs about one wave of blocks that read *chosen and return.
  const double tiles = static_cast<double>(grid_dim(p.m, kTile)) * grid_dim(p.n, kTile);
  const unsigned blocks = tiles < kMaxBlocks ? static_cast<unsigned>(tiles) : kMaxBlocks;
  fallback_dgemm_kernel<<<blocks, kThreads, 0, stream>>>(p, alpha, beta, chosen, part, half);
}

}  // namespace ozdgemm::detail
