// Exact integer views of one FP64 element: its exponent, its upward quantisation for the
// scaling bounds, and the integer x * 2^e rounds to for the residues. No floating-point
// arithmetic happens here; every result is a function of the bits of x alone, so the host
// reference and the kernels agree exactly, and scaling x by 2^f shifts each exponent by f.
#pragma once

#include "core/hd.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

// Exponent of a zero vector: "no scale needed".
inline constexpr int kZeroExponent = -100000;

// Flags a vector (row of op(A), column of op(B)) with non-finite entries.
inline constexpr uint8_t kHasNaN = 1, kHasPosInf = 2, kHasNegInf = 4;

struct decoded {
  uint64_t mant;  // |x| = mant * 2^exp2, mant < 2^53
  int exp2;
  bool negative;
  bool finite;
};

OZDGEMM_HD decoded decode(double x) {
  const uint64_t b = double_bits(x);
  const int be = static_cast<int>((b >> 52) & 0x7FF);
  const uint64_t frac = b & ((uint64_t{1} << 52) - 1);
  decoded d;
  d.negative = (b >> 63) != 0;
  d.finite = be != 0x7FF;
  d.mant = be != 0 ? (frac | (uint64_t{1} << 52)) : frac;
  d.exp2 = be != 0 ? be - 1075 : -1074;
  return d;
}

// Non-finite class bit of x (0 when finite).
OZDGEMM_HD uint8_t nonfinite_flag(double x) {
  const decoded d = decode(x);
  if (d.finite) return 0;
  if (d.mant != (uint64_t{1} << 52)) return kHasNaN;  // exp 0x7FF with a payload
  return d.negative ? kHasNegInf : kHasPosInf;
}

// floor(log2 |x|) for finite nonzero x (subnormals included); kZeroExponent for zero and for
// non-finite x, which the scaling ignores.
OZDGEMM_HD int exponent_of(double x) {
  const decoded d = decode(x);
  if (!d.finite || d.mant == 0) return kZeroExponent;
  return d.exp2 + 63 - clz64(d.mant);
}

// ceil(|x| * 2^(bits - 1 - emax)) for finite x with |x| < 2^(emax + 1): an integer in
// [0, 2^bits] that bounds |x| from above in units of 2^(emax + 1 - bits).
OZDGEMM_HD uint64_t quantize_up(double x, int emax, int bits) {
  const decoded d = decode(x);
  if (!d.finite || d.mant == 0) return 0;
  const int t = d.exp2 + bits - 1 - emax;
  if (t >= 0) return d.mant << t;
  const int rs = -t;
  if (rs >= 60) return 1;  // mant < 2^53: a nonzero value below one unit rounds up to one
  return (d.mant + (uint64_t{1} << rs) - 1) >> rs;
}

// |x 2^e| rounded to an integer, as four 20-bit chunks, plus the sign of x. nearest: to
// nearest, ties away from zero (the residues' rounding once the scaling allows it,
// scaling_rules.hpp); otherwise toward zero. The caller guarantees |x| 2^e < 2^kMaxScaledBits
// (the scaling bound); non-finite x gives zero.
struct scaled_int {
  uint32_t c[4];
  bool negative;
};

OZDGEMM_HD scaled_int scale_to_int(double x, int e, bool nearest) {
  const decoded d = decode(x);
  scaled_int r{{0, 0, 0, 0}, d.negative};
  if (!d.finite || d.mant == 0) return r;
  const int sft = d.exp2 + e;
  unsigned __int128 v;
  if (sft >= 0) {
    v = static_cast<unsigned __int128>(d.mant) << (sft < 80 ? sft : 80);
  } else {
    // |x| 2^e = mant 2^-rs: keep one more bit than the integer part, add it when rounding
    // to nearest, drop it. mant < 2^53, so rs >= 54 gives |x| 2^e < 1/2: zero either way.
    const int rs = -sft;
    v = rs >= 54 ? 0 : ((d.mant >> (rs - 1)) + (nearest ? 1u : 0u)) >> 1;
  }
  constexpr uint32_t kMask = (1u << 20) - 1;
  r.c[0] = static_cast<uint32_t>(v) & kMask;
  r.c[1] = static_cast<uint32_t>(v >> 20) & kMask;
  r.c[2] = static_cast<uint32_t>(v >> 40) & kMask;
  r.c[3] = static_cast<uint32_t>(v >> 60) & kMask;
  return r;
}

// x mod m for any 32-bit x and 2 <= m <= 256. recip = floor(2^32/m) underestimates the
// quotient by at most one, so one conditional subtraction finishes the job.
OZDGEMM_HD uint32_t mod_small(uint32_t x, uint32_t m, uint32_t recip) {
  const uint32_t q = umulhi32(x, recip);
  uint32_t r = x - q * m;
  return r >= m ? r - m : r;
}

// The INT8 residue of the scaled integer V (scale_to_int) modulo m_t: the representative of V in
// [-128, m - 128), that is ((V + 128) mod m) - 128, which fits int8 for every m <= 256 (for
// m = 256 it is V's low byte read as int8). This offset range, rather than the symmetric one,
// lets the kernels finish four residues with one XOR (kernels/residue_table.hpp); the INT8
// GEMMs only need |residue| <= 128, and the CRT only the class mod m. The chunk sum is < 2^20
// (1 + 3 * 255) < 2^30: one reduction.
OZDGEMM_HD int8_t int8_residue(const scaled_int& v, const modulus_table& tb, int t) {
  const uint32_t m = tb.m[t];
  const uint32_t sum = v.c[0] + v.c[1] * tb.chunk_pow[t][1] + v.c[2] * tb.chunk_pow[t][2] +
                       v.c[3] * tb.chunk_pow[t][3];
  uint32_t r = mod_small(sum, m, tb.recip[t]);  // |V| mod m
  if (v.negative && r != 0) r = m - r;          // V mod m
  r = mod_small(r + 128, m, tb.recip[t]);       // (V + 128) mod m
  return static_cast<int8_t>(static_cast<int>(r) - 128);
}

// Non-negative residue of an exact INT32 GEMM output. |p| < 2^31 - 2^15 (see the k-block
// limit), so p + offset_t lies in [0, 2^32) and the unsigned wrap-around add is exact.
OZDGEMM_HD uint32_t product_residue(int32_t p, const modulus_table& tb, int t) {
  return mod_small(static_cast<uint32_t>(p) + tb.offset[t], tb.m[t], tb.recip[t]);
}

}  // namespace ozdgemm::detail
