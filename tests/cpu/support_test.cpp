// The test support library checks itself: the double-double reference against exact
// rational arithmetic (GMP), the metrics on hand-made cases, and the input generators'
// determinism and layouts. The accuracy tests' bound relies on the dd error stated in
// dd_reference.hpp; this is where that statement is tested.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cpu/cpu_test_util.hpp"
#include "support/dd_reference.hpp"
#include "support/inputs.hpp"
#include "support/metrics.hpp"

namespace ozdgemm::test {
namespace {

// Exact dyadic values: num * 2^-scale.
struct dyadic {
  mpz_class num;
  int scale;
};

dyadic exact_double(double x) {
  if (x == 0.0) return {0, 0};
  uint64_t mant;
  int exp2;
  split_double(x, &mant, &exp2);
  mpz_class v(static_cast<unsigned long>(mant));
  return {x < 0 ? mpz_class(-v) : v, -exp2};
}

dyadic mul(const dyadic& x, const dyadic& y) { return {x.num * y.num, x.scale + y.scale}; }

dyadic add(dyadic x, dyadic y) {
  if (x.scale < y.scale) std::swap(x, y);
  mpz_class yn = y.num;
  mpz_mul_2exp(yn.get_mpz_t(), yn.get_mpz_t(), static_cast<mp_bitcnt_t>(x.scale - y.scale));
  return {x.num + yn, x.scale};
}

long double to_long_double(const dyadic& x) {
  long exp = 0;
  const double mant = mpz_get_d_2exp(&exp, x.num.get_mpz_t());
  return std::ldexp(static_cast<long double>(mant), static_cast<int>(exp) - x.scale);
}

TEST(DdReference, WithinItsStatedErrorOfTheExactResult) {
  // dd_reference.hpp: |R - exact| <= 2^-53 |R| + (k + 2) 2^-100 (|alpha| |A||B| + |beta C0|).
  for (double phi : {0.5, 2.0, 4.0})
    for (auto [alpha, beta] : {std::pair<double, double>{1.0, 0.0}, {-1.5, 0.25}}) {
      const int64_t m = 9, n = 7, k = 40;
      const host_matrix a = phi_matrix(m, k, phi, 1), b = phi_matrix(k, n, phi, 2);
      const host_matrix c0 = phi_matrix(m, n, phi, 3);
      host_matrix r = c0;
      dd_gemm('N', 'N', m, n, k, alpha, a.ptr(), a.ld, b.ptr(), b.ld, beta, r.ptr(), r.ld);
      int correctly_rounded = 0;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          dyadic dot{0, 0};
          long double ab = 0;
          for (int64_t l = 0; l < k; ++l) {
            dot = add(dot, mul(exact_double(a(i, l)), exact_double(b(l, j))));
            ab += std::fabs(static_cast<long double>(a(i, l)) * b(l, j));
          }
          dyadic exact = mul(exact_double(alpha), dot);
          if (beta != 0.0) exact = add(exact, mul(exact_double(beta), exact_double(c0(i, j))));
          const dyadic diff = add(exact_double(r(i, j)), {-exact.num, exact.scale});
          const long double dist = std::fabs(to_long_double(diff));
          const long double bound =
              std::ldexp(std::fabs(static_cast<long double>(r(i, j))), -53) +
              (k + 2) * std::ldexp(1.0L, -100) *
                  (std::fabs(alpha) * ab + std::fabs(static_cast<long double>(beta) * c0(i, j)));
          ASSERT_LE(dist, bound) << "phi=" << phi << " (" << i << "," << j << ")";
          // Correct rounding: within half an ulp of r.
          if (dist <= std::ldexp(1.0L, std::ilogb(r(i, j)) - 53)) ++correctly_rounded;
        }
      EXPECT_GE(correctly_rounded, m * n - 1) << "dd_gemm should round correctly almost always";
    }
}

TEST(DdReference, OpsAndLeadingDimensionsSelectTheSameProduct) {
  const int64_t m = 5, n = 4, k = 6;
  const host_matrix a = phi_matrix(m, k, 1.0, 4), b = phi_matrix(k, n, 1.0, 5);
  host_matrix want = make_matrix(m, n);
  dd_gemm('N', 'N', m, n, k, 1.0, a.ptr(), a.ld, b.ptr(), b.ld, 0.0, want.ptr(), want.ld);
  for (char ta : {'N', 'T', 'C', 't'})
    for (char tb : {'N', 'T', 'c', 'n'}) {
      const host_matrix A = store_for_op(a, ta, 3), B = store_for_op(b, tb, 1);
      host_matrix got = make_matrix(m, n, m + 2, std::numeric_limits<double>::quiet_NaN());
      dd_gemm(ta, tb, m, n, k, 1.0, A.ptr(), A.ld, B.ptr(), B.ld, 0.0, got.ptr(), got.ld);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          EXPECT_EQ(got(i, j), want(i, j)) << ta << tb;
          EXPECT_EQ(op_at(ta, A.ptr(), A.ld, i, j % k), a(i, j % k));
        }
    }
  host_matrix c = make_matrix(m, n);
  EXPECT_THROW(dd_gemm('X', 'N', m, n, k, 1.0, a.ptr(), a.ld, b.ptr(), b.ld, 0.0, c.ptr(), c.ld),
               std::invalid_argument);
}

TEST(DdReference, NonFiniteResultsCarryTheNaiveLoopsClass) {
  const double inf = std::numeric_limits<double>::infinity();
  host_matrix a = make_matrix(2, 2, 0, 1.0), b = make_matrix(2, 2, 0, 1.0);
  a(0, 0) = inf;
  b(0, 1) = 0.0;  // (0,1): Inf * 0 -> NaN
  host_matrix r = make_matrix(2, 2), nv = make_matrix(2, 2);
  dd_gemm('N', 'N', 2, 2, 2, 1.0, a.ptr(), 2, b.ptr(), 2, 0.0, r.ptr(), 2);
  naive_gemm('N', 'N', 2, 2, 2, 1.0, a.ptr(), 2, b.ptr(), 2, 0.0, nv.ptr(), 2);
  EXPECT_EQ(r(0, 0), inf);
  EXPECT_TRUE(std::isnan(r(0, 1)));
  EXPECT_EQ(r(1, 0), 2.0);
  EXPECT_EQ(nv(0, 0), inf);
  EXPECT_TRUE(std::isnan(nv(0, 1)));
}

TEST(AbsProduct, MatchesALongDoubleSum) {
  const int64_t m = 6, n = 5, k = 30;
  const host_matrix a = phi_matrix(m, k, 2.0, 6), b = phi_matrix(k, n, 2.0, 7);
  const host_matrix A = store_for_op(a, 'T', 2);
  std::vector<double> out(m * n);
  abs_product('T', 'N', m, n, k, A.ptr(), A.ld, b.ptr(), b.ld, out.data(), m);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      long double s = 0;
      for (int64_t l = 0; l < k; ++l) s += std::fabs(static_cast<long double>(a(i, l)) * b(l, j));
      EXPECT_LE(std::fabs(out[j * m + i] - s), (k + 1) * std::ldexp(1.0L, -53) * s);
    }
}

TEST(Metrics, RelativeErrorHandlesZerosNaNAndLeadingDimensions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // 2 x 3, ld 3 (third row is padding and must be ignored).
  const double R[] = {1.0, 2.0, 99.0, 0.0, 4.0, 99.0, nan, inf, 99.0};
  const double C[] = {1.5, 2.0, -1.0, 0.0, 5.0, -1.0, nan, inf, -1.0};
  error_report r = max_rel_error(2, 3, C, 3, R, 3);
  EXPECT_EQ(r.max, 0.5);
  EXPECT_EQ(r.argmax_i, 0);
  EXPECT_EQ(r.argmax_j, 0);
  EXPECT_EQ(r.zero_denominator_mismatches, 0);
  EXPECT_EQ(r.nonfinite_mismatches, 0);
  double C2[9];
  std::copy(C, C + 9, C2);
  C2[3] = 1e-300;  // R == 0, C != 0
  C2[7] = -inf;    // sign mismatch
  r = max_rel_error(2, 3, C2, 3, R, 3);
  EXPECT_EQ(r.zero_denominator_mismatches, 1);
  EXPECT_EQ(r.nonfinite_mismatches, 1);
  EXPECT_EQ(r.max, inf);
  C2[7] = inf;
  C2[6] = 1.0;  // finite where R is NaN
  r = max_rel_error(2, 3, C2, 3, R, 3);
  EXPECT_EQ(r.nonfinite_mismatches, 1);
}

TEST(Metrics, ScaledErrorDividesByAbsProduct) {
  const double R[] = {1.0, -1.0, 0.0, 3.0};
  const double C[] = {1.25, -1.0, 0.5, 3.0};
  const double AB[] = {10.0, 1.0, 0.0, 2.0};
  const error_report r = max_scaled_error(2, 2, C, 2, R, 2, AB, 2);
  EXPECT_EQ(r.max, 0.025);
  EXPECT_EQ(r.zero_denominator_mismatches, 1);
}

TEST(Inputs, GeneratorsAreDeterministicAndHaveTheDocumentedRanges) {
  const host_matrix x = phi_matrix(20, 30, 2.0, 42), y = phi_matrix(20, 30, 2.0, 42);
  const host_matrix z = phi_matrix(20, 30, 2.0, 43);
  EXPECT_EQ(x.data, y.data);
  EXPECT_NE(x.data, z.data);
  int negative = 0;
  for (double v : x.data) negative += v < 0;
  EXPECT_GT(negative, 100);
  EXPECT_LT(negative, 500);
  for (double v : nonnegative_matrix(20, 30, 1.0, 5).data) EXPECT_GE(v, 0.0);
  host_matrix s = make_matrix(4, 4, 0, 1.0);
  subnormal_row(s, 1, 9);
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_NE(s(1, j), 0.0);
    EXPECT_EQ(std::fpclassify(s(1, j)), FP_SUBNORMAL);
  }
  const host_matrix p = phi_matrix(3, 5, 1.0, 1, 7);
  EXPECT_EQ(p.ld, 7);
  const host_matrix t = store_for_op(p, 'T', 2);
  EXPECT_EQ(t.rows, 5);
  EXPECT_EQ(t.ld, 7);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t l = 0; l < 5; ++l) EXPECT_EQ(op_at('T', t.ptr(), t.ld, i, l), p(i, l));
  EXPECT_TRUE(std::isnan(t.data[5]));  // padding is NaN
}

TEST(Inputs, EveryKindHasTheRequestedShapeAndFiniteEntries) {
  for (input_kind kind : all_input_kinds()) {
    const operand_pair in = make_inputs(kind, 6, 5, 7, 3);
    EXPECT_EQ(in.a.rows, 6);
    EXPECT_EQ(in.a.cols, 7);
    EXPECT_EQ(in.b.rows, 7);
    EXPECT_EQ(in.b.cols, 5);
    for (double v : in.a.data) EXPECT_TRUE(std::isfinite(v)) << input_kind_name(kind);
    for (double v : in.b.data) EXPECT_TRUE(std::isfinite(v)) << input_kind_name(kind);
  }
}

}  // namespace
}  // namespace ozdgemm::test
