#include "residues.cuh"

#include "core/element.hpp"
#include "planes.cuh"

namespace ozdgemm::detail {
namespace {

struct residue_gen {
  using state = scaled_int;
  const int* exps;
  modulus_table tb;
  __device__ state prepare(double x, int64_t v) const { return scale_truncate(x, exps[v]); }
  __device__ int8_t plane(const state& s, int t) const { return symmetric_residue(s, tb, t); }
};

}  // namespace

void launch_residues(const operand& x, int64_t nvec, int64_t nvec_pad, int64_t k, int64_t k_pad,
                     const double* alpha_dev, const int* exps, const modulus_table& tb,
                     int8_t* planes, cudaStream_t stream) {
  launch_plane_tiles(x, nvec, nvec_pad, k, k_pad, alpha_dev, residue_gen{exps, tb}, tb.s, planes,
                     stream);
}

}  // namespace ozdgemm::detail
