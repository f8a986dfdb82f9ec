// The plane writer's residue arithmetic (kernels/residue_table.hpp) against int8_residue
// (core/element.hpp), for every moduli count and both chunk paths: the kernels must write the
// host reference's INT8 planes byte for byte. The chunk sums are driven to both ends of their
// range (every chunk at 0 or 2^20 - 1, either sign), where the bias and the exact quotient
// are tightest, then over random chunks and random scaled doubles. The exact quotient is also
// checked against y / m for every y in the range the chunk sums reach, on a stride.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "core/element.hpp"
#include "core/moduli.hpp"
#include "residue_table.hpp"

namespace ozdgemm::test {
namespace {

using detail::modulus_table;
using detail::residue_table;
using detail::scaled_int;
using detail::signed_chunks;

signed_chunks signed_of(const scaled_int& u) {
  signed_chunks r;
  for (int i = 0; i < 4; ++i) {
    const int32_t c = static_cast<int32_t>(u.c[i]);
    r.c[i] = u.negative ? -c : c;
  }
  return r;
}

// The byte the kernel writes for plane t, through the three- or four-chunk path.
template <int Chunks>
int8_t new_residue(const signed_chunks& v, const residue_table& rt, int t) {
  const uint32_t b = t == 0 ? detail::residue_byte_256(v)
                            : detail::residue_offset<Chunks>(v, rt.c[t]) ^ detail::kOffsetToInt8;
  return static_cast<int8_t>(static_cast<uint8_t>(b & 0xFFu));
}

// Returns the number of mismatches (reports the first few).
int compare_all_planes(const scaled_int& u, const modulus_table& tb, const residue_table& rt) {
  const signed_chunks v = signed_of(u);
  int bad = 0;
  for (int t = 0; t < tb.s; ++t) {
    const int8_t want = detail::int8_residue(u, tb, t);
    const int8_t got = new_residue<4>(v, rt, t);
    // The three-chunk path is taken only when chunk 3 is zero, and must then agree.
    const int8_t got3 = v.c[3] == 0 ? new_residue<3>(v, rt, t) : want;
    if ((want != got || want != got3) && ++bad <= 3)
      ADD_FAILURE() << "s=" << tb.s << " t=" << t << " m=" << tb.m[t] << " chunks " << u.c[0] << ","
                    << u.c[1] << "," << u.c[2] << "," << u.c[3] << " neg=" << u.negative
                    << ": want " << int(want) << " got " << int(got) << " (3 chunks: " << int(got3)
                    << ")";
  }
  return bad;
}

TEST(ResidueTable, ExtremeChunkSumsMatchInt8Residue) {
  constexpr uint32_t kMax = (1u << 20) - 1;
  for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s) {
    const modulus_table& tb = detail::moduli_for(s);
    const residue_table rt = detail::make_residue_table(tb);
    int bad = 0;
    for (int mask = 0; mask < 16; ++mask)
      for (int neg = 0; neg < 2; ++neg)
        for (uint32_t low : {0u, 1u, 2u, 127u, 128u, 255u, 256u}) {
          scaled_int u{};
          for (int i = 0; i < 4; ++i) u.c[i] = (mask >> i) & 1 ? kMax : 0;
          u.c[0] = u.c[0] == 0 ? low : u.c[0] - low;
          u.negative = neg != 0;
          bad += compare_all_planes(u, tb, rt);
        }
    EXPECT_EQ(bad, 0) << "s=" << s;
  }
}

TEST(ResidueTable, RandomChunksMatchInt8Residue) {
  std::mt19937_64 rng(20261129);
  for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s) {
    const modulus_table& tb = detail::moduli_for(s);
    const residue_table rt = detail::make_residue_table(tb);
    int bad = 0;
    for (int n = 0; n < 20000; ++n) {
      scaled_int u{};
      for (int i = 0; i < 4; ++i) u.c[i] = static_cast<uint32_t>(rng()) & ((1u << 20) - 1);
      u.negative = (rng() & 1) != 0;
      bad += compare_all_planes(u, tb, rt);
    }
    EXPECT_EQ(bad, 0) << "s=" << s;
  }
}

// The path the kernel takes: signed_scale_to_int of real doubles at the exponents the
// scaling can produce (|x 2^e| < 2^78), zeros, subnormals and non-finite values included,
// rounded both ways.
TEST(ResidueTable, ScaledDoublesMatchInt8Residue) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-1074, 1023);
  const double specials[] = {0.0, -0.0, 5e-324, -5e-324, 1.0, -1.0, INFINITY, -INFINITY, NAN};
  for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s) {
    const modulus_table& tb = detail::moduli_for(s);
    const residue_table rt = detail::make_residue_table(tb);
    int bad = 0;
    for (int n = 0; n < 20000; ++n) {
      const double x = n < 9 ? specials[n] : std::ldexp(mant(rng), expo(rng));
      const int ex = x == 0.0 || !std::isfinite(x) ? 0 : std::ilogb(x);
      // e with |x| 2^e < 2^78: anything up to 77 - ilogb(x), down to far below (truncation).
      const int e = 77 - ex - static_cast<int>(rng() % 100);
      const bool nearest = n % 2 == 1;
      const scaled_int u = detail::scale_to_int(x, e, nearest);
      const signed_chunks v = detail::signed_scale_to_int(x, e, nearest);
      const signed_chunks w = signed_of(u);
      for (int i = 0; i < 4; ++i) ASSERT_EQ(v.c[i], w.c[i]);
      bad += compare_all_planes(u, tb, rt);
    }
    EXPECT_EQ(bad, 0) << "s=" << s;
  }
}

// residue_offset's quotient umulhi(y, magic) >> 7 against y / m, for every odd modulus, over
// the whole range the chunk sums can reach (y < 2^31) on a prime stride, plus both ends of it
// and every y within 2^16 of a multiple of m near the top, where an inexact magic fails first.
TEST(ResidueTable, ExactQuotientOverTheWholeRange) {
  const residue_table rt = detail::make_residue_table(detail::moduli_for(detail::kMaxModuli));
  for (int t = 1; t < detail::kMaxModuli; ++t) {
    const uint32_t m = 0u - rt.c[t].neg_m, magic = rt.c[t].magic;
    ASSERT_EQ(m, detail::kModuli[t]);
    int64_t bad = 0;
    auto check = [&](uint32_t y) {
      const uint32_t q = detail::umulhi32(y, magic) >> 7;
      if (q != y / m && ++bad <= 3) ADD_FAILURE() << "m=" << m << " y=" << y << " q=" << q;
    };
    for (uint64_t y = 0; y < (uint64_t{1} << 31); y += 4099) check(static_cast<uint32_t>(y));
    const uint32_t top = (uint32_t{1} << 31) - 1;
    for (uint32_t y = top - (1u << 16); y < top; ++y) check(y);
    check(top);
    for (uint32_t y = 0; y < (1u << 16); ++y) check(y);
    EXPECT_EQ(bad, 0) << "m=" << m;
  }
}

}  // namespace
}  // namespace ozdgemm::test
