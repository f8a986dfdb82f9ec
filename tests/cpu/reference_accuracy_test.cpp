// Accuracy of reference_dgemm (the host Ozaki Scheme II pipeline) against the double-double
// reference, over exponent spreads, both scaling modes, moduli counts, shapes, transposes,
// leading dimensions and alpha/beta. The assertion is the rigorous per-element bound of
// accuracy_bound.hpp, which depends on s and the mode only through the exponents that
// reference_scaling() chose; both error metrics are recorded alongside.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/accuracy_bound.hpp"
#include "cpu/cpu_test_util.hpp"
#include "reference/host_reference.hpp"
#include "support/dd_reference.hpp"
#include "support/inputs.hpp"
#include "support/metrics.hpp"

namespace ozdgemm::test {
namespace {

using detail::scaling_mode;

struct shape_case {
  const char* name;
  int64_t m, n, k;
  char transa, transb;
  int64_t extra_ld;  // added to lda, ldb and ldc
  double alpha, beta;
};

// 'C' appears once: for real data it must behave as 'T'.
const shape_case kShapes[] = {
    {"m1n1k1_NN", 1, 1, 1, 'N', 'N', 0, 1.0, 0.0},
    {"m1n7k9_TN", 1, 7, 9, 'T', 'N', 0, 1.0, 0.0},
    {"m9n1k7_NT_ab", 9, 1, 7, 'N', 'T', 0, -1.5, 0.25},
    {"m8n9k1_TT_ld", 8, 9, 1, 'T', 'T', 2, 1.0, 0.0},
    {"m17n5k33_NN_ld", 17, 5, 33, 'N', 'N', 5, 1.0, 0.0},
    {"m17n5k33_CN_ld_ab", 17, 5, 33, 'C', 'N', 3, -1.5, 0.25},
    {"m64n48k80_NN", 64, 48, 80, 'N', 'N', 0, 1.0, 0.0},
    {"m64n48k80_TT_ld_ab", 64, 48, 80, 'T', 'T', 7, -1.5, 0.25},
    {"m23n31k47_NT_ld", 23, 31, 47, 'N', 'T', 4, 1.0, 0.0},
    {"m31n23k47_TN_ab", 31, 23, 47, 'T', 'N', 0, -1.5, 0.25},
};

std::string phi_name(double phi) {
  std::string s = std::to_string(phi);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  for (char& ch : s)
    if (ch == '.') ch = 'p';
  return "phi" + s;
}

struct run_result {
  error_report rel, scaled;
  bound_check_result bound;
};

// Runs one problem through reference_dgemm and dd_gemm; checks the bound, the untouched C
// padding, and returns both metrics.
run_result run_and_check(const shape_case& sh, const host_matrix& op_a, const host_matrix& op_b,
                         double phi, int s, scaling_mode mode, uint64_t seed) {
  const int64_t m = sh.m, n = sh.n, k = sh.k;
  const host_matrix A = store_for_op(op_a, sh.transa, sh.extra_ld);
  const host_matrix B = store_for_op(op_b, sh.transb, sh.extra_ld);
  // C0: data when beta != 0, NaN when beta == 0 (BLAS: C must not be read). The padding
  // rows hold a sentinel that must survive the call.
  const double sentinel = -7.25e33;
  host_matrix c0 = make_matrix(m, n, m + sh.extra_ld, sentinel);
  const host_matrix cdata = phi_matrix(m, n, phi, seed + 7);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i)
      c0(i, j) = sh.beta == 0.0 ? std::numeric_limits<double>::quiet_NaN() : cdata(i, j);
  host_matrix C = c0, R = c0;

  const detail::gemm_problem p = make_problem(sh.transa, sh.transb, m, n, k, A.ptr(), A.ld,
                                              B.ptr(), B.ld, C.ptr(), C.ld);
  const detail::scaling_result sc = detail::reference_scaling(p, s, mode);
  detail::reference_dgemm(p, sh.alpha, sh.beta, s, mode);
  dd_gemm(sh.transa, sh.transb, m, n, k, sh.alpha, A.ptr(), A.ld, B.ptr(), B.ld, sh.beta,
          R.ptr(), R.ld);

  run_result out;
  out.bound = check_error_bound(p, sc, sh.alpha, sh.beta, c0.ptr(), C.ptr(), R.ptr(), C.ld);
  EXPECT_TRUE(out.bound.first_failure.empty()) << out.bound.first_failure;
  EXPECT_EQ(out.bound.checked, m * n) << "every element is finite here";
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = m; i < C.ld; ++i)
      EXPECT_EQ(C(i, j), sentinel) << "padding of C written at (" << i << "," << j << ")";

  std::vector<double> abs_ab(static_cast<size_t>(m * n));
  abs_product(sh.transa, sh.transb, m, n, k, A.ptr(), A.ld, B.ptr(), B.ld, abs_ab.data(), m);
  out.rel = max_rel_error(m, n, C.ptr(), C.ld, R.ptr(), R.ld);
  out.scaled = max_scaled_error(m, n, C.ptr(), C.ld, R.ptr(), R.ld, abs_ab.data(), m);
  EXPECT_EQ(out.rel.nonfinite_mismatches, 0);
  return out;
}

void record(const run_result& r, const std::string& label) {
  testing::Test::RecordProperty("max_rel_error", std::to_string(r.rel.max));
  testing::Test::RecordProperty("max_scaled_error", std::to_string(r.scaled.max));
  testing::Test::RecordProperty("max_error_over_bound", std::to_string(r.bound.max_ratio));
  std::cout << "[ metrics  ] " << label << " max|C-R|/|R|=" << r.rel.max
            << " (R==0,C!=0: " << r.rel.zero_denominator_mismatches << ")"
            << " max|C-R|/(|A||B|)=" << r.scaled.max << " max err/bound=" << r.bound.max_ratio
            << "\n";
}

using accuracy_param = std::tuple<int, double, scaling_mode, int>;

class ReferenceAccuracy : public testing::TestWithParam<accuracy_param> {};

TEST_P(ReferenceAccuracy, WithinTheTruncationBound) {
  const auto [shape_index, phi, mode, s] = GetParam();
  const shape_case& sh = kShapes[shape_index];
  const uint64_t seed = 1000 * shape_index + static_cast<uint64_t>(phi * 10) + s;
  const host_matrix op_a = phi_matrix(sh.m, sh.k, phi, seed);
  const host_matrix op_b = phi_matrix(sh.k, sh.n, phi, seed + 1);
  const run_result r = run_and_check(sh, op_a, op_b, phi, s, mode, seed);
  record(r, testing::UnitTest::GetInstance()->current_test_info()->name());
  EXPECT_EQ(r.rel.zero_denominator_mismatches, 0);

  // Sanity: the method works. With phi = 0.5, s = 20 keeps ~75 bits per input (fast mode:
  // (log2 M - log2 k - 1) / 2 with log2 M ~ 158), far more than FP64's 53, so with
  // alpha = 1, beta = 0 the result is the correctly rounded product (relative error
  // <= 2^-53); s = 14 keeps ~52 bits. (With beta != 0, C = RN(alpha RN(AB) + RN(beta C0))
  // rounds three times and may cancel, so the relative error is not bounded this way.)
  if (phi == 0.5 && sh.m == 64 && sh.n == 48 && sh.k == 80 && sh.alpha == 1.0 &&
      sh.beta == 0.0) {
    if (s == 20) {
      EXPECT_LT(r.rel.max, 1e-15);
    }
    if (s == 14) {
      EXPECT_LT(r.rel.max, 1e-10);
    }
  }
}

std::string accuracy_name(const testing::TestParamInfo<accuracy_param>& info) {
  const auto [shape_index, phi, mode, s] = info.param;
  return std::string(kShapes[shape_index].name) + "_" + phi_name(phi) + "_" + mode_name(mode) +
         "_s" + std::to_string(s);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ReferenceAccuracy,
    testing::Combine(testing::Range(0, static_cast<int>(sizeof kShapes / sizeof kShapes[0])),
                     testing::Values(0.5, 1.0, 2.0, 4.0),
                     testing::Values(scaling_mode::fast, scaling_mode::accurate),
                     testing::Values(8, 14, 16, 20)),
    accuracy_name);

// k beyond one INT8 k-block (kKBlock < 2^17): the GPU splits k there; the result must still
// obey the bound.
using long_k_param = std::tuple<int64_t, scaling_mode, int>;

class ReferenceAccuracyLongK : public testing::TestWithParam<long_k_param> {};

TEST_P(ReferenceAccuracyLongK, WithinTheTruncationBound) {
  const auto [k, mode, s] = GetParam();
  const shape_case sh{"long_k", 3, 2, k, 'T', 'N', 1, 1.0, 0.0};
  const host_matrix op_a = phi_matrix(sh.m, k, 1.0, 77);
  const host_matrix op_b = phi_matrix(k, sh.n, 1.0, 78);
  const run_result r = run_and_check(sh, op_a, op_b, 1.0, s, mode, 79);
  record(r, testing::UnitTest::GetInstance()->current_test_info()->name());
  // s = 20 still keeps >= (158 - 19 - 1)/2 = 69 bits per input at k = 2^18: the error is
  // the final rounding, far below 2^-50 |A||B|.
  if (s == 20) {
    EXPECT_LT(r.scaled.max, std::ldexp(1.0, -50));
  }
}

INSTANTIATE_TEST_SUITE_P(
    KBeyondOneBlock, ReferenceAccuracyLongK,
    testing::Combine(testing::Values(int64_t{(1 << 17) + 123}, int64_t{1 << 18}),
                     testing::Values(scaling_mode::fast, scaling_mode::accurate),
                     testing::Values(8, 14, 20)),
    [](const testing::TestParamInfo<long_k_param>& pi) {
      return "k" + std::to_string(std::get<0>(pi.param)) + "_" +
             mode_name(std::get<1>(pi.param)) + "_s" + std::to_string(std::get<2>(pi.param));
    });

// Adversarial inputs through the whole pipeline: the same bound must hold.
using adversarial_param = std::tuple<input_kind, scaling_mode, int>;

class ReferenceAccuracyAdversarial : public testing::TestWithParam<adversarial_param> {};

TEST_P(ReferenceAccuracyAdversarial, WithinTheTruncationBound) {
  const auto [kind, mode, s] = GetParam();
  const shape_case sh{"adv", 19, 13, 29, 'N', 'T', 2, -1.5, 0.25};
  const operand_pair in = make_inputs(kind, sh.m, sh.n, sh.k, 4242 + static_cast<int>(kind));
  const run_result r = run_and_check(sh, in.a, in.b, 1.0, s, mode, 4243);
  record(r, testing::UnitTest::GetInstance()->current_test_info()->name());
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ReferenceAccuracyAdversarial,
    testing::Combine(testing::ValuesIn(all_input_kinds()),
                     testing::Values(scaling_mode::fast, scaling_mode::accurate),
                     testing::Values(2, 8, 14, 20)),
    [](const testing::TestParamInfo<adversarial_param>& pi) {
      return input_kind_name(std::get<0>(pi.param)) + "_" +
             mode_name(std::get<1>(pi.param)) + "_s" + std::to_string(std::get<2>(pi.param));
    });

}  // namespace
}  // namespace ozdgemm::test
