// The certificate's magnitude codes of an operand (core/certified_bound.hpp, magnitude_band),
// as INT8 plane words for the tiled plane writer (planes.cuh): written by their own pass
// (certify.cu) or as extra planes of the residue pass (residues.cu), with the same bytes.
// Included only by kernel translation units.
#pragma once

#include <cstdint>

#include "core/certified_bound.hpp"
#include "core/scaling_rules.hpp"
#include "planes.cuh"
#include "scan.cuh"

namespace ozdgemm::detail {

struct band_codes {
  const int* emax_enc;
  const int* drop;
  // The top of vector v's bands (emax - drop), kZeroExponent for a zero vector.
  __device__ int top(int64_t v) const {
    const int emax = decode_emax(emax_enc[v]);
    return emax == kZeroExponent ? kZeroExponent : emax - drop[v];
  }
  // An entry's band (bits 8..) and code (bits 0..7); 0 outside the kCertBands bands.
  __device__ static uint32_t code(double x, int top) {
    if (top == kZeroExponent) return 0;
    if constexpr (kCertBands == 1) return static_cast<uint32_t>(band0_code(x, top));
    const band_code bc = magnitude_band(x, top);
    if (bc.code == 0 || bc.band >= kCertBands) return 0;
    return static_cast<uint32_t>(bc.code) | (static_cast<uint32_t>(bc.band) << 8);
  }
  // Plane d's 8 bytes of a run: the codes of band d, 0 for the others.
  __device__ static void plane_word(const uint32_t (&c)[kPlaneRun], int d, uint32_t (&w)[2]) {
    uint32_t b[kPlaneRun];
#pragma unroll
    for (int i = 0; i < kPlaneRun; ++i)
      b[i] = (c[i] >> 8) == static_cast<uint32_t>(d) ? (c[i] & 0xFFu) : 0u;
    w[0] = pack4(b[0], b[1], b[2], b[3]);
    w[1] = pack4(b[4], b[5], b[6], b[7]);
  }
};

}  // namespace ozdgemm::detail
