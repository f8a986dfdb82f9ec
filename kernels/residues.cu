#include "residues.cuh"

#include "band_codes.cuh"
#include "core/complex_embedding.hpp"
#include "core/element.hpp"
#include "planes.cuh"
#include "residue_table.hpp"

namespace ozdgemm::detail {
namespace {

// Chosen: the moduli count is the one chosen on the GPU (*chosen), whose rounding is bit s of
// nearest_mask; the table's constants of plane t do not depend on s (s uses the first s moduli).
template <bool Chosen>
struct residue_gen {
  using vec = int;  // the vector's exponent
  using state = signed_chunks;
  const int* exps;
  residue_table rt;
  bool nearest;            // rounds_to_nearest(tb, k)
  const int* chosen;       // Chosen only
  uint32_t nearest_mask;   // Chosen only
  __device__ vec vector(int64_t v) const { return exps[v]; }
  __device__ void skip_vectors(int64_t n) { exps += n; }
  __device__ state prepare(double x, int e) const {
    const bool rn = Chosen ? ((nearest_mask >> *chosen) & 1u) != 0 : nearest;
    return signed_scale_to_int(x, e, rn);
  }
  __device__ bool narrow(const state& st) const { return st.c[3] == 0; }  // |V| < 2^60
  template <bool Narrow, bool First>
  __device__ void pack(const state (&st)[kPlaneRun], int t, uint32_t (&w)[2]) const {
    uint32_t b[kPlaneRun];
    if (First) {
#pragma unroll
      for (int i = 0; i < kPlaneRun; ++i) b[i] = residue_byte_256(st[i]);
    } else {
      constexpr int kChunks = Narrow ? 3 : 4;
      const residue_consts c = rt.c[t];
#pragma unroll
      for (int i = 0; i < kPlaneRun; ++i) b[i] = residue_offset<kChunks>(st[i], c);
    }
    const uint32_t flip = First ? 0u : kOffsetToInt8;
#pragma unroll
    for (int j = 0; j < 2; ++j)
      w[j] = pack4(b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]) ^ flip;
  }
};

// The residues of a fixed count and the certificate's band planes (the same bytes as
// launch_band_planes writes), from the one read of the operand. Mirror: the Karatsuba form's B
// (residues.cuh), whose run at (v, l) also holds the magnitudes of the partner column's run at
// depth l + half_k.
template <bool Mirror>
struct residue_band_gen : residue_gen<false> {
  static constexpr int kExtraPlanes = kCertBands;
  static constexpr bool kMirrorExtra = Mirror;
  band_codes bc;
  int8_t* extra_out;               // the band planes
  int64_t half_n = 0, half_k = 0;  // Mirror only
  __device__ void extra(const double (&x)[kPlaneRun], int64_t v, int d, uint32_t (&w)[2]) const {
    const int top = bc.top(v);
    uint32_t c[kPlaneRun];
#pragma unroll
    for (int i = 0; i < kPlaneRun; ++i) c[i] = band_codes::code(x[i], top);
    band_codes::plane_word(c, d, w);
  }
  __device__ int64_t extra_mirror(int64_t v, int64_t l, int64_t k_pad) const {
    return embedding_partner(v, half_n) * k_pad + l + half_k;
  }
};

template <bool Mirror>
void residues_and_bands(const operand_vectors& v, const int* exps, const modulus_table& tb,
                        bool nearest, const int* emax_enc, const int* drop, int8_t* planes,
                        int8_t* band_planes, const karatsuba_halves& mirror, cudaStream_t stream) {
  residue_band_gen<Mirror> gen;
  static_cast<residue_gen<false>&>(gen) =
      residue_gen<false>{exps, make_residue_table(tb), nearest, nullptr, 0};
  gen.bc = band_codes{emax_enc, drop};
  gen.extra_out = band_planes;
  gen.half_n = mirror.n;
  gen.half_k = mirror.k;
  launch_plane_tiles(v.x, v.nvec, v.nvec_pad, v.k, v.k_pad, v.alpha_dev, gen, tb.s, planes, stream,
                     nullptr, v.k_written);
}

}  // namespace

void launch_residues_and_bands(const operand_vectors& v, const int* exps, const modulus_table& tb,
                               bool nearest, const int* emax_enc, const int* drop, int8_t* planes,
                               int8_t* band_planes, cudaStream_t stream,
                               const karatsuba_halves& mirror) {
  if (mirror.on())
    residues_and_bands<true>(v, exps, tb, nearest, emax_enc, drop, planes, band_planes, mirror,
                             stream);
  else
    residues_and_bands<false>(v, exps, tb, nearest, emax_enc, drop, planes, band_planes, mirror,
                              stream);
}

void launch_residues(const operand_vectors& v, const int* exps, const modulus_table& tb,
                     bool nearest, int8_t* planes, cudaStream_t stream) {
  const residue_gen<false> gen{exps, make_residue_table(tb), nearest, nullptr, 0};
  if (v.batch > 1)
    launch_plane_tiles<true>(v.x, v.nvec, v.nvec_pad, v.k, v.k_pad, v.alpha_dev, gen, tb.s, planes,
                             stream, nullptr, v.k_written, v.batch, v.batch_stride);
  else
    launch_plane_tiles(v.x, v.nvec, v.nvec_pad, v.k, v.k_pad, v.alpha_dev, gen, tb.s, planes,
                       stream, nullptr, v.k_written);
}

void launch_chosen_residues(const operand_vectors& v, const int* exps, const int* chosen,
                            uint32_t nearest_mask, int8_t* planes, cudaStream_t stream) {
  launch_plane_tiles(v.x, v.nvec, v.nvec_pad, v.k, v.k_pad, v.alpha_dev,
                     residue_gen<true>{exps, make_residue_table(moduli_for(kMaxModuli)), false,
                                       chosen, nearest_mask},
                     kMaxModuli, planes, stream, chosen, v.k_written);
}

cudaError_t load_residue_band_kernels() {
  return load_kernels(plane_tile_kernel<true, residue_band_gen<false>>,
                      plane_tile_kernel<false, residue_band_gen<false>>,
                      plane_tile_kernel<true, residue_band_gen<true>>,
                      plane_tile_kernel<false, residue_band_gen<true>>);
}

}  // namespace ozdgemm::detail
