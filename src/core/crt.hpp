// CRT reconstruction: from the s residues r_t = X mod m_t of one output element to
// RN(X) * 2^shift, exactly for |X| <= L (moduli.hpp).
//
// X = S - round(S/M) M with S = sum_t r_t W_t, where r_t is any representative of X mod m_t in
// [0, 2 m_t) (the kernel skips the last conditional subtraction of the reduction: crt_residue).
// S/M = sum_t r_t inv_t / m_t is estimated in FP64: the s <= 20 terms are < 512, the partial
// sums < 2^14, so each fma rounds by at most 2^-40 and each weight_frac error adds < 2^-45: the
// estimate is within 2^-35 of S/M, while S/M lies within 1/2 - 2^-31 of an integer because
// S = X + kM and |X| <= L. round() is therefore exact, whatever order or fusion the two
// compilers use. The rest is integer work and one correctly rounded conversion, so the result
// is a function of X alone, whichever representatives r_t were given.
//
// The integer work is done mod 2^(32 Limbs), Limbs = limbs_for(s), the fewest 32-bit limbs with
// M < 2^(32 Limbs): then |X| <= L < M/2 < 2^(32 Limbs - 1), so X mod 2^(32 Limbs) read as a
// two's complement number is X itself. S (up to s 511 M, 14 bits more than M) is never formed in
// full, and fewer limbs mean fewer multiply-adds per residue: s = 14 works in 4 limbs, not 5.
// Any Limbs >= limbs_for(s) gives the same bits (the tests run every such count).
#pragma once

#include "core/hd.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

// A representative of p mod m_t in [0, 2 m_t), for crt_accumulator::add: product_residue()
// without its final conditional subtraction (recip underestimates the quotient by at most
// one), three instructions fewer per residue. |p| < 2^31 - 2^15 as for product_residue().
OZDGEMM_HD uint32_t crt_residue(int32_t p, const modulus_table& tb, int t) {
  const uint32_t x = static_cast<uint32_t>(p) + tb.offset[t];
  return x - umulhi32(x, tb.recip[t]) * tb.m[t];
}

template <int Limbs>
struct crt_accumulator {
  static_assert(Limbs >= 1 && Limbs <= kLimbs, "the table holds kLimbs limbs");

  // Column sums of r_t W_t[c] (each term < 2^41, so < 20 * 2^41: no overflow). The top column
  // is only needed mod 2^32: a 32-bit sum, one plain multiply-add per residue.
  uint64_t low[Limbs > 1 ? Limbs - 1 : 1];
  uint32_t top;
  double frac;

  OZDGEMM_HD crt_accumulator() : low{}, top(0), frac(0.0) {}

  // r = X mod m_t, any representative in [0, 2 m_t).
  OZDGEMM_HD void add(uint32_t r, const modulus_table& tb, int t) {
OZDGEMM_UNROLL
    for (int c = 0; c < Limbs - 1; ++c) low[c] += static_cast<uint64_t>(r) * tb.weight[t][c];
    top += r * tb.weight[t][Limbs - 1];
    frac = fma_rn(static_cast<double>(r), tb.weight_frac[t], frac);
  }

  // RN(X) * 2^shift where X is the symmetric representative of S mod M.
  OZDGEMM_HD double finish(const modulus_table& tb, int shift) const {
#if defined(__CUDA_ARCH__)
    const uint32_t q = static_cast<uint32_t>(__double2int_rn(frac));
#else
    const uint32_t q = static_cast<uint32_t>(__builtin_lrint(frac));
#endif
    // x = S - q M = S + q (2^(32 kLimbs) - M) mod 2^(32 Limbs), one carry pass. q < 20 * 512,
    // so a column is < 2^46 + 2^46 + 2^15 before its carry goes on.
    uint32_t x[Limbs];
    uint64_t carry = 0;
OZDGEMM_UNROLL
    for (int c = 0; c < Limbs - 1; ++c) {
      const uint64_t v = low[c] + static_cast<uint64_t>(q) * tb.neg_modulus[c] + carry;
      x[c] = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    x[Limbs - 1] = top + q * tb.neg_modulus[Limbs - 1] + static_cast<uint32_t>(carry);

    const bool negative = (x[Limbs - 1] >> 31) != 0;
    if (negative) {  // magnitude = ~x + 1
      uint64_t c1 = 1;
OZDGEMM_UNROLL
      for (int c = 0; c < Limbs; ++c) {
        const uint64_t v = static_cast<uint64_t>(~x[c]) + c1;
        x[c] = static_cast<uint32_t>(v);
        c1 = v >> 32;
      }
    }
    // Normalise so that the top limb is nonzero; constant indices keep x in registers.
    int shifted_limbs = 0;
OZDGEMM_UNROLL
    for (int it = 0; it < Limbs - 1; ++it) {
      if (x[Limbs - 1] == 0) {
OZDGEMM_UNROLL
        for (int c = Limbs - 1; c > 0; --c) x[c] = x[c - 1];
        x[0] = 0;
        ++shifted_limbs;
      }
    }
    if (x[Limbs - 1] == 0) return 0.0;  // X == 0 (+0, like an exact zero sum)
    // The three top limbs, zeros below the lowest (as if X had more low limbs, all zero).
    const uint32_t hi = x[Limbs - 1];
    uint32_t mid = 0, lo = 0, rest = 0;
    if constexpr (Limbs >= 2) mid = x[Limbs - 2];
    if constexpr (Limbs >= 3) lo = x[Limbs - 3];
OZDGEMM_UNROLL
    for (int c = 0; c < Limbs - 3; ++c) rest |= x[c];
    const int lz = clz64(static_cast<uint64_t>(hi)) - 32;
    const uint64_t head = (static_cast<uint64_t>(hi) << 32) | mid;
    const uint64_t window = lz == 0 ? head : (head << lz) | (lo >> (32 - lz));
    const uint32_t below = lz == 0 ? lo : (lo << lz);
    const bool sticky = (below | rest) != 0;
    // window holds the top 64 bits; a sticky bit 11 places below the rounding position
    // makes the single rounding of the conversion exact round-to-nearest of X. mag and e do
    // not depend on Limbs: mag = RN(X) 2^(63 - p) and e = p - 63 + shift, p = X's top bit.
    const double mag = u64_to_double_rn(window | (sticky ? 1u : 0u));
    const int e = 32 * (Limbs - 1 - shifted_limbs) - 32 - lz + shift;
    const double r = scale_pow2(mag, e);
    return negative ? -r : r;
  }
};

// f(crt_accumulator<limbs>()) for a limb count known only at run time (the host reference,
// with limbs = limbs_for(s); a kernel knows s, and so the count, at compile time).
template <class F>
auto with_crt_accumulator(int limbs, F&& f) {
  switch (limbs) {
    case 1: return f(crt_accumulator<1>());
    case 2: return f(crt_accumulator<2>());
    case 3: return f(crt_accumulator<3>());
    case 4: return f(crt_accumulator<4>());
    default: return f(crt_accumulator<kLimbs>());
  }
}

// C = alpha * v + beta * C with BLAS semantics: beta == 0 means C is not read.
OZDGEMM_HD double apply_alpha_beta(double v, double alpha, double beta, const double* c) {
  if (beta == 0.0) return mul_rn(alpha, v);
  return fma_rn(alpha, v, mul_rn(beta, *c));
}

}  // namespace ozdgemm::detail
