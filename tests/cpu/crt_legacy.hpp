// The CRT finish as it was before the limb count became a template parameter (commit ef5ddd7:
// S accumulated in five 64-bit column sums, X = S - q M formed in six 32-bit limbs). Kept here
// verbatim, for the tests only, as the reference that every reduced-limb crt_accumulator must
// match bit for bit: the change is a speed-up and may not move a single output bit.
#pragma once

#include "core/hd.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::test {

using detail::clz64;
using detail::fma_rn;
using detail::kLimbs;
using detail::modulus_table;
using detail::scale_pow2;
using detail::u64_to_double_rn;

inline constexpr int kSumLimbs = 6;

struct legacy_crt_accumulator {
  uint64_t limb[kLimbs];  // each < 20 * 2^40: no overflow
  double frac;

  legacy_crt_accumulator() : limb{0, 0, 0, 0, 0}, frac(0.0) {}

  void add(uint32_t r, const modulus_table& tb, int t) {
    for (int c = 0; c < kLimbs; ++c) limb[c] += static_cast<uint64_t>(r) * tb.weight[t][c];
    frac = fma_rn(static_cast<double>(r), tb.weight_frac[t], frac);
  }

  // RN(X) * 2^shift where X is the symmetric representative of S mod M.
  double finish(const modulus_table& tb, int shift) const {
    uint32_t x[kSumLimbs];
    uint64_t carry = 0;
    for (int c = 0; c < kLimbs; ++c) {
      const uint64_t v = limb[c] + carry;
      x[c] = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    x[kLimbs] = static_cast<uint32_t>(carry);

    const uint32_t q = static_cast<uint32_t>(__builtin_lrint(frac));
    // x -= q * M, in two's complement over kSumLimbs limbs.
    uint64_t qcarry = 0;
    int64_t borrow = 0;
    for (int c = 0; c < kSumLimbs; ++c) {
      const uint64_t qm = (c < kLimbs ? static_cast<uint64_t>(q) * tb.modulus[c] : 0) + qcarry;
      qcarry = qm >> 32;
      const int64_t d = static_cast<int64_t>(x[c]) - static_cast<int64_t>(qm & 0xFFFFFFFFu) - borrow;
      borrow = d < 0 ? 1 : 0;
      x[c] = static_cast<uint32_t>(d + (borrow << 32));
    }
    const bool negative = (x[kSumLimbs - 1] >> 31) != 0;
    if (negative) {  // magnitude = ~x + 1
      uint64_t c1 = 1;
      for (int c = 0; c < kSumLimbs; ++c) {
        const uint64_t v = static_cast<uint64_t>(~x[c]) + c1;
        x[c] = static_cast<uint32_t>(v);
        c1 = v >> 32;
      }
    }
    // Normalise so that the top limb is nonzero; constant indices keep x in registers.
    int shifted_limbs = 0;
    for (int it = 0; it < kSumLimbs - 1; ++it) {
      if (x[kSumLimbs - 1] == 0) {
        for (int c = kSumLimbs - 1; c > 0; --c) x[c] = x[c - 1];
        x[0] = 0;
        ++shifted_limbs;
      }
    }
    if (x[kSumLimbs - 1] == 0) return 0.0;  // X == 0 (+0, like an exact zero sum)
    const int lz = clz64(static_cast<uint64_t>(x[5])) - 32;
    const uint64_t top = (static_cast<uint64_t>(x[5]) << 32) | x[4];
    const uint64_t window = lz == 0 ? top : (top << lz) | (x[3] >> (32 - lz));
    const uint32_t below = lz == 0 ? x[3] : (x[3] << lz);
    const bool sticky = (below | x[2] | x[1] | x[0]) != 0;
    // window holds the top 64 bits; a sticky bit 11 places below the rounding position
    // makes the single rounding of the conversion exact round-to-nearest of X.
    const double mag = u64_to_double_rn(window | (sticky ? 1u : 0u));
    const int e = 32 * (kSumLimbs - 1 - shifted_limbs) - 32 - lz + shift;
    const double r = scale_pow2(mag, e);
    return negative ? -r : r;
  }
};

}  // namespace ozdgemm::test
