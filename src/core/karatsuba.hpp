// The Karatsuba form of the complex product on residues (engine/complex_gemm.hpp). Per modulus
// m_t, with the halves of the embedding's residue planes (core/complex_embedding.hpp):
//   P1 = Re A Re B^T,   P2 = Im A Im B^T,   P3 = (Re A + Im A)(Re B + Im B)^T
//   T_re = P1 - P2,     T_im = P3 - P1 - P2                                     (mod m_t)
// Both sides are the same integers mod m_t as the four-product T = A' B* (Re A Re B - Im A Im B
// and Re A Im B + Im A Re B), so the CRT recovers the same T, bit for bit: the form changes the
// work (3 INT8 GEMMs per modulus on k' x n' halves instead of one on 2k' x 2n'), not the result.
// Host and device; the CPU suite checks both functions against plain modular arithmetic.
#pragma once

#include <cstdint>

#include "core/element.hpp"
#include "core/hd.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

// A complex call's embedding to multiply in the Karatsuba form: its halves k' and n' (the real
// problem is m x 2n' x 2k'); zero for any other call.
struct karatsuba_halves {
  int64_t k = 0, n = 0;
  OZDGEMM_HD bool on() const { return k > 0; }
};

// (x + y) mod m as an engine residue (the representative r - 128 of r in [0, m), the INT8 range
// of int8_residue: the residue is congruent to the value), from two engine residues:
// r = x + y + 128 lies in [-128, 2m - 130], one step from [0, m) either way (m > 128).
OZDGEMM_HD int8_t residue_sum(int8_t x, int8_t y, uint32_t m) {
  const int mi = static_cast<int>(m);
  int r = x + y + 128;
  if (r < 0) r += mi;
  if (r >= mi) r -= mi;
  return static_cast<int8_t>(r - 128);
}

// (x - y) mod m likewise: r = x - y + 128 lies in [129 - m, m + 127], one step from [0, m).
OZDGEMM_HD int8_t residue_difference(int8_t x, int8_t y, uint32_t m) {
  const int mi = static_cast<int>(m);
  int r = x - y + 128;
  if (r < 0) r += mi;
  if (r >= mi) r -= mi;
  return static_cast<int8_t>(r - 128);
}

// T_re and T_im mod m_t from the three products' exact INT32 sums (each within the k-block
// limit that product_residue() accepts): representatives in (-m_t, m_t) and (-2 m_t, m_t), which
// the CRT reduces like any INT32 sum.
struct karatsuba_part_sums {
  int32_t re, im;
};
OZDGEMM_HD karatsuba_part_sums karatsuba_parts(int32_t p1, int32_t p2, int32_t p3,
                                               const modulus_table& tb, int t) {
  const int32_t r1 = static_cast<int32_t>(product_residue(p1, tb, t));
  const int32_t r2 = static_cast<int32_t>(product_residue(p2, tb, t));
  const int32_t r3 = static_cast<int32_t>(product_residue(p3, tb, t));
  return karatsuba_part_sums{r1 - r2, r3 - r1 - r2};
}

}  // namespace ozdgemm::detail
