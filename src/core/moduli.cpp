#include "core/moduli.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace ozdgemm::detail {
namespace {

// Just enough fixed-width unsigned big-integer arithmetic to build the CRT constants.
using big = std::array<uint32_t, kLimbs + 2>;  // room for 127^2 L < 2^169 (bound_accurate)

big from_u32(uint32_t v) {
  big b{};
  b[0] = v;
  return b;
}

big mul_small(const big& a, uint32_t f) {
  big r{};
  uint64_t carry = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t p = static_cast<uint64_t>(a[i]) * f + carry;
    r[i] = static_cast<uint32_t>(p);
    carry = p >> 32;
  }
  if (carry != 0) throw std::logic_error("moduli: big-integer overflow");
  return r;
}

big div_small(const big& a, uint32_t d, uint32_t* rem) {
  big q{};
  uint64_t r = 0;
  for (size_t i = a.size(); i-- > 0;) {
    uint64_t cur = (r << 32) | a[i];
    q[i] = static_cast<uint32_t>(cur / d);
    r = cur % d;
  }
  if (rem != nullptr) *rem = static_cast<uint32_t>(r);
  return q;
}

big sub(const big& a, const big& b) {
  big r{};
  int64_t borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t d = static_cast<int64_t>(a[i]) - b[i] - borrow;
    borrow = d < 0;
    r[i] = static_cast<uint32_t>(d + (borrow << 32));
  }
  if (borrow != 0) throw std::logic_error("moduli: big-integer underflow");
  return r;
}

big shift_right(const big& a, int bits) {
  big r{};
  int limbs = bits / 32, rest = bits % 32;
  for (size_t i = 0; i + limbs < a.size(); ++i) {
    uint64_t lo = a[i + limbs];
    uint64_t hi = (i + limbs + 1 < a.size()) ? a[i + limbs + 1] : 0;
    r[i] = static_cast<uint32_t>(((hi << 32) | lo) >> rest);
  }
  return r;
}

// Largest double <= a (truncate to 53 significant bits).
double to_double_down(const big& a) {
  double r = 0.0;
  int top = -1;
  for (int i = static_cast<int>(a.size()) - 1; i >= 0 && top < 0; --i)
    if (a[i] != 0) top = 32 * i + 31 - __builtin_clz(a[i]);
  if (top < 0) return 0.0;
  int low = top >= 52 ? top - 52 : 0;
  for (int bit = top; bit >= low; --bit)
    if ((a[bit / 32] >> (bit % 32)) & 1u) r += std::ldexp(1.0, bit);  // exact: < 54 bits
  return r;
}

uint32_t inverse_mod(uint32_t a, uint32_t m) {
  for (uint32_t x = 1; x < m; ++x)
    if ((static_cast<uint64_t>(a) * x) % m == 1) return x;
  throw std::logic_error("moduli: not coprime");
}

modulus_table build(int s) {
  modulus_table t;
  std::memset(&t, 0, sizeof t);
  t.s = s;
  big M = from_u32(1);
  for (int i = 0; i < s; ++i) M = mul_small(M, kModuli[i]);
  for (int i = kLimbs; i < static_cast<int>(M.size()); ++i)
    if (M[i] != 0) throw std::logic_error("moduli: M exceeds the limb budget");
  t.log2_modulus = 0.0;
  for (int i = 0; i < s; ++i) {
    const uint32_t m = kModuli[i];
    t.m[i] = m;
    t.recip[i] = static_cast<uint32_t>((uint64_t{1} << 32) / m);
    for (int c = 0; c < 4; ++c)
      t.chunk_pow[i][c] = static_cast<uint32_t>(((unsigned __int128)1 << (20 * c)) % m);
    t.offset[i] = static_cast<uint32_t>(((uint64_t{1} << 31) + m - 1) / m * m);
    uint32_t rem = 0;
    big cofactor = div_small(M, m, &rem);  // M / m_t, exact
    uint32_t cof_mod = 0;
    div_small(cofactor, m, &cof_mod);
    uint32_t inv = inverse_mod(cof_mod, m);
    big w = mul_small(cofactor, inv);  // < M since inv < m_t
    for (int c = 0; c < kLimbs; ++c) t.weight[i][c] = w[c];
    t.weight_frac[i] = static_cast<double>(inv) / static_cast<double>(m);
    t.log2_modulus += std::log2(static_cast<double>(m));
  }
  for (int c = 0; c < kLimbs; ++c) t.modulus[c] = M[c];
  // 2^(32 kLimbs) - M = ~M + 1 over kLimbs limbs (M > 1, so the carry dies inside).
  uint64_t carry = 1;
  for (int c = 0; c < kLimbs; ++c) {
    const uint64_t v = static_cast<uint64_t>(~M[c]) + carry;
    t.neg_modulus[c] = static_cast<uint32_t>(v);
    carry = v >> 32;
  }
  // The CRT works in limbs_for(s) limbs (crt.hpp): M must fit them.
  for (int i = limbs_for(s); i < static_cast<int>(M.size()); ++i)
    if (M[i] != 0) throw std::logic_error("moduli: M exceeds limbs_for(s)");
  // floor(M/2) - floor(M/2^31) - 1 <= (1/2 - 2^-31) M.
  big L = sub(sub(shift_right(M, 1), shift_right(M, 31)), from_u32(1));
  t.bound = to_double_down(L);
  t.bound_accurate = to_double_down(mul_small(L, 127u * 127u));
  return t;
}

}  // namespace

const modulus_table& moduli_for(int s) {
  if (s < kMinModuli || s > kMaxModuli) throw std::invalid_argument("moduli count out of range");
  static std::array<modulus_table, kMaxModuli + 1> tables;
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = kMinModuli; i <= kMaxModuli; ++i) tables[i] = build(i);
  });
  return tables[s];
}

}  // namespace ozdgemm::detail
