// The certified moduli count (OZDGEMM_MODULI=certified; docs/certified.md): the
// per-element arithmetic that the GPU (kernels/certify.cu) and the host reference
// (reference/certified_choice.cpp) share, so that both compute the same bits.
//
// For row i of op(A) and column j of op(B), with the exponents e_i, f_j the scaling chooses
// for s, h = e + emax (the bits kept of each vector's largest entry), the truncation bound
// (docs/accuracy.md eq. 1) normalised by 2^(emaxA_i + emaxB_j) is
//   T_ij <= 2^-hA nb_j + 2^-hB na_i + k 2^-(hA + hB),     (truncated residues)
// half of the first two terms and a quarter of the last when the residues round to nearest,
// with na_i >= ||a_i||_1 2^-emaxA_i and nb_j likewise, and it is divided by a proven lower
// bound w_ij <= (|A||B|)_ij 2^-(emaxA_i + emaxB_j) built from INT8 GEMMs of magnitude bands.
// Every quantity here is an integer, an exact power-of-two scaling, or a round-to-nearest
// operation whose error the final factor (1 + 2^-50) covers.
#pragma once

#include <cstdint>

#include "core/element.hpp"
#include "core/hd.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

inline constexpr int kBandBits = 7;  // a band spans 7 binades; codes fit INT8 (1..127)
// One band: with the drop (band_drop) it certifies the same s as 3 bands anchored at emax, and as
// a perfect lower bound, on every random set of docs/certified.md, for one INT8 GEMM
// of depth k (3 bands: 6).
inline constexpr int kCertBands = 1;
inline constexpr int kL1Bits = 31;  // l1 norms in units of 2^(emax - 30), rounded up
// The integer l1 sums are exact below this depth (k 2^31 < 2^63); deeper calls are not certified.
inline constexpr int64_t kCertMaxK = int64_t{1} << 32;
// The largest band drop (band_drop; a finite vector spans at most 2098 binades): with two drops
// of 400, w >= 2^-826 when nonzero, normal, so rounding it down stays a lower bound.
inline constexpr int kMaxBandDrop = 400;

// The top of a vector's bands: `drop` binades below its largest exponent, where
//   drop = max(0, floor((emax - mean exponent) / 2) - 1),   mean exponent = floor(exp_sum / nnz)
// (exp_sum, nnz: the automatic count's statistics, core/moduli_choice.hpp). Anchored at emax, a
// band of 7 binades holds only a heavy-tailed vector's few largest entries, and a pair (i, j)
// whose large entries never meet gets no lower bound at all; anchored halfway towards the mean,
// the band covers where the mass of |A||B| lies, and the entries above it still count, clamped
// to the top code. Zero vectors: 0.
OZDGEMM_HD int band_drop(int emax, int64_t exp_sum, int64_t nnz) {
  if (emax == kZeroExponent || nnz <= 0) return 0;
  int64_t q = exp_sum / nnz;
  if (q * nnz > exp_sum) --q;                                  // floor
  const int64_t d = (static_cast<int64_t>(emax) - q) / 2 - 1;  // emax - q >= 0
  return d < 0 ? 0 : (d > kMaxBandDrop ? kMaxBandDrop : static_cast<int>(d));
}

// The band and code of x in a vector whose bands start at `top` (emax - drop):
// exponent_of(x) > top: band 0, code 127, and |x| >= 2^(top + 1) > 127 2^(top - 6);
// else band = floor((top - exponent_of(x)) / 7), code = floor(|x| 2^(6 + 7 band - top)) in
// [1, 127], so |x| >= code 2^(top - 6 - 7 band). Zero and non-finite x: code 0.
struct band_code {
  int band = 0;
  int code = 0;
};
OZDGEMM_HD band_code magnitude_band(double x, int top) {
  band_code r;
  const int ex = exponent_of(x);
  if (ex == kZeroExponent) return r;
  if (ex > top) {
    r.code = 127;
    return r;
  }
  const decoded d = decode(x);
  r.band = (top - ex) / kBandBits;
  const int t = d.exp2 + (kBandBits - 1) + kBandBits * r.band - top;  // q = floor(mant 2^t)
  const uint64_t q = t >= 0 ? d.mant << t : (-t >= 64 ? 0 : d.mant >> -t);
  r.code = static_cast<int>(q);  // in [1, 127]: 2^(6 - (d mod 7)) <= q < 2^(7 - (d mod 7))
  return r;
}

// magnitude_band's code where it lies in band 0, else 0: the planes' code while kCertBands is 1
// (kernels/band_codes.cuh). A normal x by 32-bit operations on its high word (the code needs 7
// of its 53 bits: floor(floor(m 2^20) / 2^(14 + d)) = floor(m 2^(6 - d)), m its significand, d =
// top - its exponent); zero, subnormal and non-finite x through magnitude_band.
// CertifiedBands.BandZeroCodeIsMagnitudeBands checks it against magnitude_band.
OZDGEMM_HD int band0_code(double x, int top) {
  const auto hi = static_cast<uint32_t>(double_bits(x) >> 32);
  const int be = static_cast<int>((hi >> 20) & 0x7FFu);
  if (be == 0 || be == 0x7FF) {
    const band_code bc = magnitude_band(x, top);
    return bc.band == 0 ? bc.code : 0;
  }
  const int d = top - (be - 1023);
  if (d < 0) return 127;
  if (d >= kBandBits) return 0;
  return static_cast<int>(((hi & 0xFFFFFu) | 0x100000u) >> (20 - (kBandBits - 1) + d));
}

// One entry's share of the l1 norm: ceil(|x| 2^(30 - emax)) in [0, 2^31]. Summed as integers
// (exact for k < 2^32), so the sum does not depend on the order of the additions.
OZDGEMM_HD uint64_t norm1_term(double x, int emax) { return quantize_up(x, emax, kL1Bits); }

// 2^x, exactly: built from its bits in the normal range (every x the scaling produces: the
// bits kept of a vector's largest entry lie within about [-20, 100]), else by ldexp.
OZDGEMM_HD double pow2i(int x) {
  if (x >= -1022 && x <= 1023) return bits_double(static_cast<uint64_t>(x + 1023) << 52);
  return scale_pow2(1.0, x);
}

// The largest double <= x (u64_to_double_up, scaling_rules.hpp, is its twin upward). Below 2^53
// every integer is a double: the conversion alone (the ratio pass's per-element case, where the
// 64-bit round trip cost more than the rest of the bound).
OZDGEMM_HD double u64_to_double_down(uint64_t x) {
  if (x <= (uint64_t{1} << 53)) return static_cast<double>(static_cast<int64_t>(x));
  const double d = u64_to_double_rn(x);
  if (d >= 18446744073709551616.0 || static_cast<uint64_t>(d) > x)
    return bits_double(double_bits(d) - 1);  // d > x >= 0, so d > 0: the next double down
  return d;
}

// na >= ||a||_1 2^-emax from the integer sum of norm1_term (< k 2^31 < 2^63 for k < 2^32).
OZDGEMM_HD double norm_from_sum(uint64_t sum) {
  return scale_pow2(u64_to_double_up(sum), 1 - kL1Bits);
}

// w <= (|A||B|)_ij 2^-(emaxA_i + emaxB_j) from G = sum_d G_d 2^(7 (bands - 1 - d)),
// G_d = sum_{p=0..d} Q_p(A) Q_{d-p}(B)^T: every product of codes is below the product of
// magnitudes by 2^(topA + topB - 12 - 7 (pa + pb)), top = emax - drop, drop_sum = dropA + dropB,
// and the pairs left out are >= 0.
OZDGEMM_HD double band_lower_bound(uint64_t g, int bands, int drop_sum) {
  const double gd = u64_to_double_down(g);
  const int e = -12 - kBandBits * (bands - 1) - drop_sum;
  // gd >= 1 (or 0) times 2^e is exact while 2^e is normal: the product, not ldexp's call.
  return e >= -1022 && e <= 0 ? gd * pow2i(e) : scale_pow2(gd, e);
}

// The bound below from its factors: pa = 2^-(ha + sh), pb = 2^-(hb + sh) (sh = 1 when the
// residues round to nearest, |alpha| <= 1/2; else 0), kd = k, inv_w = RN(1 / w), w > 0:
//   t = nb pa + na pb + k pa pb,   r = (t inv_w) (1 + 2^-50).
// Every product with a power of two is exact (or overflows to +inf, which only rules s out),
// so a fused multiply-add (nvcc contracts) rounds exactly as the separate operations do; the
// two additions, 1 / w, t inv_w and the product with 1 + 2^-50 = 1 + 8u round to nearest, so
// r >= (t / w) (1 - u)^5 (1 + 8u) > t / w. The GPU hoists pa (per row) and inv_w (per element)
// out of its loop over s; the host calls certified_ratio().
OZDGEMM_HD double certified_numerator(double na, double nb, double kd, double pa, double pb) {
  return nb * pa + na * pb + kd * (pa * pb);
}
OZDGEMM_HD double certified_ratio_of(double t, double inv_w) {
  return (t * inv_w) * (1.0 + 0x1p-50);
}
OZDGEMM_HD double certified_ratio_from(double na, double nb, double kd, double pa, double pb,
                                       double inv_w) {
  return certified_ratio_of(certified_numerator(na, nb, kd, pa, pb), inv_w);
}

// The ratio pass's filter (kernels/certify.cu): most elements meet the target by far, and a
// bound with no division and no conversion decides them. Each factor takes its vector's share of
// the band bound's scaling 2^(kBandScale + dropA + dropB), exactly (powers of two):
//   P_i = pa 2^dropA,  N_i = na 2^dropA,  Q_j = pb 2^(dropB + kBandScale),
//   S_j >= nb 2^(dropB + kBandScale) + k Q_j,   T_ij = P_i S_j + N_i Q_j rounded up,
// so that T_ij >= t 2^(kBandScale + dropA + dropB) and t / w <= T_ij / gd (gd: G as the bound's
// w takes it, exact below 2^53, else rounded down). An element passes where
// T_ij <= RD(gd tlo), tlo = RD(target (1 - 2^-40)): then the exact ratio
// (certified_ratio_from, at most (t / w)(1 + 2^-49) plus a subnormal rounding below
// 2^-240, as w >= 2^-826) is at most target (1 - 2^-40)(1 + 2^-49) + 2^-240 < target for every
// target >= 2^-200 (a smaller target passes nothing). An exponent of P or Q outside the normal
// range makes it +inf: those elements fail and take the exact ratio.
// CertifiedRatio.FilterPassesOnlyCertifiedElements checks it with the host's bounds (hd.hpp: one
// step past rounding to nearest); the GPU's directed roundings are checked by the certified
// identity tests (the same s as the host reference).
inline constexpr int kBandScale = 12 + kBandBits * (kCertBands - 1);  // band_lower_bound's -e

OZDGEMM_HD double pow2i_or_inf(int x) {
  return x >= -1022 && x <= 1023 ? pow2i(x) : __builtin_inf();
}

struct certified_row_scaled {
  double p = 0.0, n = 0.0;  // P_i, N_i
};
struct certified_col_scaled {
  double s = 0.0, q = 0.0;  // S_j, Q_j; a column that takes no part: 0, 0 (T = 0 passes)
};
// na: the normalised l1 norm (norm_from_sum), h: the exponent of pa (ha + sh), drop: the band
// drop. na >= 2^-30 and drop <= kMaxBandDrop: N is exact.
OZDGEMM_HD certified_row_scaled certified_row_factors(double na, int h, int drop) {
  return {pow2i_or_inf(drop - h), na * pow2i(drop)};
}
OZDGEMM_HD certified_col_scaled certified_col_factors(double nb, double kd, int h, int drop) {
  const double q = pow2i_or_inf(drop + kBandScale - h);
  return {add_up(nb * pow2i(drop + kBandScale), kd * q), q};  // kd q: exact or +inf
}
OZDGEMM_HD double certified_scaled_numerator(const certified_row_scaled& r,
                                             const certified_col_scaled& c) {
  return fma_up(r.p, c.s, mul_up(r.n, c.q));
}
OZDGEMM_HD double certified_filter_target(double target) {
  return target >= 0x1p-200 && target <= 1.0e300 ? mul_down(target, 1.0 - 0x1p-40) : -1.0;
}
// G of an element, exact below 2^32 (the band GEMM's INT32 sums) with one addition instead of
// a conversion: the double with G in its low mantissa bits, less 2^52.
OZDGEMM_HD double u32_to_double(uint32_t g) {
  return bits_double(0x4330000000000000ull | g) - 0x1p52;
}
OZDGEMM_HD bool certified_filter_passes(double t_scaled, double gd, double tlo) {
  return t_scaled <= mul_down(gd, tlo);
}
// The passed element with the largest T / gd, compared by cross products: rounding to nearest
// is monotone, so each replacement is a true increase and an element not taken is within
// (1 + 2^-51.9) of the one kept (or 2^-1074 apart where the products are subnormal). bound() is
// then an upper bound of the exact ratio of every element added (the 2^-240 covers the exact
// ratio's subnormal rounding), and at most the target (each is below it).
struct certified_filter_max {
  double t = 0.0, g = 1.0;
  OZDGEMM_HD void add(double t_scaled, double gd) {
    if (mul_rn(t_scaled, g) > mul_rn(t, gd)) {
      t = t_scaled;
      g = gd;
    }
  }
  OZDGEMM_HD double bound(double target) const {
    if (t == 0.0) return 0.0;
    const double r = add_up(mul_up(div_up(t, g), 1.0 + 0x1p-44), 0x1p-240);
    return r < target ? r : target;
  }
};

// An upper bound of T_ij / (|A||B|)_ij for the normalised norms na_i, nb_j, depth k, bits kept
// ha, hb, lower bound w > 0, and the rounding of the residues (nearest: |alpha| <= 1/2).
OZDGEMM_HD double certified_ratio(double na, double nb, int64_t k, int ha, int hb, double w,
                                  bool nearest) {
  const int sh = nearest ? 1 : 0;
  return certified_ratio_from(na, nb, static_cast<double>(k), pow2i(-ha - sh), pow2i(-hb - sh),
                              1.0 / w);
}

}  // namespace ozdgemm::detail
