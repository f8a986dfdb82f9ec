// The moduli table (core/moduli.cpp) and the CRT reconstruction (core/crt.hpp), checked
// exactly with GMP: X is drawn over every magnitude up to the table's bound, reduced to its
// residues, reconstructed, and compared bit for bit with X correctly rounded to a double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/crt.hpp"
#include "core/moduli.hpp"
#include "cpu/cpu_test_util.hpp"
#include "cpu/crt_legacy.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {
namespace {

using detail::kMaxModuli;
using detail::kMinModuli;

mpz_class product_of_moduli(int s) {
  mpz_class M = 1;
  for (int t = 0; t < s; ++t) M *= static_cast<unsigned long>(detail::kModuli[t]);
  return M;
}

class ModuliTable : public testing::TestWithParam<int> {};

TEST_P(ModuliTable, ModuliArePairwiseCoprimeAndTheTableIsAPrefix) {
  const int s = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  ASSERT_EQ(tb.s, s);
  for (int t = 0; t < s; ++t) {
    EXPECT_EQ(tb.m[t], detail::kModuli[t]);
    EXPECT_GE(tb.m[t], 2u);
    EXPECT_LE(tb.m[t], 256u);
    for (int u = t + 1; u < s; ++u)
      EXPECT_EQ(std::gcd(tb.m[t], tb.m[u]), 1u) << tb.m[t] << " and " << tb.m[u];
  }
}

TEST_P(ModuliTable, ModulusWeightsAndPerModulusConstantsAreExact) {
  const int s = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  const mpz_class M = product_of_moduli(s);
  EXPECT_EQ(mpz_from_limbs(tb.modulus, detail::kLimbs), M);
  EXPECT_NEAR(tb.log2_modulus, std::log2(M.get_d()), 1e-9);
  for (int t = 0; t < s; ++t) {
    const unsigned long m = tb.m[t];
    const mpz_class W = mpz_from_limbs(tb.weight[t], detail::kLimbs);
    // W_t = 1 mod m_t and 0 mod every other modulus: the CRT basis vector.
    EXPECT_LT(W, M);
    EXPECT_EQ(mpz_fdiv_ui(W.get_mpz_t(), m), 1u) << "t=" << t;
    for (int u = 0; u < s; ++u) {
      if (u != t) {
        EXPECT_EQ(mpz_fdiv_ui(W.get_mpz_t(), tb.m[u]), 0u) << "t=" << t << " u=" << u;
      }
    }
    // weight_frac = W_t / M to nearest (|error| <= 2^-54 since W_t / M < 1).
    const mpq_class frac(W, M);
    const mpq_class err = mpq_class(tb.weight_frac[t]) - frac;
    EXPECT_LE(abs(err), mpq_class(1, mpz_class(1) << 54)) << "t=" << t;
    // Constants of the residue and reduction steps.
    EXPECT_EQ(tb.recip[t], (1ull << 32) / m);
    for (int c = 0; c < 4; ++c) {
      mpz_class p = mpz_class(1) << (20 * c);
      EXPECT_EQ(tb.chunk_pow[t][c], mpz_fdiv_ui(p.get_mpz_t(), m)) << "t=" << t << " c=" << c;
    }
    EXPECT_EQ(tb.offset[t] % m, 0u);
    EXPECT_GE(tb.offset[t], 1ull << 31);
    EXPECT_LT(tb.offset[t] - m, 1ull << 31);
  }
}

TEST_P(ModuliTable, BoundIsBelowHalfModulusMinusMarginButNotWasteful) {
  const int s = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  const mpz_class M = product_of_moduli(s);
  const mpz_class bound = mpz_from_integral_double(tb.bound);
  ASSERT_EQ(bound.get_d(), tb.bound) << "bound is not an integer";
  // bound <= (1/2 - 2^-31) M, i.e. 2^31 bound <= (2^30 - 1) M, exactly.
  EXPECT_LE(mpz_class(bound << 31), mpz_class(M * ((1ul << 30) - 1)));
  // Not wastefully small: within one rounding to double (and one unit) of L.
  const mpz_class L = exact_crt_limit(tb);
  EXPECT_LE(bound, L);
  EXPECT_GE(mpz_class((bound + 2) << 52), mpz_class(L * ((mpz_class(1) << 52) - 1)));
  // Accurate scaling compares 2^(hA+hB) U against bound_accurate, with U in units of
  // 1/127^2: its proof needs bound_accurate <= 127^2 L.
  const mpz_class ba = mpz_from_integral_double(tb.bound_accurate);
  EXPECT_LE(ba, mpz_class(L * 127 * 127));
  EXPECT_GE(mpz_class((ba + 2) << 52), mpz_class(L * 127 * 127 * ((mpz_class(1) << 52) - 1)));
}

INSTANTIATE_TEST_SUITE_P(AllCounts, ModuliTable, testing::Range(kMinModuli, kMaxModuli + 1),
                         [](const testing::TestParamInfo<int>& pi) {
                           return "s" + std::to_string(pi.param);
                         });

TEST(ModuliFor, CountsOutsideTheRangeThrow) {
  EXPECT_THROW(detail::moduli_for(1), std::invalid_argument);
  EXPECT_THROW(detail::moduli_for(21), std::invalid_argument);
}

// A random integer in [0, 2^bits).
mpz_class random_bits(rng& g, int bits) {
  mpz_class x = 0;
  for (int have = 0; have < bits; have += 32) {
    x <<= 32;
    x += static_cast<unsigned long>(g.next_u64() & 0xFFFFFFFFu);
  }
  const int extra = ((bits + 31) / 32) * 32 - bits;
  x >>= extra;
  return x;
}

// The test values of |X| <= bound: 0, 1, the bound and its neighbours, every power of two
// and its neighbours, random values of every bit length, and exact rounding ties.
std::vector<mpz_class> crt_test_values(const mpz_class& bound, uint64_t seed) {
  rng g(seed);
  std::vector<mpz_class> mags = {0, 1, 2, 3, bound, bound - 1, bound - 2, bound / 2,
                                 bound - (bound >> 20)};
  const int top = static_cast<int>(mpz_sizeinbase(bound.get_mpz_t(), 2));
  for (int b = 0; b < top; ++b) {
    const mpz_class p = mpz_class(1) << b;
    mags.push_back(p);
    mags.push_back(p - 1);
    mags.push_back(p + 1);
    for (int r = 0; r < 4; ++r) mags.push_back(p + random_bits(g, b));  // bit length b + 1
    if (b >= 55) {
      // Ties: a 53-bit head, then exactly half a unit; and one below / above the tie.
      const int low = b + 1 - 53;
      const mpz_class head = (mpz_class(1) << 52) + random_bits(g, 52);
      const mpz_class tie = (head << low) + (mpz_class(1) << (low - 1));
      for (const mpz_class& v : {tie, mpz_class(tie - 1), mpz_class(tie + 1)}) mags.push_back(v);
      const mpz_class even_tie = ((head | 1) << low) + (mpz_class(1) << (low - 1));
      mags.push_back(even_tie);  // odd head: rounds up to even
      const mpz_class odd_tie = ((head & ~mpz_class(1)) << low) + (mpz_class(1) << (low - 1));
      mags.push_back(odd_tie);  // even head: rounds down
    }
  }
  std::vector<mpz_class> xs;
  for (const mpz_class& a : mags) {
    if (a > bound) continue;
    xs.push_back(a);
    if (a != 0) xs.push_back(-a);
  }
  return xs;
}

// Non-negative residues of X, r_t in [0, m_t).
std::vector<uint32_t> residues_of(const mpz_class& X, const detail::modulus_table& tb) {
  std::vector<uint32_t> r(tb.s);
  for (int t = 0; t < tb.s; ++t) r[t] = mpz_fdiv_ui(X.get_mpz_t(), tb.m[t]);
  return r;
}

// Feeds the residues to Acc (in reverse order if asked) and finishes.
template <class Acc>
double reconstruct_with(Acc acc, const std::vector<uint32_t>& r, const detail::modulus_table& tb,
                        int shift, bool reverse) {
  for (int i = 0; i < tb.s; ++i) {
    const int t = reverse ? tb.s - 1 - i : i;
    acc.add(r[t], tb, t);
  }
  return acc.finish(tb, shift);
}

// The production path: the limb count the kernel and the host reference use for this s.
double crt_reconstruct(const mpz_class& X, const detail::modulus_table& tb, int shift,
                       bool reverse) {
  const std::vector<uint32_t> r = residues_of(X, tb);
  return detail::with_crt_accumulator(detail::limbs_for(tb.s), [&](auto acc) {
    return reconstruct_with(acc, r, tb, shift, reverse);
  });
}

class CrtReconstruction : public testing::TestWithParam<int> {};

TEST_P(CrtReconstruction, RecoversCorrectlyRoundedXTimes2PowShiftUpToTheBound) {
  const int s = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  const mpz_class bound = mpz_from_integral_double(tb.bound);
  const std::vector<mpz_class> xs = crt_test_values(bound, 1000 + s);
  ASSERT_GT(xs.size(), 100u);
  for (const mpz_class& X : xs) {
    const double rn = mpz_to_double_rne(X);
    // Shifts keep every result normal (|X| < 2^156): ldexp of the expectation is exact.
    for (int shift : {0, -100, 50, -1000, 800}) {
      const double expect = std::ldexp(rn, shift);
      const double got = crt_reconstruct(X, tb, shift, false);
      ASSERT_EQ(detail::double_bits(got), detail::double_bits(expect))
          << "s=" << s << " X=" << X.get_str() << " shift=" << shift << std::hexfloat
          << " got " << got << " expected " << expect;
    }
    // The estimate of round(S/M) may not depend on the order of the residues.
    ASSERT_EQ(detail::double_bits(crt_reconstruct(X, tb, -7, true)),
              detail::double_bits(std::ldexp(rn, -7)))
        << "reverse order, X=" << X.get_str();
  }
}

TEST_P(CrtReconstruction, ZeroGivesPositiveZero) {
  const detail::modulus_table& tb = detail::moduli_for(GetParam());
  const double z = crt_reconstruct(0, tb, 0, false);
  EXPECT_EQ(detail::double_bits(z), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllCounts, CrtReconstruction, testing::Range(kMinModuli, kMaxModuli + 1),
                         [](const testing::TestParamInfo<int>& pi) {
                           return "s" + std::to_string(pi.param);
                         });

// The limb count (moduli.hpp limbs_for) and the reduced-limb finish (crt.hpp).
class CrtLimbs : public testing::TestWithParam<int> {};

TEST_P(CrtLimbs, LimbCountIsTheFewestThatHoldsMAndTheResult) {
  const int s = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  const mpz_class M = product_of_moduli(s);
  const int n = detail::limbs_for(s);
  EXPECT_EQ(static_cast<size_t>(detail::modulus_bits(s)), mpz_sizeinbase(M.get_mpz_t(), 2));
  ASSERT_GE(n, 1);
  ASSERT_LE(n, detail::kLimbs);
  const mpz_class limb_range = mpz_class(1) << (32 * n);
  EXPECT_LT(M, limb_range);                      // W_t < M fit n limbs
  EXPECT_GE(M, mpz_class(1) << (32 * (n - 1)));  // and n - 1 would not do
  // |X| <= L < 2^(32 n - 1): X mod 2^(32 n), read as two's complement, is X.
  EXPECT_LT(exact_crt_limit(tb), limb_range / 2);
  for (int c = n; c < detail::kLimbs; ++c) {
    EXPECT_EQ(tb.modulus[c], 0u) << "c=" << c;
    for (int t = 0; t < s; ++t) EXPECT_EQ(tb.weight[t][c], 0u) << "t=" << t << " c=" << c;
  }
  // neg_modulus = 2^(32 kLimbs) - M: its first n limbs are -M mod 2^(32 n).
  const mpz_class full = mpz_class(1) << (32 * detail::kLimbs);
  EXPECT_EQ(mpz_from_limbs(tb.neg_modulus, detail::kLimbs), mpz_class(full - M));
}

// Shifts that keep RN(X) 2^shift normal, put it in the subnormal range (rounded a second time,
// to the subnormal grid, down to 0), and at and past the overflow threshold. bits = |X|'s bit
// length, so RN(X) 2^shift lies in [2^(bits - 1 + shift), 2^(bits + shift)].
std::vector<int> test_shifts(int bits) {
  std::vector<int> shifts = {0, -7, 77, -1000, 800, -2000, 2000};
  for (int k : {1, 0, -1, -2, -10, -31, -51, -52, -53, -54, -60})
    shifts.push_back(-1022 - bits + k);
  for (int k : {-2, -1, 0, 1, 2}) shifts.push_back(1024 - bits + k);
  return shifts;
}

TEST_P(CrtLimbs, EveryLimbCountGivesTheBitsOfTheFiveLimbCodeAndOfGmp) {
  const int s = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  const mpz_class bound = mpz_from_integral_double(tb.bound);
  std::vector<mpz_class> xs = crt_test_values(bound, 2000 + s);
  // Plus values drawn uniformly from [-bound, bound].
  rng g(3000 + s);
  const int top = static_cast<int>(mpz_sizeinbase(bound.get_mpz_t(), 2));
  for (int i = 0; i < 2000; ++i) {
    const mpz_class u = random_bits(g, top + 32) % mpz_class(2 * bound + 1);
    xs.push_back(u - bound);
  }
  int64_t checked = 0;
  for (const mpz_class& X : xs) {
    const std::vector<uint32_t> r = residues_of(X, tb);
    // The kernel's representatives (crt_residue): r_t or r_t + m_t, both < 2 m_t.
    std::vector<uint32_t> lazy = r;
    for (int t = 0; t < s; ++t)
      if ((g.next_u64() & 1) != 0) lazy[t] += tb.m[t];
    const double rn = mpz_to_double_rne(X);
    const int bits = X == 0 ? 0 : static_cast<int>(mpz_sizeinbase(X.get_mpz_t(), 2));
    for (int shift : test_shifts(bits)) {
      const uint64_t expect = detail::double_bits(std::ldexp(rn, shift));
      const bool reverse = (shift & 1) != 0;
      const double legacy = reconstruct_with(legacy_crt_accumulator(), r, tb, shift, reverse);
      ASSERT_EQ(detail::double_bits(legacy), expect)
          << "five-limb code, s=" << s << " X=" << X.get_str() << " shift=" << shift;
      for (int n = detail::limbs_for(s); n <= detail::kLimbs; ++n) {
        const double got = detail::with_crt_accumulator(n, [&](auto acc) {
          return reconstruct_with(acc, r, tb, shift, reverse);
        });
        ASSERT_EQ(detail::double_bits(got), expect)
            << "limbs=" << n << " s=" << s << " X=" << X.get_str() << " shift=" << shift
            << std::hexfloat << " got " << got << " expected " << std::ldexp(rn, shift);
        const double got_lazy = detail::with_crt_accumulator(n, [&](auto acc) {
          return reconstruct_with(acc, lazy, tb, shift, reverse);
        });
        ASSERT_EQ(detail::double_bits(got_lazy), expect)
            << "representatives < 2 m_t, limbs=" << n << " s=" << s << " X=" << X.get_str()
            << " shift=" << shift;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50000);
}

// crt_residue returns p mod m_t up to one m_t: a value in [0, 2 m_t), as add() requires,
// over the whole range of INT32 GEMM outputs (|p| < 2^31 - 2^15, see the k-block limit).
TEST_P(CrtLimbs, KernelResidueIsARepresentativeBelowTwiceTheModulus) {
  const int s = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  const auto limit = static_cast<int32_t>((int64_t{1} << 31) - (1 << 15) - 1);
  std::vector<int32_t> ps = {0, 1, -1, limit, -limit, limit - 1, -limit + 1};
  rng g(4000 + s);
  for (int i = 0; i < 20000; ++i) {
    const int64_t span = 2 * int64_t{limit} + 1;
    ps.push_back(static_cast<int32_t>(static_cast<int64_t>(g.next_u64() % span) - limit));
  }
  for (int t = 0; t < s; ++t) {
    const int64_t m = tb.m[t];
    std::vector<int32_t> around_zero;  // every residue class, both signs
    for (int64_t p = -3 * m; p <= 3 * m; ++p) around_zero.push_back(static_cast<int32_t>(p));
    for (const std::vector<int32_t>* list : {&ps, &around_zero}) {
      for (int32_t p : *list) {
        const uint32_t r = detail::crt_residue(p, tb, t);
        ASSERT_LT(r, 2 * m) << "t=" << t << " p=" << p;
        ASSERT_EQ(((int64_t{p} - r) % m + m) % m, 0) << "t=" << t << " p=" << p;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCounts, CrtLimbs, testing::Range(kMinModuli, kMaxModuli + 1),
                         [](const testing::TestParamInfo<int>& pi) {
                           return "s" + std::to_string(pi.param);
                         });

TEST(ApplyAlphaBeta, BetaZeroNeverReadsC) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(detail::apply_alpha_beta(3.0, 2.0, 0.0, &nan), 6.0);
  EXPECT_EQ(detail::apply_alpha_beta(3.0, -1.5, 0.0, &nan), -4.5);
  const double c = 8.0;
  EXPECT_EQ(detail::apply_alpha_beta(3.0, 2.0, 0.25, &c), 8.0);  // exact: 6 + 2
  EXPECT_TRUE(std::isnan(detail::apply_alpha_beta(3.0, 2.0, 1.0, &nan)));  // beta != 0 reads C
}

}  // namespace
}  // namespace ozdgemm::test
