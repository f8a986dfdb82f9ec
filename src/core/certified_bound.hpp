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

// An upper bound of certified_ratio_of(t, 1 / band_lower_bound(g, kCertBands, drop_sum)) with
// no FP64 division, or 0 where it gives none. With e = 12 + 7 (kCertBands - 1) + drop_sum the
// bound's w is g 2^-e (exact for g < 2^53, else g rounded down: 2^-52 relative); c, the
// single-precision reciprocal of g rounded to single precision, is within 2^-23 of 1 / g, and
// q = RN(RN(t c 2^e) (1 + 2^-20)) is at least (t / w) (1 + 2^-20.2), while the ratio is at most
// (t / w) (1 + 2^-48) (certified_ratio_from's roundings): q is above it. Needs c 2^e and q
// normal doubles (0 otherwise). The ratio pass decides most elements with it
// (kernels/certify.cu); CertifiedRatio.SinglePrecisionBoundIsAboveTheRatio checks it.
OZDGEMM_HD double certified_ratio_above(uint64_t g, int drop_sum, double t) {
  const int e = 12 + kBandBits * (kCertBands - 1) + drop_sum;
  if (g == 0 || e > 1023 || e < -900) return 0.0;
#if defined(__CUDA_ARCH__)
  const float c = __frcp_rn(__ull2float_rn(static_cast<unsigned long long>(g)));
#else
  const float c = 1.0f / static_cast<float>(g);  // both rounded to nearest (IEEE default)
#endif
  const double q = (t * (static_cast<double>(c) * pow2i(e))) * (1.0 + 0x1p-20);
  return q >= 0x1p-900 ? q : 0.0;
}

// An upper bound of T_ij / (|A||B|)_ij for the normalised norms na_i, nb_j, depth k, bits kept
// ha, hb, lower bound w > 0, and the rounding of the residues (nearest: |alpha| <= 1/2).
OZDGEMM_HD double certified_ratio(double na, double nb, int64_t k, int ha, int hb, double w,
                                  bool nearest) {
  const int sh = nearest ? 1 : 0;
  return certified_ratio_from(na, nb, static_cast<double>(k), pow2i(-ha - sh), pow2i(-hb - sh),
                              1.0 / w);
}

}  // namespace ozdgemm::detail
