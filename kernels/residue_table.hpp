// The residue arithmetic of the plane writer, reorganised for throughput: the same integers
// as int8_residue (core/element.hpp) with fewer instructions per plane. Host and device
// (the CPU suite checks it against int8_residue for every moduli count).
//
// Per element, once: the scaled integer V (scale_to_int) as four signed 20-bit chunks (the sign
// folded in, so the planes never look at it). Per plane t with odd m: y = chunk sum + bias_t with
// bias_t = (a multiple of m >= 2^30) + 128, so y lies in [0, 2^31) and y = V + 128 (mod m).
// y < 2^31 and m in (128, 256) make q = umulhi(y, ceil(2^39 / m)) >> 7 exactly floor(y / m)
// (the magic's error times y stays below 2^39), so r = y - q m is (V + 128) mod m in [0, m)
// with no correction step, and the INT8 residue r - 128 is the byte r ^ 0x80: one XOR per
// four packed bytes. Plane 0 has m = 256: the low byte of the signed chunk 0 is V mod 256
// read as int8, int8_residue's representative there.
#pragma once

#include <cstdint>

#include "core/element.hpp"
#include "core/hd.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

// The generic plane path below needs odd moduli after the first, which must be 256.
constexpr bool first_modulus_is_256_rest_odd() {
  if (kModuli[0] != 256) return false;
  for (int t = 1; t < kMaxModuli; ++t)
    if (kModuli[t] % 2 == 0) return false;
  return true;
}
static_assert(first_modulus_is_256_rest_odd(), "residue_offset assumes m_0 = 256, the rest odd");

// The exact quotient of residue_offset needs every odd modulus above 128.
constexpr bool odd_moduli_above_128() {
  for (int t = 1; t < kMaxModuli; ++t)
    if (kModuli[t] <= 128) return false;
  return true;
}
static_assert(odd_moduli_above_128(), "residue_offset's magic needs m > 128");

struct residue_consts {
  uint32_t p1, p2, p3;  // 2^(20 c) mod m
  uint32_t bias;        // ceil(2^30 / m) m + 128
  uint32_t magic;       // ceil(2^39 / m) < 2^32 (m > 128)
  uint32_t neg_m;       // 2^32 - m: y - q m as one multiply-add, with no negation
};

// Kernel parameter (6 x 4 x 20 bytes); entry 0 (m = 256) is not read.
struct residue_table {
  int s;
  residue_consts c[kMaxModuli];
};

inline residue_table make_residue_table(const modulus_table& tb) {
  residue_table r{};
  r.s = tb.s;
  for (int t = 0; t < tb.s; ++t) {
    const uint32_t m = tb.m[t];
    residue_consts& c = r.c[t];
    c.p1 = tb.chunk_pow[t][1];
    c.p2 = tb.chunk_pow[t][2];
    c.p3 = tb.chunk_pow[t][3];
    c.bias = ((uint32_t{1} << 30) + m - 1) / m * m + 128;
    c.magic = static_cast<uint32_t>(((uint64_t{1} << 39) + m - 1) / m);
    c.neg_m = 0u - m;
  }
  return r;
}

// V = scale_to_int(x, e, nearest) as signed chunks: sign * (c[0] + c[1] 2^20 + c[2] 2^40 +
// c[3] 2^60), each |c| < 2^20.
struct signed_chunks {
  int32_t c[4];
};

OZDGEMM_HD signed_chunks signed_scale_to_int(double x, int e, bool nearest) {
  const scaled_int u = scale_to_int(x, e, nearest);
  signed_chunks r;
OZDGEMM_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int32_t c = static_cast<int32_t>(u.c[i]);
    r.c[i] = u.negative ? -c : c;
  }
  return r;
}

// The residue modulo 256 (plane 0) in the low byte.
OZDGEMM_HD uint32_t residue_byte_256(const signed_chunks& v) {
  return static_cast<uint32_t>(v.c[0]);
}

// (V + 128) mod m in [0, m) for an odd m > 128; the INT8 residue is its byte XOR 0x80.
// |chunk sum| < 2^20 (1 + 3 * 254) < 0.75 * 2^30, so y = sum + bias lies in (0, 2^31) and the
// wrap-around arithmetic computes it exactly. Chunks = 3 when chunk 3 is zero (|V| < 2^60):
// one multiply-add fewer, the same value.
template <int Chunks = 4>
OZDGEMM_HD uint32_t residue_offset(const signed_chunks& v, const residue_consts& k) {
  static_assert(Chunks == 3 || Chunks == 4, "three or four chunks");
  uint32_t y = static_cast<uint32_t>(v.c[0]) + k.bias + static_cast<uint32_t>(v.c[1]) * k.p1 +
               static_cast<uint32_t>(v.c[2]) * k.p2;
  if (Chunks == 4) y += static_cast<uint32_t>(v.c[3]) * k.p3;
  const uint32_t q = umulhi32(y, k.magic) >> 7;  // floor(y / m), exactly
  return y + q * k.neg_m;                        // y - q m, modulo 2^32
}

// The byte mask that turns four packed residue_offset values into their INT8 residues.
inline constexpr uint32_t kOffsetToInt8 = 0x80808080u;

}  // namespace ozdgemm::detail
