#include "residues.cuh"

#include "core/element.hpp"
#include "planes.cuh"
#include "residue_table.hpp"

namespace ozdgemm::detail {
namespace {

struct residue_gen {
  using vec = int;  // the vector's exponent
  using state = signed_chunks;
  const int* exps;
  residue_table rt;
  __device__ vec vector(int64_t v) const { return exps[v]; }
  __device__ state prepare(double x, int e) const { return signed_scale_truncate(x, e); }
  __device__ void pack(const state (&st)[kPlaneRun], int t, uint32_t (&w)[4]) const {
    uint32_t b[kPlaneRun];
    if (t == 0) {
#pragma unroll
      for (int i = 0; i < kPlaneRun; ++i) b[i] = residue_byte_256(st[i]);
    } else {
      const residue_consts c = rt.c[t];
#pragma unroll
      for (int i = 0; i < kPlaneRun; ++i) b[i] = residue_byte(st[i], c);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = pack4(b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]);
  }
};

}  // namespace

void launch_residues(const operand& x, int64_t nvec, int64_t nvec_pad, int64_t k, int64_t k_pad,
                     const double* alpha_dev, const int* exps, const modulus_table& tb,
                     int8_t* planes, cudaStream_t stream) {
  launch_plane_tiles(x, nvec, nvec_pad, k, k_pad, alpha_dev,
                     residue_gen{exps, make_residue_table(tb)}, tb.s, planes, stream);
}

}  // namespace ozdgemm::detail
