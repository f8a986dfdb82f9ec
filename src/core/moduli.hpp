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

// M = prod m_t < 2^156 for s = 20, so M and the CRT weights fit five 32-bit limbs; the
// weighted residue sum S < s * 256 * M < 2^169 needs a sixth.
inline constexpr int kLimbs = 5;
inline constexpr int kSumLimbs = 6;

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
