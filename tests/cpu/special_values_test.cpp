// BLAS semantics of reference_dgemm at the edges: alpha == 0, beta == 0, k == 0, m or n == 0,
// Inf and NaN in A or B (the class of every output must be what native DGEMM's plain FP64
// loop gives), zeros, subnormals, and magnitudes near overflow.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/accuracy_bound.hpp"
#include "cpu/cpu_test_util.hpp"
#include "reference/host_reference.hpp"
#include "support/dd_reference.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {
namespace {

using detail::scaling_mode;


using special_param = std::tuple<scaling_mode, int>;

class SpecialValues : public testing::TestWithParam<special_param> {
 protected:
  scaling_mode mode() const { return std::get<0>(GetParam()); }
  int s() const { return std::get<1>(GetParam()); }

  // Runs reference_dgemm on column-major A (m x k, 'N') and B (k x n, 'N') into C.
  void run(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const host_matrix& A,
           const host_matrix& B, double beta, host_matrix& C) const {
    const detail::gemm_problem p =
        make_problem(ta, tb, m, n, k, A.ptr(), A.ld, B.ptr(), B.ld, C.ptr(), C.ld);
    detail::reference_dgemm(p, alpha, beta, s(), mode());
  }
};

TEST_P(SpecialValues, AlphaZeroIgnoresNaNAndInfInAAndB) {
  const int64_t m = 5, n = 4, k = 6;
  host_matrix A = make_matrix(m, k, 0, kNaN), B = make_matrix(k, n, 0, kNaN);
  A(0, 0) = kInf;
  B(1, 1) = -kInf;
  const host_matrix C0 = phi_matrix(m, n, 1.0, 1);
  for (double beta : {0.0, 1.0, 0.5, -3.0}) {
    host_matrix C = C0;
    run('N', 'N', m, n, k, 0.0, A, B, beta, C);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        // BLAS: alpha == 0 means A and B are not referenced; C = beta C (exactly: one product).
        const double expect = beta == 0.0 ? 0.0 : beta * C0(i, j);
        ASSERT_EQ(C(i, j), expect) << "beta=" << beta << " (" << i << "," << j << ")";
      }
  }
}

TEST_P(SpecialValues, BetaZeroNeverReadsC) {
  const int64_t m = 6, n = 5, k = 7;
  const host_matrix A = phi_matrix(m, k, 1.0, 2), B = phi_matrix(k, n, 1.0, 3);
  for (double poison : {kNaN, kInf, -kInf}) {
    host_matrix C = make_matrix(m, n, 0, poison), C0 = C, R = C;
    run('N', 'N', m, n, k, 1.0, A, B, 0.0, C);
    dd_gemm('N', 'N', m, n, k, 1.0, A.ptr(), A.ld, B.ptr(), B.ld, 0.0, R.ptr(), R.ld);
    const detail::gemm_problem p =
        make_problem('N', 'N', m, n, k, A.ptr(), A.ld, B.ptr(), B.ld, C.ptr(), C.ld);
    const bound_check_result r = check_error_bound(
        p, detail::reference_scaling(p, s(), mode()), 1.0, 0.0, C0.ptr(), C.ptr(), R.ptr(), C.ld);
    EXPECT_EQ(r.checked, m * n) << "a poisoned C leaked into the result";
    EXPECT_TRUE(r.first_failure.empty()) << r.first_failure;
  }
}

TEST_P(SpecialValues, KZeroGivesBetaC) {
  const int64_t m = 4, n = 3;
  const host_matrix A = make_matrix(m, 1, 0, kNaN), B = make_matrix(1, n, 0, kNaN);
  const host_matrix C0 = phi_matrix(m, n, 1.0, 4);
  for (double beta : {0.0, 1.0, 2.0, -0.75}) {
    host_matrix C = beta == 0.0 ? make_matrix(m, n, 0, kNaN) : C0;
    run('N', 'N', m, n, 0, 1.5, A, B, beta, C);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i)
        ASSERT_EQ(C(i, j), beta == 0.0 ? 0.0 : beta * C0(i, j)) << "beta=" << beta;
  }
}

TEST_P(SpecialValues, EmptyMOrNLeavesCUntouched) {
  const host_matrix A = phi_matrix(4, 4, 1.0, 5), B = phi_matrix(4, 4, 1.0, 6);
  const host_matrix C0 = phi_matrix(4, 4, 1.0, 7);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{0, 4}, {4, 0}, {0, 0}})
    for (double alpha : {1.0, 0.0})
      for (double beta : {0.0, 2.0}) {
        host_matrix C = C0;
        run('N', 'N', m, n, 4, alpha, A, B, beta, C);
        for (size_t e = 0; e < C.data.size(); ++e)
          ASSERT_EQ(detail::double_bits(C.data[e]), detail::double_bits(C0.data[e]))
              << "m=" << m << " n=" << n << " wrote element " << e;
      }
}

TEST_P(SpecialValues, ZeroMatricesGiveExactZerosAndBetaC) {
  const int64_t m = 7, n = 6, k = 9;
  const host_matrix Z = make_matrix(m, k, 0, 0.0), NZ = make_matrix(m, k, 0, -0.0);
  const host_matrix Bz = make_matrix(k, n, 0, 0.0), Br = phi_matrix(k, n, 2.0, 8);
  const host_matrix C0 = phi_matrix(m, n, 1.0, 9);
  for (const host_matrix* a : {&Z, &NZ})
    for (const host_matrix* b : {&Bz, &Br})
      for (double beta : {0.0, 0.5}) {
        host_matrix C = beta == 0.0 ? make_matrix(m, n, 0, kNaN) : C0;
        run('N', 'N', m, n, k, -1.5, *a, *b, beta, C);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < m; ++i)
            ASSERT_EQ(C(i, j), beta == 0.0 ? 0.0 : beta * C0(i, j))
                << "(" << i << "," << j << ") beta=" << beta;
      }
}

// The class (NaN, +Inf, -Inf, finite) of every element against the plain FP64 loop, and
// every element whose row and column are finite against the accuracy bound.
void check_against_native(const detail::gemm_problem& p, const detail::scaling_result& sc,
                          char ta, char tb, double alpha, double beta, const host_matrix& A,
                          const host_matrix& B, const host_matrix& C0, const host_matrix& C,
                          int* nonfinite_seen) {
  host_matrix N = C0, R = C0;
  naive_gemm(ta, tb, p.m, p.n, p.k, alpha, A.ptr(), A.ld, B.ptr(), B.ld, beta, N.ptr(), N.ld);
  dd_gemm(ta, tb, p.m, p.n, p.k, alpha, A.ptr(), A.ld, B.ptr(), B.ld, beta, R.ptr(), R.ld);
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t i = 0; i < p.m; ++i) {
      ASSERT_STREQ(fp_class(C(i, j)), fp_class(N(i, j)))
          << "(" << i << "," << j << ") C=" << C(i, j) << " native loop=" << N(i, j);
      if (!std::isfinite(N(i, j))) ++*nonfinite_seen;
    }
  const bound_check_result r = check_error_bound(p, sc, alpha, beta, C0.ptr(), C.ptr(),
                                                 R.ptr(), C.ld);
  EXPECT_TRUE(r.first_failure.empty()) << r.first_failure;
}


// C = A B (op N, alpha 1, beta 0, C filled with NaN that must not be read) through the host
// reference, then check_against_native; returns the count of non-finite elements seen.
int emulate_nn_and_check(const host_matrix& a, const host_matrix& b, int s,
                         detail::scaling_mode mode) {
  const int64_t m = a.rows, n = b.cols, k = a.cols;
  host_matrix C = make_matrix(m, n, 0, kNaN);
  const host_matrix C0 = C;
  const detail::gemm_problem p =
      make_problem('N', 'N', m, n, k, a.ptr(), a.ld, b.ptr(), b.ld, C.ptr(), C.ld);
  const detail::scaling_result sc = detail::reference_scaling(p, s, mode);
  detail::reference_dgemm(p, 1.0, 0.0, s, mode);
  int nonfinite = 0;
  check_against_native(p, sc, 'N', 'N', 1.0, 0.0, a, b, C0, C, &nonfinite);
  return nonfinite;
}

TEST_P(SpecialValues, InfAndNaNGiveTheNativeClassEverywhere) {
  const int64_t m = 12, n = 10, k = 16;
  for (auto [ta, tb] : {std::pair<char, char>{'N', 'N'}, {'T', 'T'}})
    for (auto [alpha, beta] : {std::pair<double, double>{1.0, 0.0}, {-1.5, 0.25}}) {
      host_matrix a = phi_matrix(m, k, 1.0, 10), b = phi_matrix(k, n, 1.0, 11);
      a(0, 3) = kInf;            // row 0: Inf ...
      b(3, 0) = 0.0;             // ... times 0 in column 0: NaN at (0, 0)
      a(1, 2) = kInf;            // row 1: +Inf and -Inf in one dot
      a(1, 5) = -kInf;
      b(2, 1) = 1.0;             // column 1: both terms +-Inf * positive: NaN at (1, 1)
      b(5, 1) = 2.0;
      a(2, 7) = kNaN;            // row 2: NaN
      b(4, 3) = -kInf;           // column 3: -Inf
      b(0, 4) = kInf;            // column 4: Inf against a zero of row 5
      a(5, 0) = 0.0;
      a(6, 1) = -kInf;           // -Inf * +Inf at (6, 5)
      b(1, 5) = kInf;
      b(9, 6) = kNaN;            // column 6: NaN
      const host_matrix A = store_for_op(a, ta, 1), B = store_for_op(b, tb, 2);
      const host_matrix C0 = phi_matrix(m, n, 1.0, 12);
      host_matrix C = beta == 0.0 ? make_matrix(m, n, 0, kNaN) : C0;
      const host_matrix Cin = C;
      const detail::gemm_problem p =
          make_problem(ta, tb, m, n, k, A.ptr(), A.ld, B.ptr(), B.ld, C.ptr(), C.ld);
      const detail::scaling_result sc = detail::reference_scaling(p, s(), mode());
      detail::reference_dgemm(p, alpha, beta, s(), mode());
      int nonfinite = 0;
      check_against_native(p, sc, ta, tb, alpha, beta, A, B, Cin, C, &nonfinite);
      // Exactly the rows 0, 1, 2, 6 of op(A) and columns 3, 4, 5, 6 of op(B) hold
      // non-finite entries; every element they touch is non-finite, no other is.
      EXPECT_EQ(nonfinite, 4 * n + 4 * (m - 4));
      EXPECT_TRUE(std::isnan(C(0, 0)));
      EXPECT_TRUE(std::isnan(C(1, 1)));
      EXPECT_TRUE(std::isnan(C(5, 4)));
    }
}

TEST_P(SpecialValues, RandomNonFinitePlacementsGiveTheNativeClass) {
  const int64_t m = 9, n = 8, k = 11;
  const double specials[] = {kInf, -kInf, kNaN, 0.0};
  for (uint64_t seed = 0; seed < 25; ++seed) {
    rng g(seed * 77 + 5);
    host_matrix a = phi_matrix(m, k, 1.0, seed + 100), b = phi_matrix(k, n, 1.0, seed + 200);
    for (int t = 0; t < 6; ++t) {
      a(g.next_u64() % m, g.next_u64() % k) = specials[g.next_u64() % 4];
      b(g.next_u64() % k, g.next_u64() % n) = specials[g.next_u64() % 4];
    }
    emulate_nn_and_check(a, b, s(), mode());
    if (HasFatalFailure()) return;
  }
}

TEST_P(SpecialValues, SubnormalInputsStayWithinTheBound) {
  const int64_t m = 7, n = 5, k = 13;
  for (int b_exp : {100, 0, -30}) {
    // Every entry of op(A) subnormal; op(B) scaled by 2^b_exp: products are normal
    // (b_exp = 100), subnormal (0) or underflow to zero (-30).
    host_matrix a = make_matrix(m, k);
    for (int64_t i = 0; i < m; ++i) subnormal_row(a, i, 300 + i);
    host_matrix b = phi_matrix(k, n, 1.0, 13);
    for (int64_t j = 0; j < n; ++j) scale_col(b, j, b_exp);
    const int nonfinite = emulate_nn_and_check(a, b, s(), mode());
    EXPECT_EQ(nonfinite, 0);
  }
}

TEST_P(SpecialValues, HugeInputsOverflowOnlyWhereTheExactResultDoes) {
  const int64_t m = 4, n = 4, k = 8;
  host_matrix a = phi_matrix(m, k, 1.0, 14), b = phi_matrix(k, n, 1.0, 15);
  rng g(16);
  for (int64_t l = 0; l < k; ++l) {
    a(0, l) = DBL_MAX * (0.5 + 0.5 * g.uniform());        // row 0: near DBL_MAX, positive
    a(1, l) = std::ldexp(g.uniform() - 0.5, 1000);        // row 1: near 2^1000
    b(l, 0) = 1.0 + g.uniform();                          // (0,0): sum > 4 DBL_MAX: +Inf
    b(l, 1) = -(1.0 + g.uniform());                       // (0,1): -Inf
    b(l, 2) = std::ldexp(1.0 + g.uniform(), -20);         // (0,2): ~2^1007, finite
    b(l, 3) = std::ldexp(g.uniform() - 0.5, -40);         // (1,3): ~2^960, finite
  }
  for (auto [alpha, beta] : {std::pair<double, double>{1.0, 0.0}, {-1.5, 0.25}}) {
    const host_matrix C0 = phi_matrix(m, n, 1.0, 17);
    host_matrix C = beta == 0.0 ? make_matrix(m, n, 0, kNaN) : C0;
    const host_matrix Cin = C;
    const detail::gemm_problem p =
        make_problem('N', 'N', m, n, k, a.ptr(), a.ld, b.ptr(), b.ld, C.ptr(), C.ld);
    const detail::scaling_result sc = detail::reference_scaling(p, s(), mode());
    detail::reference_dgemm(p, alpha, beta, s(), mode());
    int nonfinite = 0;
    check_against_native(p, sc, 'N', 'N', alpha, beta, a, b, Cin, C, &nonfinite);
    EXPECT_TRUE(std::isinf(C(0, 0)));
    EXPECT_TRUE(std::isinf(C(0, 1)));
    EXPECT_NE(std::signbit(C(0, 0)), std::signbit(C(0, 1)));
    EXPECT_TRUE(std::isfinite(C(0, 2)));
    EXPECT_GT(std::fabs(C(0, 2)), std::ldexp(1.0, 1000));
    EXPECT_TRUE(std::isfinite(C(1, 3)));
    EXPECT_EQ(nonfinite, 2);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, SpecialValues,
    testing::Combine(testing::Values(scaling_mode::fast, scaling_mode::accurate),
                     testing::Values(2, 8, 14, 20)),
    [](const testing::TestParamInfo<special_param>& pi) {
      return mode_name(std::get<0>(pi.param)) + "_s" + std::to_string(std::get<1>(pi.param));
    });

}  // namespace
}  // namespace ozdgemm::test
