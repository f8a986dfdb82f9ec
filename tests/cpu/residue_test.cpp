// The per-element integer views of FP64 data (core/element.hpp): exponent_of, quantize_up,
// scale_to_int + int8_residue, mod_small, product_residue. Every result is compared
// with an exact reference computed independently (frexp/ldexp into __int128, or plain `%`).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/element.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "cpu/cpu_test_util.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {
namespace {

using detail::kZeroExponent;
using i128 = __int128;
using u128 = unsigned __int128;

// Finite values at the edges of the format and of the integer conversions.
std::vector<double> edge_values() {
  const double min_sub = std::numeric_limits<double>::denorm_min();
  std::vector<double> pos = {
      min_sub,
      2 * min_sub,
      3 * min_sub,
      DBL_MIN - min_sub,  // largest subnormal
      DBL_MIN,
      std::nextafter(DBL_MIN, 1.0),
      0x1.fffffffffffffp-1000,
      std::ldexp(1.0, -1000),
      0.1,
      0.5,
      std::nextafter(1.0, 0.0),
      1.0,
      std::nextafter(1.0, 2.0),
      1.5,
      3.0,
      3.141592653589793,
      0x1.0p52 - 1,
      0x1.0p52,
      0x1.0p52 + 1,
      0x1.0p53 - 1,
      0x1.0p53,
      0x1.0p63,
      0x1.fffffffffffffp63,
      0x1.0p77,
      0x1.8p77,
      0x1.fffffffffffffp77,  // the largest double below 2^78
      1e300,
      0x1.0p1023,
      DBL_MAX,
  };
  std::vector<double> all;
  for (double v : pos) {
    all.push_back(v);
    all.push_back(-v);
  }
  return all;
}

// x 2^e rounded toward zero, or to nearest with ties away from zero, signed, exactly
// (|x 2^e| < 2^78); the mantissa comes from frexp, not from decode().
i128 exact_round128(double x, int e, bool nearest) {
  if (x == 0.0) return 0;
  uint64_t mant;
  int exp2;
  split_double(x, &mant, &exp2);
  const int sh = exp2 + e;
  u128 v;
  if (sh >= 0) {
    EXPECT_LE(sh + 64 - __builtin_clzll(mant), 78) << "test bug: |x 2^e| >= 2^78";
    v = static_cast<u128>(mant) << sh;
  } else {
    const int rs = -sh;
    v = rs >= 64 ? 0 : static_cast<u128>(mant >> rs);
    // The dropped part is mant mod 2^rs; it rounds up when it is at least half of 2^rs.
    if (nearest && rs <= 64) {
      const u128 dropped = static_cast<u128>(mant) & ((u128{1} << rs) - 1);
      if (2 * dropped >= (u128{1} << rs)) v += 1;
    }
  }
  return x < 0 ? -static_cast<i128>(v) : static_cast<i128>(v);
}

i128 scaled_value(const detail::scaled_int& v) {
  u128 mag = 0;
  for (int c = 3; c >= 0; --c) mag = (mag << 20) | v.c[c];
  return v.negative ? -static_cast<i128>(mag) : static_cast<i128>(mag);
}

i128 mod_floor(i128 x, i128 m) {
  i128 r = x % m;
  return r < 0 ? r + m : r;
}

// Checks scale_to_int(x, e, nearest) and every INT8 residue of it for every moduli count.
void check_scaled(double x, int e, bool nearest) {
  SCOPED_TRACE(testing::Message() << "x=" << std::hexfloat << x << std::defaultfloat << " e=" << e
                                  << " nearest=" << nearest);
  const detail::scaled_int v = detail::scale_to_int(x, e, nearest);
  for (int c = 0; c < 4; ++c) ASSERT_LT(v.c[c], 1u << 20) << "chunk " << c;
  const i128 expect = exact_round128(x, e, nearest);
  const i128 got = scaled_value(v);
  ASSERT_TRUE(got == expect) << "x 2^e rounded wrong: got " << static_cast<double>(got)
                             << " expected " << static_cast<double>(expect);
  ASSERT_EQ(v.negative, std::signbit(x));
  for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s) {
    const detail::modulus_table& tb = detail::moduli_for(s);
    for (int t = 0; t < s; ++t) {
      const int m = static_cast<int>(tb.m[t]);
      const int r = detail::int8_residue(v, tb, t);
      // The range [-128, m - 128) holds exactly m values, one per class, all within int8.
      ASSERT_GE(r, -128) << "s=" << s << " t=" << t;
      ASSERT_LT(r, m - 128) << "s=" << s << " t=" << t;
      ASSERT_TRUE(mod_floor(expect - r, m) == 0) << "not congruent: s=" << s << " m=" << m;
    }
  }
}

TEST(ExponentOf, MatchesIlogbOnEdgeValues) {
  for (double x : edge_values()) EXPECT_EQ(detail::exponent_of(x), std::ilogb(x)) << x;
  EXPECT_EQ(detail::exponent_of(0.0), kZeroExponent);
  EXPECT_EQ(detail::exponent_of(-0.0), kZeroExponent);
  EXPECT_EQ(detail::exponent_of(std::numeric_limits<double>::infinity()), kZeroExponent);
  EXPECT_EQ(detail::exponent_of(-std::numeric_limits<double>::infinity()), kZeroExponent);
  EXPECT_EQ(detail::exponent_of(std::numeric_limits<double>::quiet_NaN()), kZeroExponent);
  EXPECT_EQ(detail::exponent_of(std::numeric_limits<double>::denorm_min()), -1074);
  EXPECT_EQ(detail::exponent_of(DBL_MIN), -1022);
  EXPECT_EQ(detail::exponent_of(DBL_MAX), 1023);
}

TEST(ExponentOf, MatchesIlogbOnRandomBitPatterns) {
  rng g(11);
  for (int it = 0; it < 200000; ++it) {
    const double x = detail::bits_double(g.next_u64());
    if (!std::isfinite(x) || x == 0.0) continue;
    ASSERT_EQ(detail::exponent_of(x), std::ilogb(x)) << std::hexfloat << x;
  }
}

TEST(NonfiniteFlag, ClassifiesEveryClass) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(detail::nonfinite_flag(inf), detail::kHasPosInf);
  EXPECT_EQ(detail::nonfinite_flag(-inf), detail::kHasNegInf);
  EXPECT_EQ(detail::nonfinite_flag(std::numeric_limits<double>::quiet_NaN()), detail::kHasNaN);
  EXPECT_EQ(detail::nonfinite_flag(-std::numeric_limits<double>::quiet_NaN()), detail::kHasNaN);
  EXPECT_EQ(detail::nonfinite_flag(std::numeric_limits<double>::signaling_NaN()),
            detail::kHasNaN);
  EXPECT_EQ(detail::nonfinite_flag(detail::bits_double(0x7FF0000000000001ull)), detail::kHasNaN);
  EXPECT_EQ(detail::nonfinite_flag(detail::bits_double(0xFFFFFFFFFFFFFFFFull)), detail::kHasNaN);
  for (double x : edge_values()) EXPECT_EQ(detail::nonfinite_flag(x), 0) << x;
  EXPECT_EQ(detail::nonfinite_flag(0.0), 0);
  EXPECT_EQ(detail::nonfinite_flag(-0.0), 0);
}

// ceil(|x| 2^(bits - 1 - emax)) exactly, by GMP.
mpz_class exact_quantize_up(double x, int emax, int bits) {
  if (x == 0.0) return 0;
  uint64_t mant;
  int exp2;
  split_double(x, &mant, &exp2);
  mpz_class v(static_cast<unsigned long>(mant));
  const int t = exp2 + bits - 1 - emax;
  if (t >= 0)
    mpz_mul_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(t));
  else
    mpz_cdiv_q_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(-t));
  return v;
}

void check_quantize(double x, int emax, int bits) {
  const uint64_t q = detail::quantize_up(x, emax, bits);
  const mpz_class expect = exact_quantize_up(x, emax, bits);
  ASSERT_TRUE(mpz_class(static_cast<unsigned long>(q)) == expect)
      << std::hexfloat << "x=" << x << std::defaultfloat << " emax=" << emax
      << " bits=" << bits << " got " << q << " expected " << expect.get_str();
  // The documented range: an integer in [0, 2^bits] bounding |x| from above.
  ASSERT_LE(q, uint64_t{1} << bits);
  if (x != 0.0) {
    ASSERT_GE(q, 1u);
  }
  if (x != 0.0 && emax == std::ilogb(x)) {
    ASSERT_GE(q, uint64_t{1} << (bits - 1));
  }
}

TEST(QuantizeUp, MatchesExactCeilingOnEdgeValues) {
  const int bits_list[] = {1, 2, 7, 8, 15, 16, 20, 31};
  for (double x : edge_values())
    for (int bits : bits_list)
      for (int extra : {0, 1, 2, 5, 52, 53, 58, 59, 60, 61, 64, 100, 2000}) {
        const int emax = std::ilogb(x) + extra;  // precondition |x| < 2^(emax + 1)
        check_quantize(x, emax, bits);
      }
}

TEST(QuantizeUp, MatchesExactCeilingOnRandomValues) {
  rng g(12);
  for (int it = 0; it < 100000; ++it) {
    const double x = detail::bits_double(g.next_u64());
    if (!std::isfinite(x) || x == 0.0) continue;
    const int emax = std::ilogb(x) + static_cast<int>(g.next_u64() % 70);
    const int bits = 1 + static_cast<int>(g.next_u64() % 31);
    check_quantize(x, emax, bits);
  }
}

TEST(QuantizeUp, ZeroAndNonFiniteGiveZero) {
  EXPECT_EQ(detail::quantize_up(0.0, 0, 16), 0u);
  EXPECT_EQ(detail::quantize_up(-0.0, 0, 16), 0u);
  EXPECT_EQ(detail::quantize_up(std::numeric_limits<double>::infinity(), 0, 16), 0u);
  EXPECT_EQ(detail::quantize_up(-std::numeric_limits<double>::infinity(), 0, 16), 0u);
  EXPECT_EQ(detail::quantize_up(std::numeric_limits<double>::quiet_NaN(), 0, 16), 0u);
}

TEST(ScaleToInt, EdgeValuesOverEveryShiftUpTo2Pow78) {
  for (bool nearest : {false, true})
    for (double x : edge_values()) {
      const int ex = std::ilogb(x);
      // From "rounds to zero" up to a scaled magnitude in [2^77, 2^78).
      for (int e = -ex - 70; e <= 77 - ex; ++e) {
        check_scaled(x, e, nearest);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
}

// Rounding to nearest at the boundaries: k + 1/2 rounds away from zero, k + 1/2 - ulp down,
// 1/2 to one, just below 1/2 to zero; truncation drops every fraction.
TEST(ScaleToInt, HalvesRoundAwayFromZero) {
  struct row {
    double x;
    int e;
    int64_t trunc, nearest;
  };
  const row rows[] = {
      {2.5, 0, 2, 3},
      {-2.5, 0, -2, -3},
      {std::nextafter(2.5, 0.0), 0, 2, 2},
      {0.5, 0, 0, 1},
      {std::nextafter(0.5, 0.0), 0, 0, 0},
      {0x1.fffffffffffffp-1, 1, 1, 2},  // (2 - 2^-52): nearest is 2
      {5e-324, 1074, 1, 1},             // the smallest subnormal, scaled to exactly 1
      {5e-324, 1073, 0, 1},             // ... to exactly 1/2
      {0x1.8p+0, -1, 0, 1},             // 0.75
  };
  for (const row& r : rows) {
    for (bool nearest : {false, true}) {
      const i128 got = scaled_value(detail::scale_to_int(r.x, r.e, nearest));
      const int64_t want = nearest ? r.nearest : r.trunc;
      EXPECT_TRUE(got == want) << r.x << " e=" << r.e << " nearest=" << nearest << ": got "
                               << static_cast<double>(got);
      EXPECT_TRUE(exact_round128(r.x, r.e, nearest) == want) << "test helper, x=" << r.x;
    }
  }
}

TEST(ScaleToInt, ZerosAndNonFiniteGiveZero) {
  const double special[] = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
  for (double x : special)
    for (int e : {-1100, -50, 0, 50, 77, 1100})
      for (bool nearest : {false, true}) {
        const detail::scaled_int v = detail::scale_to_int(x, e, nearest);
        EXPECT_EQ(v.c[0] | v.c[1] | v.c[2] | v.c[3], 0u) << x << " e=" << e;
        const detail::modulus_table& tb = detail::moduli_for(detail::kMaxModuli);
        for (int t = 0; t < tb.s; ++t) EXPECT_EQ(detail::int8_residue(v, tb, t), 0);
      }
}

TEST(ScaleToInt, RandomValuesAndShifts) {
  rng g(13);
  int checked = 0;
  while (checked < 20000) {
    const double x = detail::bits_double(g.next_u64());
    if (!std::isfinite(x) || x == 0.0) continue;
    // Scaled magnitude 2^p with p uniform in [-5, 77]: every chunk boundary is crossed.
    const int p = -5 + static_cast<int>(g.next_u64() % 83);
    check_scaled(x, p - std::ilogb(x), checked % 2 == 0);
    if (HasFatalFailure()) return;
    ++checked;
  }
}

TEST(ScaleToInt, ScalingXBy2PowFShiftsNothing) {
  // Element-level scale invariance: (x 2^f) 2^(e - f) rounds as x 2^e does whenever x 2^f is
  // normal, so the residues of a scaled row are those of the unscaled one.
  rng g(14);
  for (int it = 0; it < 20000; ++it) {
    const double x = (g.uniform() - 0.5) * std::exp(4 * g.normal());
    if (x == 0.0) continue;
    const int e = 60 - std::ilogb(x);
    const int f = static_cast<int>(g.next_u64() % 1601) - 800;
    const double y = std::ldexp(x, f);
    ASSERT_TRUE(std::isnormal(y));
    const bool nearest = it % 2 == 0;
    const detail::scaled_int a = detail::scale_to_int(x, e, nearest);
    const detail::scaled_int b = detail::scale_to_int(y, e - f, nearest);
    ASSERT_TRUE(scaled_value(a) == scaled_value(b)) << x << " f=" << f;
  }
}

// Exact x mod m for every x in [lo, hi] (inclusive, 64-bit loop variable).
void check_mod_range(uint32_t m, uint32_t recip, uint64_t lo, uint64_t hi) {
  for (uint64_t x = lo; x <= hi; ++x) {
    const uint32_t r = detail::mod_small(static_cast<uint32_t>(x), m, recip);
    if (r != x % m) {
      ADD_FAILURE() << "mod_small(" << x << ", " << m << ") = " << r << ", expected " << x % m;
      return;
    }
  }
}

std::vector<uint64_t> boundary_x(uint32_t m) {
  std::vector<uint64_t> xs = {0,           1,           m - 1u,      m,           m + 1u,
                              2u * m - 1u, 2u * m,      0x7FFFFFFFu, 0x80000000u, 0x80000001u,
                              0xFFFFFFFEu, 0xFFFFFFFFu};
  const uint64_t top = 0xFFFFFFFFull / m;
  for (uint64_t q : {top - 1, top, uint64_t{1} << 24, (uint64_t{1} << 31) / m})
    for (int d = -1; d <= 1; ++d) {
      const int64_t x = static_cast<int64_t>(q * m) + d;
      if (x >= 0 && x <= 0xFFFFFFFFll) xs.push_back(static_cast<uint64_t>(x));
    }
  return xs;
}

TEST(ModSmall, TableModuliOnLowAndHighWindowsBoundariesAndRandomX) {
  // Why a sample suffices: q = floor(x recip / 2^32) with recip = (2^32 - r0) / m,
  // r0 = 2^32 mod m, so x/m - q < 1 + x r0 / (m 2^32) < 2 for every x < 2^32; the result is
  // wrong only if that argument is. The windows include the x with the largest deficit.
  const detail::modulus_table& tb = detail::moduli_for(detail::kMaxModuli);
  rng g(15);
  for (int t = 0; t < tb.s; ++t) {
    const uint32_t m = tb.m[t];
    ASSERT_EQ(tb.recip[t], static_cast<uint32_t>((uint64_t{1} << 32) / m));
    check_mod_range(m, tb.recip[t], 0, (1u << 20) - 1);
    check_mod_range(m, tb.recip[t], 0xFFFFFFFFull - (1u << 20) + 1, 0xFFFFFFFFull);
    check_mod_range(m, tb.recip[t], 0x80000000ull - (1u << 16), 0x80000000ull + (1u << 16));
    for (uint64_t x : boundary_x(m))
      ASSERT_EQ(detail::mod_small(static_cast<uint32_t>(x), m, tb.recip[t]), x % m) << x;
    for (int it = 0; it < 200000; ++it) {
      const uint32_t x = static_cast<uint32_t>(g.next_u64());
      ASSERT_EQ(detail::mod_small(x, m, tb.recip[t]), x % m) << x << " mod " << m;
    }
    if (HasFailure()) return;
  }
}

TEST(ModSmall, EveryModulusFrom2To256) {
  // The contract is any 2 <= m <= 256, not only the table's moduli.
  rng g(16);
  for (uint32_t m = 2; m <= 256; ++m) {
    const uint32_t recip = static_cast<uint32_t>((uint64_t{1} << 32) / m);
    for (uint64_t x : boundary_x(m))
      ASSERT_EQ(detail::mod_small(static_cast<uint32_t>(x), m, recip), x % m)
          << x << " mod " << m;
    check_mod_range(m, recip, 0xFFFFFFFFull - 4096, 0xFFFFFFFFull);
    for (int it = 0; it < 20000; ++it) {
      const uint32_t x = static_cast<uint32_t>(g.next_u64());
      ASSERT_EQ(detail::mod_small(x, m, recip), x % m) << x << " mod " << m;
    }
  }
}

TEST(ProductResidue, MatchesExactModuloOverTheAcceptedRange) {
  // product_residue accepts |p| < 2^31 - 2^15; the longest k-block the pipeline forms
  // produces at most kKBlock * 2^14 + 255 in magnitude, which must lie inside that range.
  const int64_t limit = (int64_t{1} << 31) - (int64_t{1} << 15) - 1;
  const int64_t block_max = detail::kKBlock * 16384 + 255;
  ASSERT_LE(block_max, limit);
  const detail::modulus_table& tb = detail::moduli_for(detail::kMaxModuli);
  rng g(17);
  for (int t = 0; t < tb.s; ++t) {
    const int64_t m = tb.m[t];
    ASSERT_EQ(tb.offset[t] % m, 0u);
    ASSERT_GE(tb.offset[t], 1u << 31);
    ASSERT_LT(tb.offset[t] - m, 1u << 31);
    std::vector<int64_t> ps = {0, 1, m - 1, m, m + 1, block_max, limit, limit - 1,
                               (limit / m) * m, (limit / m) * m - 1, 1 << 14, 1 << 30};
    const size_t n = ps.size();
    for (size_t i = 0; i < n; ++i) ps.push_back(-ps[i]);
    for (int it = 0; it < 200000; ++it)
      ps.push_back(static_cast<int64_t>(g.next_u64() % static_cast<uint64_t>(2 * limit + 1)) -
                   limit);
    for (int64_t p : ps) {
      const uint32_t r = detail::product_residue(static_cast<int32_t>(p), tb, t);
      ASSERT_EQ(static_cast<int64_t>(r), ((p % m) + m) % m) << "p=" << p << " m=" << m;
    }
  }
}

}  // namespace
}  // namespace ozdgemm::test
