// The rigorous per-element error bound of the emulated DGEMM, in terms of the exponents the
// scaling stage chose. Shared by the accuracy and special-value tests.
//
// Derivation. Let a = row i of op(A), b = column j of op(B), eA = exp_a[i], eB = exp_b[j],
// P = sum_l a_l b_l (exact). A'_l = 2^eA a_l - alpha_l, rounded toward zero (|alpha_l| < 1)
// or, when sc.nearest, to nearest (|alpha_l| <= 1/2); likewise B'_l = 2^eB b_l - beta_l, so
//   A'_l B'_l - 2^(eA+eB) a_l b_l = -alpha_l 2^eB b_l - beta_l 2^eA a_l + alpha_l beta_l,
// and the exactly recovered X = sum_l A'_l B'_l satisfies, with h = 1 or 1/2,
//   |X 2^-(eA+eB) - P| <= T := h (2^-eA sum|b_l| + 2^-eB sum|a_l|) + h^2 k 2^-(eA+eB).
// The pipeline returns v = RN(X 2^-(eA+eB)) (crt.hpp: correctly rounded while normal) and
// C = RN(alpha v) when beta == 0, else C = RN(alpha v + RN(beta C0)) (one fma). With
// u = 2^-53:
//   beta == 0: |C - alpha P| <= |alpha| T + u |C| + u |alpha v| <= |alpha| T + 2u(1+2^-50)|C|
//              (|alpha v| <= |C| / (1 - u) since C = RN(alpha v));
//   beta != 0: |C - (alpha P + beta C0)| <= |alpha| T + u |C| + u (1+u) |alpha| (|A||B| + T)
//              + u |beta C0|   (|v| <= (1+u)(|P| + T), |P| <= (|A||B|)_ij).
// The double-double reference R obeys |R - (alpha P + beta C0)| <= u |R| + dd, with
// dd = (k+2) 2^-100 (|alpha| |A||B| + |beta C0|) (dd_reference.hpp). Subnormal results and
// TwoProd error terms below 2^-1074 add at most (k + 4)(|alpha| + 1) 2^-1074 in absolute
// terms. Summing:
//   |C - R| <= |alpha| T + [beta-dependent term above] + u |R| + dd + (k+4)(|alpha|+1) 2^-1074.
// All sums are formed in long double (64-bit significand, exponent range to 2^16383, so no
// overflow for any double input) and inflated by (1 + (k+2) 2^-63) to stay upper bounds.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/gemm_problem.hpp"
#include "reference/host_reference.hpp"

namespace ozdgemm::test {

struct bound_check_result {
  int64_t checked = 0;      // finite elements checked against the bound
  int64_t class_checked = 0;  // non-finite elements whose class was compared
  double max_ratio = 0.0;   // max |C - R| / bound: how much of the bound is used
  std::string first_failure;  // empty when every element passed
};

inline const char* fp_class(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  return "finite";
}

// What T of the derivation needs per vector: sum_l |a_l| of every row of op(A) and sum_l |b_l|
// of every column of op(B), in long double, and the inflation that keeps such sums upper bounds.
struct truncation_terms {
  std::vector<long double> sum_a, sum_b;
  long double inflate = 1.0L;
  int64_t k = 0;
};

inline truncation_terms make_truncation_terms(const detail::gemm_problem& p) {
  truncation_terms t;
  t.k = p.k;
  t.inflate = 1.0L + static_cast<long double>(p.k + 2) * std::ldexp(1.0L, -63);
  t.sum_a.assign(p.m, 0.0L);
  t.sum_b.assign(p.n, 0.0L);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t l = 0; l < p.k; ++l) t.sum_a[i] += std::fabs(static_cast<long double>(p.a.at(i, l)));
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t l = 0; l < p.k; ++l) t.sum_b[j] += std::fabs(static_cast<long double>(p.b.at(j, l)));
  return t;
}

// T for element (i, j): the bound on |X 2^-(eA+eB) - P| with the exponents `sc`.
inline long double truncation_bound(const truncation_terms& t, const detail::scaling_result& sc,
                                    int64_t i, int64_t j) {
  const int ea = sc.exp_a[i], eb = sc.exp_b[j];
  const int h = sc.nearest ? 1 : 0;  // the bound's factor is 2^-h
  return t.inflate * (std::ldexp(t.sum_b[j], -ea - h) + std::ldexp(t.sum_a[i], -eb - h)) +
         std::ldexp(static_cast<long double>(t.k), -(ea + eb) - 2 * h);
}

// Checks every element (i, j): C (result) against R (double-double reference), where C0 is
// C before the call and `sc` the exponents reference_scaling() chose for problem p.
inline bound_check_result check_error_bound(const detail::gemm_problem& p,
                                            const detail::scaling_result& sc, double alpha,
                                            double beta, const double* C0, const double* C,
                                            const double* R, int64_t ldc) {
  bound_check_result res;
  const int64_t m = p.m, n = p.n, k = p.k;
  const long double u = std::ldexp(1.0L, -53);
  const truncation_terms terms = make_truncation_terms(p);
  const long double inflate = terms.inflate;
  const long double abs_alpha = std::fabs(static_cast<long double>(alpha));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      const double c = C[j * ldc + i], r = R[j * ldc + i];
      if (!std::isfinite(c) || !std::isfinite(r)) {
        ++res.class_checked;
        if (std::string(fp_class(c)) != fp_class(r) && res.first_failure.empty()) {
          std::ostringstream os;
          os << "class mismatch at (" << i << "," << j << "): C=" << c << " R=" << r;
          res.first_failure = os.str();
        }
        continue;
      }
      long double ab = 0.0L;
      for (int64_t l = 0; l < k; ++l)
        ab += std::fabs(static_cast<long double>(p.a.at(i, l))) *
              std::fabs(static_cast<long double>(p.b.at(j, l)));
      ab *= inflate;
      const int ea = sc.exp_a[i], eb = sc.exp_b[j];
      const long double T = truncation_bound(terms, sc, i, j);
      const long double abs_c = std::fabs(static_cast<long double>(c));
      const long double abs_r = std::fabs(static_cast<long double>(r));
      const long double beta_c0 =
          beta == 0.0 ? 0.0L : std::fabs(static_cast<long double>(beta) * C0[j * ldc + i]);
      long double bound = abs_alpha * T + u * abs_r;
      if (beta == 0.0)
        bound += 2 * u * (1 + std::ldexp(1.0L, -50)) * abs_c;
      else
        bound += u * abs_c + u * (1 + u) * abs_alpha * (ab + T) + u * beta_c0;
      bound += static_cast<long double>(k + 2) * std::ldexp(1.0L, -100) * (abs_alpha * ab + beta_c0);
      bound += static_cast<long double>(k + 4) * (abs_alpha + 1) * std::ldexp(1.0L, -1074);
      const long double err = std::fabs(static_cast<long double>(c) - static_cast<long double>(r));
      ++res.checked;
      const double ratio = static_cast<double>(err / bound);
      if (ratio > res.max_ratio) res.max_ratio = ratio;
      if (!(err <= bound) && res.first_failure.empty()) {
        std::ostringstream os;
        os.precision(17);
        os << "bound violated at (" << i << "," << j << "): C=" << c << " R=" << r
           << " |C-R|=" << static_cast<double>(err) << " bound=" << static_cast<double>(bound)
           << " (T=" << static_cast<double>(T) << ", eA=" << ea << ", eB=" << eb << ")";
        res.first_failure = os.str();
      }
    }
  return res;
}

}  // namespace ozdgemm::test
