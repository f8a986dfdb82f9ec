// The Karatsuba form's arithmetic (core/karatsuba.hpp) against plain integer arithmetic:
// residue_sum over every pair of representatives of every modulus, karatsuba_parts at the ends
// of the INT32 range and at random, and the whole form on the embedding's residue planes
// (core/complex_embedding.hpp), indexed as engine/emulate.cpp's karatsuba_gemms indexes them:
// the three products of halves, combined, are congruent to the four-product T = A' B* for
// every modulus, padding included; and the partner columns of B* whose magnitudes the residue
// pass's mirrored band codes rely on.
#include "core/karatsuba.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/complex_embedding.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::test {
namespace {

using detail::kMaxModuli;
using detail::modulus_table;

// The engine's representative of v mod m: r - 128 for r = (v + 128) mod m in [0, m).
int64_t engine_residue(int64_t v, int64_t m) { return ((v + 128) % m + m) % m - 128; }

bool congruent(int64_t x, int64_t y, int64_t m) { return ((x - y) % m + m) % m == 0; }

// A' and B* of op(A) (m x k) and op(B) (k x n) as pack_a_element and pack_b_element write them.
struct packed_embedding {
  int64_t kh, nh, K, N;
  std::vector<double> ap, bp;  // A' (m x K, ld m), B* (K x N, ld K)
};
packed_embedding pack(const detail::complex_operand& oa, const detail::complex_operand& ob,
                      int64_t m, int64_t n, int64_t k) {
  packed_embedding e;
  e.kh = detail::embedding_half(k);
  e.nh = detail::embedding_half(n);
  e.K = 2 * e.kh;
  e.N = 2 * e.nh;
  e.ap.resize(static_cast<size_t>(m * e.K));
  e.bp.resize(static_cast<size_t>(e.K * e.N));
  for (int64_t l = 0; l < e.kh; ++l)
    for (int64_t i = 0; i < m; ++i) detail::pack_a_element(oa, m, k, i, l, false, e.ap.data());
  for (int64_t j = 0; j < e.nh; ++j)
    for (int64_t l = 0; l < e.kh; ++l) detail::pack_b_element(ob, n, k, j, l, false, e.bp.data());
  return e;
}

TEST(Karatsuba, ResidueSumAndDifferenceAreTheEngineResiduesForEveryPairAndModulus) {
  for (int t = 0; t < kMaxModuli; ++t) {
    const int64_t m = detail::kModuli[t];
    int64_t wrong_sum = 0, wrong_difference = 0;
    for (int64_t x = -128; x <= m - 129; ++x)
      for (int64_t y = -128; y <= m - 129; ++y) {
        const auto x8 = static_cast<int8_t>(x), y8 = static_cast<int8_t>(y);
        const auto mu = static_cast<uint32_t>(m);
        wrong_sum += detail::residue_sum(x8, y8, mu) != engine_residue(x + y, m);
        wrong_difference += detail::residue_difference(x8, y8, mu) != engine_residue(x - y, m);
      }
    EXPECT_EQ(wrong_sum, 0) << "modulus " << m;
    EXPECT_EQ(wrong_difference, 0) << "modulus " << m;
  }
}

TEST(Karatsuba, PartsAreCongruentToTheCombinationsAndSmall) {
  const modulus_table& tb = detail::moduli_for(kMaxModuli);
  // The k-block limit: |p| < 2^31 - 2^15 (core/gemm_problem.hpp).
  const int32_t edge = (int32_t{1} << 30) + ((int32_t{1} << 30) - (1 << 15) - 1);
  std::vector<int32_t> values = {0, 1, -1, 127, -128, 16384, -16384, edge, -edge, edge - 1};
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int32_t> any(-edge, edge);
  for (int i = 0; i < 200; ++i) values.push_back(any(rng));
  int64_t checked = 0;
  for (int t = 0; t < kMaxModuli; ++t) {
    const int64_t m = tb.m[t];
    for (size_t a = 0; a < values.size(); a += 3)
      for (size_t b = 1; b < values.size(); b += 5)
        for (size_t c = 2; c < values.size(); c += 7) {
          const int64_t p1 = values[a], p2 = values[b], p3 = values[c];
          const detail::karatsuba_part_sums r = detail::karatsuba_parts(
              static_cast<int32_t>(p1), static_cast<int32_t>(p2), static_cast<int32_t>(p3), tb, t);
          ASSERT_TRUE(congruent(r.re, p1 - p2, m)) << p1 << " " << p2 << " mod " << m;
          ASSERT_TRUE(congruent(r.im, p3 - p1 - p2, m)) << p1 << " " << p2 << " " << p3;
          ASSERT_GT(r.re, -m);
          ASSERT_LT(r.re, m);
          ASSERT_GT(r.im, -2 * m);
          ASSERT_LT(r.im, m);
          ++checked;
        }
  }
  EXPECT_GT(checked, 100000);
}

// What the residue pass's mirrored band codes rely on (kernels/residues.cu): in B* as
// pack_b_element writes it, the first half of column j and the second half of
// embedding_partner(j) hold the same magnitudes, element by element, and the first halves with
// their partners' second halves cover every element of B* exactly once.
TEST(Karatsuba, EveryColumnsFirstHalfIsItsPartnersSecondHalfInMagnitude) {
  for (const std::array<int64_t, 2>& dims :
       std::vector<std::array<int64_t, 2>>{{1, 1}, {5, 7}, {16, 33}, {40, 17}}) {
    const int64_t n = dims[0], k = dims[1];
    std::mt19937_64 rng(static_cast<uint64_t>(n * 100 + k));
    std::uniform_real_distribution<double> val(-1.0, 1.0);
    std::vector<double> b(static_cast<size_t>(2 * k * n));
    for (double& x : b) x = val(rng);
    const detail::complex_operand ob =
        detail::complex_operand_b(detail::op_kind::n, false, b.data(), k);
    const int64_t kh = detail::embedding_half(k), nh = detail::embedding_half(n);
    const int64_t K = 2 * kh, N = 2 * nh;
    std::vector<double> bp(static_cast<size_t>(K * N), 1e300);  // every element gets written
    for (int64_t j = 0; j < nh; ++j)
      for (int64_t l = 0; l < kh; ++l) detail::pack_b_element(ob, n, k, j, l, false, bp.data());
    std::vector<int> covered(static_cast<size_t>(K * N), 0);
    for (int64_t j = 0; j < N; ++j) {
      const int64_t p = detail::embedding_partner(j, nh);
      ASSERT_GE(p, 0);
      ASSERT_LT(p, N);
      EXPECT_EQ(detail::embedding_partner(p, nh), j) << "the partner's partner";
      for (int64_t l = 0; l < kh; ++l) {
        EXPECT_EQ(std::fabs(bp[j * K + l]), std::fabs(bp[p * K + kh + l]))
            << "n=" << n << " k=" << k << " j=" << j << " l=" << l;
        ++covered[j * K + l];
        ++covered[p * K + kh + l];
      }
    }
    for (size_t e = 0; e < covered.size(); ++e) EXPECT_EQ(covered[e], 1) << "element " << e;
  }
}

// Small integers as doubles: the pack writes them where the engine's planes take them, and
// their residues are exact.
TEST(Karatsuba, ThreeProductsOfHalvesGiveTheFourProductTModEveryModulus) {
  const modulus_table& tb = detail::moduli_for(kMaxModuli);
  // Plain variables, not a structured binding: the lambdas below capture them (C++17).
  for (const std::array<int64_t, 3>& dims :
       std::vector<std::array<int64_t, 3>>{{3, 5, 7}, {17, 16, 33}}) {
    const int64_t m = dims[0], n = dims[1], k = dims[2];
    std::mt19937_64 rng(static_cast<uint64_t>(m * 100 + n * 10 + k));
    std::uniform_int_distribution<int> val(-1000, 1000);
    std::vector<double> a(static_cast<size_t>(2 * m * k)), b(static_cast<size_t>(2 * k * n));
    for (double& x : a) x = val(rng);
    for (double& x : b) x = val(rng);
    // op(A) = A (m x k, ld m), op(B) = B (k x n, ld k), interleaved; B conjugated (op C).
    const detail::complex_operand oa =
        detail::complex_operand_a(detail::op_kind::n, false, a.data(), m);
    const detail::complex_operand ob =
        detail::complex_operand_b(detail::op_kind::t, true, b.data(), n);
    const packed_embedding e = pack(oa, ob, m, n, k);
    const int64_t kh = e.kh, nh = e.nh, K = e.K, N = e.N;
    const std::vector<double>& ap = e.ap;
    const std::vector<double>& bp = e.bp;
    // The four-product T = A' B*, exactly, and the complex product directly.
    std::vector<int64_t> T(static_cast<size_t>(m * N));
    for (int64_t j = 0; j < N; ++j)
      for (int64_t i = 0; i < m; ++i) {
        int64_t sum = 0;
        for (int64_t l = 0; l < K; ++l)
          sum += static_cast<int64_t>(ap[l * m + i]) * static_cast<int64_t>(bp[j * K + l]);
        T[j * m + i] = sum;
      }
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        int64_t re = 0, im = 0;
        for (int64_t l = 0; l < k; ++l) {
          const detail::complex_value x = oa.at(i, l), y = ob.at(j, l);
          re += static_cast<int64_t>(x.re * y.re - x.im * y.im);
          im += static_cast<int64_t>(x.re * y.im + x.im * y.re);
        }
        ASSERT_EQ(T[j * m + i], re) << "T_re at " << i << "," << j;
        ASSERT_EQ(T[(nh + j) * m + i], im) << "T_im at " << i << "," << j;
      }
    for (int t = 0; t < kMaxModuli; ++t) {
      const int64_t mod = tb.m[t];
      // The planes as the engine holds them: A's row i is A' row i (K wide), B's row j is B*
      // column j (K wide).
      auto ra = [&](int64_t i, int64_t l) {
        return engine_residue(static_cast<int64_t>(ap[l * m + i]), mod);
      };
      auto rb = [&](int64_t j, int64_t l) {
        return engine_residue(static_cast<int64_t>(bp[j * K + l]), mod);
      };
      for (int64_t j = 0; j < nh; ++j)
        for (int64_t i = 0; i < m; ++i) {
          int64_t p1 = 0, p2 = 0, p3 = 0;
          for (int64_t l = 0; l < kh; ++l) {
            p1 += ra(i, l) * rb(j, l);
            p2 += ra(i, kh + l) * rb(nh + j, l);
            const int64_t sa =
                detail::residue_sum(static_cast<int8_t>(ra(i, l)),
                                    static_cast<int8_t>(ra(i, kh + l)), static_cast<uint32_t>(mod));
            const int64_t sb =
                detail::residue_sum(static_cast<int8_t>(rb(j, l)),
                                    static_cast<int8_t>(rb(nh + j, l)), static_cast<uint32_t>(mod));
            p3 += sa * sb;
          }
          const detail::karatsuba_part_sums r = detail::karatsuba_parts(
              static_cast<int32_t>(p1), static_cast<int32_t>(p2), static_cast<int32_t>(p3), tb, t);
          ASSERT_TRUE(congruent(r.re, T[j * m + i], mod)) << i << "," << j << " mod " << mod;
          ASSERT_TRUE(congruent(r.im, T[(nh + j) * m + i], mod)) << i << "," << j << " mod " << mod;
        }
    }
  }
}

// A call whose op(B) is op(A)^T or op(A)^H (engine/pipeline.hpp's b_from_a) takes B's planes from
// A's as karatsuba_gemms indexes them: Re and Im of B's column j are A's row j's halves, Re + Im
// A's sums (^T) or Re - Im (^H, with P2 negated in the CRT). Every part the CRT receives must
// equal, bit for bit, the part from B's own planes (B* packed and reduced), for every modulus.
TEST(Karatsuba, BFromAGivesTheSamePartsAsBsOwnPlanes) {
  const modulus_table& tb = detail::moduli_for(kMaxModuli);
  for (const bool conjugate : {false, true})
    for (const std::array<int64_t, 2>& dims :
         std::vector<std::array<int64_t, 2>>{{3, 5}, {17, 33}}) {
      const int64_t n = dims[0], k = dims[1];
      std::mt19937_64 rng(static_cast<uint64_t>(n * 10 + k + conjugate));
      std::uniform_int_distribution<int> val(-1000, 1000);
      std::vector<double> a(static_cast<size_t>(2 * n * k));
      for (double& x : a) x = val(rng);
      // op(A) = A (n x k, ld n); op(B) = A^T or A^H: the same memory.
      const detail::complex_operand oa =
          detail::complex_operand_a(detail::op_kind::n, false, a.data(), n);
      const detail::complex_operand ob =
          detail::complex_operand_b(detail::op_kind::t, conjugate, a.data(), n);
      const packed_embedding e = pack(oa, ob, n, n, k);
      const int64_t kh = e.kh, nh = e.nh, K = e.K;
      const std::vector<double>& ap = e.ap;
      const std::vector<double>& bp = e.bp;
      for (int t = 0; t < kMaxModuli; ++t) {
        const int64_t mod = tb.m[t];
        const auto mu = static_cast<uint32_t>(mod);
        auto ra = [&](int64_t i, int64_t l) {
          return static_cast<int8_t>(engine_residue(static_cast<int64_t>(ap[l * n + i]), mod));
        };
        auto rb = [&](int64_t j, int64_t l) {
          return static_cast<int8_t>(engine_residue(static_cast<int64_t>(bp[j * K + l]), mod));
        };
        int64_t differ = 0;
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < n; ++i) {
            int64_t own[3] = {0, 0, 0}, from_a[3] = {0, 0, 0};
            for (int64_t l = 0; l < kh; ++l) {
              const int64_t sa = detail::residue_sum(ra(i, l), ra(i, kh + l), mu);
              own[0] += ra(i, l) * rb(j, l);
              own[1] += ra(i, kh + l) * rb(nh + j, l);
              own[2] += sa * detail::residue_sum(rb(j, l), rb(nh + j, l), mu);
              from_a[0] += ra(i, l) * ra(j, l);
              from_a[1] += ra(i, kh + l) * ra(j, kh + l);
              from_a[2] += sa * (conjugate ? detail::residue_difference(ra(j, l), ra(j, kh + l), mu)
                                           : detail::residue_sum(ra(j, l), ra(j, kh + l), mu));
            }
            if (conjugate) from_a[1] = -from_a[1];
            const detail::karatsuba_part_sums x =
                detail::karatsuba_parts(static_cast<int32_t>(own[0]), static_cast<int32_t>(own[1]),
                                        static_cast<int32_t>(own[2]), tb, t);
            const detail::karatsuba_part_sums y = detail::karatsuba_parts(
                static_cast<int32_t>(from_a[0]), static_cast<int32_t>(from_a[1]),
                static_cast<int32_t>(from_a[2]), tb, t);
            differ += x.re != y.re || x.im != y.im;
          }
        EXPECT_EQ(differ, 0) << (conjugate ? "^H" : "^T") << " n=" << n << " k=" << k << " modulus "
                             << mod;
      }
    }
}

}  // namespace
}  // namespace ozdgemm::test
