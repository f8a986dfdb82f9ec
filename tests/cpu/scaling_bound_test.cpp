// The scaling stage (core/scaling_rules.hpp via reference_scaling): the CRT recovers A'B'
// only if every |A'B'|_ij stays below L = floor((1/2 - 2^-31) M). Both modes claim the
// stronger sum_l |A'_il| |B'_lj| <= L; this file checks that claim exactly, with GMP, on
// random and adversarial inputs, and checks that the chosen shifts are scale invariant.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "core/element.hpp"
#include "core/moduli.hpp"
#include "core/scaling_rules.hpp"
#include "cpu/cpu_test_util.hpp"
#include "reference/host_reference.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {
namespace {

using detail::scaling_mode;

// ---------------------------------------------------------------------------------------
// The small helpers the rules are built from.

TEST(ScalingHelpers, FloorDivIsMathematicalFloor) {
  for (int b : {1, 2, 3, 7})
    for (int a = -1000; a <= 1000; ++a)
      ASSERT_EQ(detail::floor_div(a, b), static_cast<int>(std::floor(double(a) / b)))
          << a << "/" << b;
}

TEST(ScalingHelpers, U64ToDoubleUpIsTheSmallestDoubleNotBelowX) {
  rng g(21);
  std::vector<uint64_t> xs = {0, 1, (1ull << 53) - 1, 1ull << 53, (1ull << 53) + 1,
                              (1ull << 53) + 3, (1ull << 62) + 1, (1ull << 63) - 1};
  for (int i = 0; i < 100000; ++i) xs.push_back(g.next_u64() >> (1 + g.next_u64() % 40));
  for (uint64_t x : xs) {
    const double d = detail::u64_to_double_up(x);
    // long double holds every uint64 exactly, so these comparisons are exact.
    ASSERT_GE(static_cast<long double>(d), static_cast<long double>(x)) << x;
    const double below = std::nextafter(d, 0.0);
    if (d > 0) {
      ASSERT_LT(static_cast<long double>(below), static_cast<long double>(x)) << x;
    }
  }
}

TEST(ScalingHelpers, LargestShiftIsLargestAndSatisfiesTheInequality) {
  rng g(22);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::ldexp(1.0 + g.uniform(), static_cast<int>(g.next_u64() % 80));
    const double limit = std::ldexp(1.0 + g.uniform(), static_cast<int>(g.next_u64() % 170));
    for (int step : {1, 2}) {
      const int h = detail::largest_shift(v, limit, step);
      ASSERT_LE(std::ldexp(static_cast<long double>(v), step * h),
                static_cast<long double>(limit));
      ASSERT_GT(std::ldexp(static_cast<long double>(v), step * (h + 1)),
                static_cast<long double>(limit));
    }
  }
}

TEST(ScalingHelpers, BoundQuantizeBoundsXFromAboveIn127thsOfTheVectorMaximum) {
  // |x| <= u 2^(emax+1) / 127 with u in [0, 127], and u at most one unit above the least
  // such integer (two ceilings in a row). 127 |x| is exact in long double (60 bits).
  rng g(23);
  for (int i = 0; i < 100000; ++i) {
    const double x = (g.uniform() - 0.5) * std::exp(3 * g.normal());
    const int emax = std::ilogb(x) + static_cast<int>(g.next_u64() % 20);
    const int u = detail::bound_quantize(x, emax);
    ASSERT_GE(u, x == 0.0 ? 0 : 1);
    ASSERT_LE(u, 127);
    const long double lhs = 127.0L * std::fabs(static_cast<long double>(x));
    ASSERT_LE(lhs, std::ldexp(static_cast<long double>(u), emax + 1)) << x << " " << emax;
    if (u >= 2) {
      ASSERT_GT(lhs, std::ldexp(static_cast<long double>(u - 2), emax + 1));
    }
  }
}

// ---------------------------------------------------------------------------------------
// The bound itself, exactly.

using bound_param = std::tuple<input_kind, scaling_mode, int>;

std::string bound_param_name(const testing::TestParamInfo<bound_param>& info) {
  return input_kind_name(std::get<0>(info.param)) + "_" + mode_name(std::get<1>(info.param)) +
         "_s" + std::to_string(std::get<2>(info.param));
}

// op(A) as m vectors and op(B) as n vectors of exact scaled integers.
struct scaled_operands {
  std::vector<std::vector<mpz_class>> a, b;  // a[i][l] = A'_il, b[j][l] = B'_lj
};

class ScalingBound : public testing::TestWithParam<bound_param> {
 protected:
  static constexpr int64_t m = 13, n = 11, k = 37;
};

// Converts one operand with the chosen exponents and rounding and checks each element twice:
// through scale_to_int's chunks and independently through frexp; both must agree and be
// < 2^78.
void scale_operand(const detail::operand& x, int64_t nvec, int64_t k, const std::vector<int>& e,
                   bool nearest, std::vector<std::vector<mpz_class>>* out, const char* what) {
  const mpz_class limit = mpz_class(1) << detail::kMaxScaledBits;
  out->assign(nvec, std::vector<mpz_class>(k));
  for (int64_t v = 0; v < nvec; ++v)
    for (int64_t l = 0; l < k; ++l) {
      const double val = x.at(v, l);
      const mpz_class exact = exact_round_mpz(val, e[v], nearest);
      ASSERT_LT(abs(exact), limit) << what << " vector " << v << " element " << l
                                   << ": |x 2^e| rounds to >= 2^78, e=" << e[v];
      const mpz_class via_chunks = mpz_from_scaled(detail::scale_to_int(val, e[v], nearest));
      ASSERT_EQ(via_chunks, exact) << what << " vector " << v << " element " << l;
      (*out)[v][l] = exact;
    }
}

TEST_P(ScalingBound, SumOfAbsoluteProductsStaysBelowTheCrtLimit) {
  const auto [kind, mode, s] = GetParam();
  const detail::modulus_table& tb = detail::moduli_for(s);
  const int idx = static_cast<int>(kind);
  const char ta = idx % 2 ? 'T' : 'N', tb_op = idx % 3 ? 'N' : 'T';
  const operand_pair in = make_inputs(kind, m, n, k, 500 + idx);
  const host_matrix A = store_for_op(in.a, ta, 3), B = store_for_op(in.b, tb_op, 2);
  double dummy_c = 0;
  const detail::gemm_problem p =
      make_problem(ta, tb_op, m, n, k, A.ptr(), A.ld, B.ptr(), B.ld, &dummy_c, 1);
  const detail::scaling_result sc = detail::reference_scaling(p, s, mode);
  ASSERT_EQ(sc.exp_a.size(), static_cast<size_t>(m));
  ASSERT_EQ(sc.exp_b.size(), static_cast<size_t>(n));
  for (uint8_t f : sc.flags_a) ASSERT_EQ(f, 0) << "finite data flagged";
  for (uint8_t f : sc.flags_b) ASSERT_EQ(f, 0) << "finite data flagged";

  scaled_operands x;
  // Residues round to nearest from s = 5 at this k (scaling_rules.hpp); the bound must hold
  // either way.
  ASSERT_EQ(sc.nearest, s >= 5);
  scale_operand(p.a, m, k, sc.exp_a, sc.nearest, &x.a, "op(A) row");
  scale_operand(p.b, n, k, sc.exp_b, sc.nearest, &x.b, "op(B) column");
  if (HasFatalFailure()) return;

  const mpz_class L = exact_crt_limit(tb);
  const mpz_class bound = mpz_from_integral_double(tb.bound);
  const mpz_class bound_acc = mpz_from_integral_double(tb.bound_accurate);
  if (mode == scaling_mode::fast) {
    // Fast mode proves ||A'_i||_2^2 <= bound for each vector (then Cauchy-Schwarz).
    for (const auto* side : {&x.a, &x.b})
      for (const auto& vec : *side) {
        mpz_class sq = 0;
        for (const mpz_class& v : vec) sq += v * v;
        ASSERT_LE(sq, bound) << "fast mode: squared 2-norm above the bound";
      }
  }
  mpz_class max_sum = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      mpz_class sum = 0;
      for (int64_t l = 0; l < k; ++l) sum += abs(x.a[i][l]) * abs(x.b[j][l]);
      if (sum > max_sum) max_sum = sum;
      // What the CRT needs (crt.hpp): |A'B'|_ij <= L. Both modes prove it for the sum of
      // absolute products.
      ASSERT_LE(sum, L) << "i=" << i << " j=" << j << " eA=" << sc.exp_a[i]
                        << " eB=" << sc.exp_b[j];
      // The table's documented contract (moduli.hpp: bound is the largest |A'B'|_ij the CRT
      // is asked to recover). Fast mode proves it directly. Accurate mode proves
      // 127^2 sum <= bound_accurate = RD(127^2 L), which for some s exceeds 127^2 bound by
      // ~5e-17 relative, so for accurate mode this line holds by the data's margin, not
      // by the proof; the proven statement is checked just below.
      ASSERT_LE(sum, bound) << "i=" << i << " j=" << j;
      if (mode == scaling_mode::accurate) {
        ASSERT_LE(sum * (127 * 127), bound_acc);
      }
    }
  // Not throwing bits away: on dense, well-scaled data the largest sum reaches a fixed
  // fraction of L (the rules lose at most a factor 4 to the power-of-two step, about 2 to
  // quantisation, and for phi <= 1 about 4 to Cauchy-Schwarz / the 127-level grid).
  if (kind == input_kind::phi_0p5 || kind == input_kind::phi_1 ||
      kind == input_kind::nonnegative) {
    EXPECT_GE(mpz_class(max_sum << 10), L) << "scaling wastes more than 10 bits of the range";
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllInputs, ScalingBound,
    testing::Combine(testing::ValuesIn(all_input_kinds()),
                     testing::Values(scaling_mode::fast, scaling_mode::accurate),
                     testing::Values(2, 4, 8, 14, 20)),
    bound_param_name);

// Larger k with a dominant entry: the bound must hold when one term carries the whole row.
TEST(ScalingBoundLongK, HoldsWithLargeKAndOneDominantEntry) {
  const int64_t m = 3, n = 2, k = 3000;
  for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
    for (int s : {2, 8, 20}) {
      host_matrix a = nonnegative_matrix(m, k, 1.0, 31), b = nonnegative_matrix(k, n, 1.0, 32);
      a(0, 17) = 1e6;
      b(17, 1) = 1e6;
      const detail::gemm_problem p = make_problem('N', 'N', m, n, k, a.ptr(), a.ld, b.ptr(),
                                                  b.ld, nullptr, 1);
      const detail::scaling_result sc = detail::reference_scaling(p, s, mode);
      const mpz_class L = exact_crt_limit(detail::moduli_for(s));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          mpz_class sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += abs(exact_round_mpz(a(i, l), sc.exp_a[i], sc.nearest)) *
                   abs(exact_round_mpz(b(l, j), sc.exp_b[j], sc.nearest));
          ASSERT_LE(sum, L) << mode_name(mode) << " s=" << s << " i=" << i << " j=" << j;
        }
    }
}

// Rounding to nearest where it is tightest: s = 6 and k = 2^14 put L(6) ~ 2^46.8 just above
// k 2^32, so fast mode's g and accurate mode's h are exactly 0 and 16, and every entry sits
// just below the top of its binade (2^15 |x| = 65535.75), so each rounds up to the integer
// bound 2^g q = 2^16 of scaling_rules.hpp. The sum of |A'||B'| is then exactly k 2^32 <= L.
TEST(ScalingBoundRounding, HoldsAtTheThresholdWhereEveryEntryRoundsUp) {
  const int64_t m = 2, n = 2, k = int64_t{1} << 14;
  const int s = 6;
  const detail::modulus_table& tb = detail::moduli_for(s);
  ASSERT_TRUE(detail::rounds_to_nearest(tb, k));
  ASSERT_FALSE(detail::rounds_to_nearest(detail::moduli_for(5), k));
  ASSERT_FALSE(detail::rounds_to_nearest(tb, 4 * k));
  const double top = 65535.75 / 32768.0;  // in [1, 2): emax = 0
  host_matrix a = make_matrix(m, k), b = make_matrix(k, n);
  for (int64_t l = 0; l < k; ++l) {
    for (int64_t i = 0; i < m; ++i) a(i, l) = (l + i) % 3 == 0 ? -top : top;
    for (int64_t j = 0; j < n; ++j) b(l, j) = top;
  }
  const mpz_class L = exact_crt_limit(tb);
  for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate}) {
    const detail::gemm_problem p =
        make_problem('N', 'N', m, n, k, a.ptr(), a.ld, b.ptr(), b.ld, nullptr, 1);
    const detail::scaling_result sc = detail::reference_scaling(p, s, mode);
    ASSERT_TRUE(sc.nearest);
    for (int e : sc.exp_a) ASSERT_EQ(e, 15) << mode_name(mode);
    for (int e : sc.exp_b) ASSERT_EQ(e, 15) << mode_name(mode);
    ASSERT_EQ(exact_round_mpz(top, 15, true), mpz_class(65536));   // rounded up ...
    ASSERT_EQ(exact_round_mpz(top, 15, false), mpz_class(65535));  // ... where truncation is not
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        mpz_class sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += abs(exact_round_mpz(a(i, l), sc.exp_a[i], true)) *
                 abs(exact_round_mpz(b(l, j), sc.exp_b[j], true));
        EXPECT_EQ(sum, mpz_class(1) << 46) << mode_name(mode);
        EXPECT_LE(sum, L) << mode_name(mode);
      }
  }
}

// ---------------------------------------------------------------------------------------
// Scale invariance: multiplying a row of op(A) (a column of op(B)) by 2^e must move that
// vector's exponent by exactly -e, leave every other exponent alone, and scale that row
// (column) of the result by exactly 2^e.

using invariance_param = std::tuple<input_kind, scaling_mode, int>;

class ScaleInvariance : public testing::TestWithParam<invariance_param> {
 protected:
  static constexpr int64_t m = 9, n = 7, k = 23;
};

// x 2^e is exact and reversible: every nonzero entry stays normal.
bool scales_exactly(const host_matrix& x, bool row, int64_t v, int e) {
  const int64_t len = row ? x.cols : x.rows;
  for (int64_t l = 0; l < len; ++l) {
    const double val = row ? x(v, l) : x(l, v);
    if (val == 0.0) continue;
    if (!std::isnormal(val) || !std::isnormal(std::ldexp(val, e))) return false;
  }
  return true;
}

bool is_zero_vector(const host_matrix& x, bool row, int64_t v) {
  const int64_t len = row ? x.cols : x.rows;
  for (int64_t l = 0; l < len; ++l)
    if ((row ? x(v, l) : x(l, v)) != 0.0) return false;
  return true;
}

bool normal_or_zero(double x) { return x == 0.0 || std::isnormal(x); }

TEST_P(ScaleInvariance, ShiftMovesByExactlyMinusEAndResultScalesBy2PowE) {
  const auto [kind, mode, s] = GetParam();
  const operand_pair in = make_inputs(kind, m, n, k, 900 + static_cast<int>(kind));
  // The brief's shifts plus odd ones: a rule that depends on the parity of emax (a
  // 4^g step taken on emax instead of on the norm) is caught too.
  const int exps[] = {-900, -301, -300, -40, -1, 1, 37, 40, 300, 900};
  int tested = 0, compared_elements = 0;

  // Structured bindings are copied in: C++17 lambdas cannot capture them (clang enforces it).
  auto run = [&, s = s, mode = mode](const host_matrix& a, const host_matrix& b,
                                     detail::scaling_result* sc, host_matrix* c) {
    *c = make_matrix(m, n, m + 1, 0.0);
    const detail::gemm_problem p =
        make_problem('N', 'N', m, n, k, a.ptr(), a.ld, b.ptr(), b.ld, c->ptr(), c->ld);
    *sc = detail::reference_scaling(p, s, mode);
    detail::reference_dgemm(p, 1.0, 0.0, s, mode);
  };
  detail::scaling_result base;
  host_matrix c0;
  run(in.a, in.b, &base, &c0);

  for (bool scale_a_row : {true, false})
    for (int64_t v : {int64_t{0}, int64_t{1}}) {
      for (int e : exps) {
        host_matrix a = in.a, b = in.b;
        if (scale_a_row) {
          if (!scales_exactly(a, true, v, e)) continue;
          scale_row(a, v, e);
        } else {
          if (!scales_exactly(b, false, v, e)) continue;
          scale_col(b, v, e);
        }
        ++tested;
        detail::scaling_result sc;
        host_matrix c;
        run(a, b, &sc, &c);
        const auto& base_vec = scale_a_row ? base.exp_a : base.exp_b;
        const auto& new_vec = scale_a_row ? sc.exp_a : sc.exp_b;
        const auto& base_other = scale_a_row ? base.exp_b : base.exp_a;
        const auto& new_other = scale_a_row ? sc.exp_b : sc.exp_a;
        // A zero vector needs no scale: its exponent is 0 before and after.
        const bool zero_vector = is_zero_vector(scale_a_row ? in.a : in.b, scale_a_row, v);
        for (size_t u = 0; u < base_vec.size(); ++u) {
          const int expect = (static_cast<int64_t>(u) == v && !zero_vector) ? base_vec[u] - e
                                                                             : base_vec[u];
          ASSERT_EQ(new_vec[u], expect) << (scale_a_row ? "exp_a[" : "exp_b[") << u
                                        << "] after scaling vector " << v << " by 2^" << e;
        }
        ASSERT_EQ(new_other, base_other) << "other side's exponents changed, e=" << e;
        // The result: row v of C (or column v) times 2^e, bit for bit, wherever neither
        // value is subnormal (there the final rounding is not scale invariant).
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const bool in_vec = scale_a_row ? i == v : j == v;
            const double expect = in_vec ? std::ldexp(c0(i, j), e) : c0(i, j);
            if (!normal_or_zero(c0(i, j)) || !normal_or_zero(expect)) continue;
            ++compared_elements;
            ASSERT_EQ(detail::double_bits(c(i, j)), detail::double_bits(expect))
                << "C(" << i << "," << j << ") after scaling " << (scale_a_row ? "row " : "col ")
                << v << " by 2^" << e << std::hexfloat << ": " << c(i, j) << " vs " << expect;
          }
      }
    }
  EXPECT_GE(tested, 20) << "too few scalings were representable";
  EXPECT_GT(compared_elements, tested * (m + n) / 2);
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ScaleInvariance,
    testing::Combine(testing::Values(input_kind::phi_1, input_kind::phi_4,
                                     input_kind::nonnegative, input_kind::rows_pm40,
                                     input_kind::inner_pm40, input_kind::zero_rows_cols),
                     testing::Values(scaling_mode::fast, scaling_mode::accurate),
                     testing::Values(2, 8, 14, 20)),
    bound_param_name);

}  // namespace
}  // namespace ozdgemm::test
