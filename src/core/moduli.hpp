// The moduli of Ozaki Scheme II and every constant derived from them.
//
// A modulus_table is a plain value: it is built once per moduli count on the host and passed
// by value to the kernels (it lives in the kernel parameter bank, so a warp reading entry t
// with a uniform t costs one constant-cache access).
#pragma once

#include <cstdint>

namespace ozdgemm::detail {

inline constexpr int kMinModuli = 2;
inline constexpr int kMaxModuli = 20;

// Pairwise coprime, largest first; a moduli count s uses the first s of them.
inline constexpr uint32_t kModuli[kMaxModuli] = {256, 255, 253, 251, 247, 241, 239,
                                                 233, 229, 227, 223, 217, 211, 199,
                                                 197, 193, 191, 181, 179, 173};

// M = prod m_t < 2^156 for s = 20, so M and the CRT weights fit five 32-bit limbs.
inline constexpr int kLimbs = 5;

// Exact bit length of M = m_0 ... m_{s-1}, computed in 32-bit limbs at compile time.
constexpr int modulus_bits(int s) {
  uint32_t limb[kLimbs + 1] = {1};
  for (int t = 0; t < s; ++t) {
    uint64_t carry = 0;
    for (uint32_t& l : limb) {
      const uint64_t p = static_cast<uint64_t>(l) * kModuli[t] + carry;
      l = static_cast<uint32_t>(p);
      carry = p >> 32;
    }
  }
  for (int c = kLimbs; c >= 0; --c) {
    if (limb[c] == 0) continue;
    int bits = 32;
    while ((limb[c] >> (bits - 1)) == 0) --bits;
    return 32 * c + bits;
  }
  return 0;
}

// The 32-bit limbs the CRT of s moduli works in: the fewest with M < 2^(32 limbs). The CRT
// needs no more (crt.hpp: the result |X| < M/2 is taken mod 2^(32 limbs)); the kernel and the
// host reference both use exactly this count, and the tests check it against GMP.
// s = 2..4: 1 limb, 5..8: 2, 9..12: 3, 13..16: 4, 17..20: 5 (M has 16, 40, 72, 103, 133 bits at
// the first count of each group, 32, 64, 95, 126, 156 at the last).
constexpr int limbs_for(int s) { return (modulus_bits(s) + 31) / 32; }
static_assert(limbs_for(kMaxModuli) == kLimbs, "the table holds exactly the limbs s = 20 needs");

// Each INT8 operand is truncated to an integer |A'| < 2^kMaxScaledBits, held as four 20-bit
// chunks (see residue.hpp). The scaling rules keep every element below this.
inline constexpr int kMaxScaledBits = 78;

struct modulus_table {
  int s;
  uint32_t m[kMaxModuli];
  uint32_t recip[kMaxModuli];         // floor(2^32 / m_t): quotient estimate in mod_small
  uint32_t chunk_pow[kMaxModuli][4];  // 2^(20 c) mod m_t
  uint32_t offset[kMaxModuli];        // smallest multiple of m_t >= 2^31
  uint32_t weight[kMaxModuli][kLimbs];  // W_t = (M/m_t) * ((M/m_t)^-1 mod m_t) < M
  double weight_frac[kMaxModuli];     // W_t / M = inv_t / m_t, rounded to nearest
  uint32_t modulus[kLimbs];           // M
  // 2^(32 kLimbs) - M: its first n limbs are -M mod 2^(32 n), for every n <= kLimbs, so the CRT
  // subtracts q M with multiply-adds alone, in whichever limb count it works.
  uint32_t neg_modulus[kLimbs];
  // The CRT recovers every |X| <= L = floor(M/2) - floor(M/2^31) - 1 <= (1/2 - 2^-31) M, an
  // exact integer; the 2^-31 margin keeps round(S/M) unambiguous although S/M is only
  // estimated in floating point (error < 2^-35, see crt.hpp). The scaling rules compare
  // against L rounded down to a double (fast) and 127^2 L rounded down (accurate, which counts
  // in units of 1/127^2); each is <= its exact value, so either mode proves |X| <= L.
  double bound;
  double bound_accurate;
  double log2_modulus;    // log2 M, for reporting
};

// The table for s moduli, s in [kMinModuli, kMaxModuli]; built on first use, thread-safe.
const modulus_table& moduli_for(int s);

}  // namespace ozdgemm::detail
