// The residue arithmetic of the plane writer, reorganised for throughput: the same integers
// as symmetric_residue (core/element.hpp) with fewer instructions per plane. Host and device
// (the CPU suite checks it against symmetric_residue for every moduli count).
//
// Per element, once: trunc(x 2^e) as four signed 20-bit chunks (the sign folded in, so the
// planes never look at it). Per plane t with odd m: y = chunk sum + bias_t with
// bias_t = (a multiple of m >= 2^30) + h, h = (m - 1) / 2, so y lies in [0, 2^32) and
// y = sum + h (mod m); Barrett with floor(2^32 / m) leaves r = y - q m in [0, 2m);
// umin(r - m, r) (unsigned: r - m wraps when r < m) is y mod m in [0, m), and minus h that
// is the symmetric residue in [-h, h], the unique representative symmetric_residue returns.
// Plane 0 has m = 256: the low byte of the signed chunk 0 is the residue of +-V modulo 256
// read as int8, which is symmetric_residue's [-128, 127] representative.
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
static_assert(first_modulus_is_256_rest_odd(), "residue_byte assumes m_0 = 256, the rest odd");

struct residue_consts {
  uint32_t p1, p2, p3;  // 2^(20 c) mod m
  uint32_t bias;        // ceil(2^30 / m) m + h
  uint32_t recip;       // floor(2^32 / m)
  uint32_t m;
  uint32_t h;  // (m - 1) / 2
};

// Kernel parameter (7 x 4 x 20 bytes); entry 0 (m = 256) is not read.
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
    c.h = (m - 1) / 2;
    c.bias = ((uint32_t{1} << 30) + m - 1) / m * m + c.h;
    c.recip = tb.recip[t];
    c.m = m;
  }
  return r;
}

// trunc(x 2^e) as signed chunks: sign * (c[0] + c[1] 2^20 + c[2] 2^40 + c[3] 2^60), each
// |c| < 2^20.
struct signed_chunks {
  int32_t c[4];
};

OZDGEMM_HD signed_chunks signed_scale_truncate(double x, int e) {
  const scaled_int u = scale_truncate(x, e);
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

// The symmetric residue modulo an odd m in the low byte. |chunk sum| < 2^20 (1 + 3 * 254)
// < 2^30, so the true y is in [0, 2^32) and the wrap-around arithmetic computes it exactly.
OZDGEMM_HD uint32_t residue_byte(const signed_chunks& v, const residue_consts& k) {
  const uint32_t y = static_cast<uint32_t>(v.c[0]) + k.bias +
                     static_cast<uint32_t>(v.c[1]) * k.p1 +
                     static_cast<uint32_t>(v.c[2]) * k.p2 + static_cast<uint32_t>(v.c[3]) * k.p3;
  const uint32_t r = y - umulhi32(y, k.recip) * k.m;  // [0, 2m)
  const uint32_t rm = r - k.m;
  return (rm < r ? rm : r) - k.h;
}

}  // namespace ozdgemm::detail
