// How a vector's power-of-two scale is chosen, in both scaling modes.
//
// Notation: a = a row of op(A) (or a column of op(B)), emax = floor(log2 max|a_l|), and the
// scaled integers are A'_l = a_l 2^e rounded to an integer: to nearest when
// rounds_to_nearest() below holds (every s that matters), else toward zero. The CRT recovers A'B'
// exactly iff every |sum_l A'_il B'_lj| <= L = floor((1/2 - 2^-31) M) (moduli.hpp). Both modes
// prove sum_l |A'_il| |B'_lj| <= L, which is stronger.
//
// Scale invariance: every quantity below is computed from (emax, integers that depend only
// on a_l 2^-emax). Multiplying a by 2^f shifts emax by f and leaves those integers, and
// hence 2^e a, unchanged: the shift moves by exactly -f and the result by exactly 2^f, for
// any f that keeps the inputs clear of overflow and subnormal underflow.
//
// fast (Cauchy-Schwarz). q_l = ceil(|a_l| 2^(P-1-emax)) is an integer in [0, 2^P] with
//   |a_l| <= q_l 2^(emax+1-P), so ||a||_2 <= 2^(emax+1-P) sqrt(Q), Q = sum q_l^2 (exact, in
//   uint64: Q < k 2^(2P) < 2^63 for k < 2^31). Choose g as the largest integer with
//   Q 4^g <= L (Q rounded up to a double, comparisons exact) and e = g - emax - 1 + P. Then
//   ||A'_i||_2 <= 2^e ||a_i||_2 <= 2^g sqrt(Q_i) <= sqrt(L), likewise for B'_j, and by
//   Cauchy-Schwarz sum_l |A'_il||B'_lj| <= ||A'_i|| ||B'_j|| <= L. Each |A'_l| <= sqrt(L)
//   < 2^78 as the residue code requires.
//
// accurate (one extra INT8 GEMM). u_l = ceil(q16_l * 127 / 2^16) with q16_l as above for
//   P = 16, so u_l in [0, 127] and |a_l| <= u_l 2^(emax+1) / 127. Then with
//   U = u(A)^T u(B) (exact INT32 GEMM), sum_l |a_il||b_lj| <= 2^(emaxA_i+emaxB_j+2) U_ij/127^2.
//   Write e = h - emax - 1; the condition becomes 2^(hA_i + hB_j) U_ij <= 127^2 L =: L2.
//   Columns first, half the budget each: hB_j = largest h with 4^h max_i U_ij <= L2. Rows
//   then take the rest exactly: hA_i = largest h with 2^h max_j (2^hB_j U_ij) <= L2.
//   Both are capped at 78 (a zero U row or column leaves them free; the cap keeps
//   |A'| <= 2^h u/127 < 2^78).
//
// Rounding to nearest. The proofs above only use |A'_l| <= 2^e |a_l|, which truncation gives.
// Rounding to nearest halves the error per element (|a_l 2^e - A'_l| <= 1/2 instead of < 1)
// and removes truncation's bias (same-sign data: the error grows like sqrt(k), not k), but
// can give |A'_l| = ceil(|a_l| 2^e). The bounds still hold when each vector's upper bound of
// |a_l| 2^e is an integer, as an integer >= |a_l| 2^e is >= ceil(|a_l| 2^e):
//   fast: 2^e |a_l| <= 2^g q_l, an integer when g >= 0;
//   accurate: 2^e |a_l| <= 2^(h-16) q16_l <= 2^h u_l / 127, an integer when h >= 16.
// Both hold for every vector once L >= k 2^32: Q <= k 2^32 (q_l <= 2^16), so Q 4^0 <= L gives
// g >= 0; max_i U_ij <= 127^2 k, so 4^16 max U <= 127^2 L gives hB_j >= 16, and then
// 2^16 (2^hB_j U_ij) <= 2^(16 - hB_j) 127^2 L <= 127^2 L for every j gives hA_i >= 16.
// L >= k 2^32 holds from s = 7 (k <= 2^22) or s = 8 (k <= 2^30); below, residues truncate.
#pragma once

#include "core/element.hpp"
#include "core/hd.hpp"

namespace ozdgemm::detail {

enum class scaling_mode { fast, accurate };

inline constexpr int kNormBits = 16;
inline constexpr int kBoundBits = 16;

OZDGEMM_HD uint64_t norm_square_term(double x, int emax) {
  const uint64_t q = quantize_up(x, emax, kNormBits);
  return q * q;
}

OZDGEMM_HD int8_t bound_quantize(double x, int emax) {
  const uint64_t q = quantize_up(x, emax, kBoundBits);
  return static_cast<int8_t>((q * 127 + ((uint64_t{1} << kBoundBits) - 1)) >> kBoundBits);
}

// Smallest double >= x.
OZDGEMM_HD double u64_to_double_up(uint64_t x) {
  double d = u64_to_double_rn(x);
  if (static_cast<uint64_t>(d) < x) d = bits_double(double_bits(d) + 1);  // x < 2^63 here
  return d;
}

// Whether A', B' are rounded to nearest (true) or toward zero for moduli table tb and depth k:
// L >= k 2^32, compared exactly (k 2^32 is a double; tb.bound is L rounded down).
OZDGEMM_HD bool rounds_to_nearest(const modulus_table& tb, int64_t k) {
  return static_cast<double>(k) * 4294967296.0 <= tb.bound;
}

OZDGEMM_HD int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Largest g with v * 2^(step g) <= limit, for v > 0 and limit > 0 normal doubles.
// Every comparison is exact: scaling by a power of two in range is exact.
OZDGEMM_HD int largest_shift(double v, double limit, int step) {
  int g = floor_div(exponent_of(limit) - exponent_of(v), step);
  while (scale_pow2(v, step * (g + 1)) <= limit) ++g;
  while (scale_pow2(v, step * g) > limit) --g;
  return g;
}

// The rules below depend on the moduli only through tb.bound (fast) or tb.bound_accurate
// (accurate); the overloads taking that double let the automatic moduli count evaluate every s
// in one kernel without passing 19 tables.
OZDGEMM_HD int fast_exponent(int emax, uint64_t sum_q2, double bound) {
  if (emax == kZeroExponent || sum_q2 == 0) return 0;
  const int g = largest_shift(u64_to_double_up(sum_q2), bound, 2);
  return g - emax - 1 + kNormBits;
}

OZDGEMM_HD int fast_exponent(int emax, uint64_t sum_q2, const modulus_table& tb) {
  return fast_exponent(emax, sum_q2, tb.bound);
}

// hB_j from the column maximum of U (exact, as a double).
OZDGEMM_HD int accurate_column_headroom(double col_max_u, double bound_accurate) {
  if (col_max_u == 0.0) return kMaxScaledBits;
  const int h = largest_shift(col_max_u, bound_accurate, 2);
  return h < kMaxScaledBits ? h : kMaxScaledBits;
}

OZDGEMM_HD int accurate_column_headroom(double col_max_u, const modulus_table& tb) {
  return accurate_column_headroom(col_max_u, tb.bound_accurate);
}

// hA_i from max_j 2^hB_j U_ij.
OZDGEMM_HD int accurate_row_headroom(double row_max_scaled_u, double bound_accurate) {
  if (row_max_scaled_u == 0.0) return kMaxScaledBits;
  const int h = largest_shift(row_max_scaled_u, bound_accurate, 1);
  return h < kMaxScaledBits ? h : kMaxScaledBits;
}

OZDGEMM_HD int accurate_row_headroom(double row_max_scaled_u, const modulus_table& tb) {
  return accurate_row_headroom(row_max_scaled_u, tb.bound_accurate);
}

OZDGEMM_HD int accurate_exponent(int headroom, int emax) {
  return emax == kZeroExponent ? 0 : headroom - emax - 1;
}

}  // namespace ozdgemm::detail
