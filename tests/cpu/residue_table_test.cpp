// The plane writer's residue arithmetic (kernels/residue_table.hpp) against
// symmetric_residue (core/element.hpp), for every moduli count: the kernels must write the
// same INT8 planes as before, byte for byte. The chunk sums are driven to both ends of their
// range (every chunk at 0 or 2^20 - 1, either sign), where the bias and the Barrett step are
// tightest, then over random chunks and random scaled doubles.
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

int8_t new_residue(const signed_chunks& v, const residue_table& rt, int t) {
  const uint32_t b = t == 0 ? detail::residue_byte_256(v) : detail::residue_byte(v, rt.c[t]);
  return static_cast<int8_t>(static_cast<uint8_t>(b & 0xFFu));
}

// Returns the number of mismatches (reports the first few).
int compare_all_planes(const scaled_int& u, const modulus_table& tb, const residue_table& rt) {
  const signed_chunks v = signed_of(u);
  int bad = 0;
  for (int t = 0; t < tb.s; ++t) {
    const int8_t want = detail::symmetric_residue(u, tb, t);
    const int8_t got = new_residue(v, rt, t);
    if (want != got && ++bad <= 3)
      ADD_FAILURE() << "s=" << tb.s << " t=" << t << " m=" << tb.m[t] << " chunks " << u.c[0]
                    << "," << u.c[1] << "," << u.c[2] << "," << u.c[3] << " neg=" << u.negative
                    << ": want " << int(want) << " got " << int(got);
  }
  return bad;
}

TEST(ResidueTable, ExtremeChunkSumsMatchSymmetricResidue) {
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

TEST(ResidueTable, RandomChunksMatchSymmetricResidue) {
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

// The path the kernel takes: signed_scale_truncate of real doubles at the exponents the
// scaling can produce (|x 2^e| < 2^78), zeros, subnormals and non-finite values included.
TEST(ResidueTable, ScaledDoublesMatchSymmetricResidue) {
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
      const scaled_int u = detail::scale_truncate(x, e);
      const signed_chunks v = detail::signed_scale_truncate(x, e);
      const signed_chunks w = signed_of(u);
      for (int i = 0; i < 4; ++i) ASSERT_EQ(v.c[i], w.c[i]);
      bad += compare_all_planes(u, tb, rt);
    }
    EXPECT_EQ(bad, 0) << "s=" << s;
  }
}

}  // namespace
}  // namespace ozdgemm::test
