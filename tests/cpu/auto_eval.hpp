// Shared by the automatic-moduli tests and the accuracy table: the input sets, the
// measured errors of the emulation at each s and of a native-DGEMM stand-in, and the "oracle"
// s (the smallest s whose measured errors met the target, by brute force).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cpu/cpu_test_util.hpp"
#include "reference/auto_reference.hpp"
#include "reference/host_reference.hpp"
#include "support/auto_inputs.hpp"
#include "support/dd_reference.hpp"
#include "support/inputs.hpp"
#include "support/metrics.hpp"

namespace ozdgemm::test {

struct measured {
  double rel = 0.0;     // max |C - R| / |R|
  double scaled = 0.0;  // max |C - R| / (|A||B|)
};

// One input pair with its double-double reference, |A||B| and the native stand-in's errors
// (naive_gemm: the plain FP64 triple loop, alpha = 1, beta = 0). Shared by auto_problem below
// and the certified-choice tests.
class reference_problem {
 public:
  explicit reference_problem(operand_pair in)
      : in_(std::move(in)), m_(in_.a.rows), n_(in_.b.cols), k_(in_.a.cols) {
    R_ = make_matrix(m_, n_);
    dd_gemm('N', 'N', m_, n_, k_, 1.0, in_.a.ptr(), in_.a.ld, in_.b.ptr(), in_.b.ld, 0.0,
            R_.ptr(), R_.ld);
    abs_ab_.resize(static_cast<size_t>(m_ * n_));
    abs_product('N', 'N', m_, n_, k_, in_.a.ptr(), in_.a.ld, in_.b.ptr(), in_.b.ld,
                abs_ab_.data(), m_);
    host_matrix C = make_matrix(m_, n_);
    naive_gemm('N', 'N', m_, n_, k_, 1.0, in_.a.ptr(), in_.a.ld, in_.b.ptr(), in_.b.ld, 0.0,
               C.ptr(), C.ld);
    native_ = measure(C);
  }

  detail::gemm_problem problem(host_matrix& C) const {
    return make_problem('N', 'N', m_, n_, k_, in_.a.ptr(), in_.a.ld, in_.b.ptr(), in_.b.ld,
                        C.ptr(), C.ld);
  }

  measured measure(const host_matrix& C) const {
    const error_report rel = max_rel_error(m_, n_, C.ptr(), C.ld, R_.ptr(), R_.ld);
    const error_report sc =
        max_scaled_error(m_, n_, C.ptr(), C.ld, R_.ptr(), R_.ld, abs_ab_.data(), m_);
    measured r{rel.max, sc.max};
    if (rel.zero_denominator_mismatches != 0 || rel.nonfinite_mismatches != 0)
      r.rel = INFINITY;
    if (sc.zero_denominator_mismatches != 0 || sc.nonfinite_mismatches != 0)
      r.scaled = INFINITY;
    return r;
  }

  const measured& native() const { return native_; }
  const operand_pair& inputs() const { return in_; }
  const host_matrix& reference() const { return R_; }
  int64_t m() const { return m_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }

 private:
  operand_pair in_;
  int64_t m_, n_, k_;
  host_matrix R_;
  std::vector<double> abs_ab_;
  measured native_;
};

// A reference_problem of one issue-5 input set, with the emulation's errors per (s, mode)
// (cached) and the oracle s.
class auto_problem : public reference_problem {
 public:
  explicit auto_problem(const auto_case& c) : reference_problem(make_auto_inputs(c)), c_(c) {}

  // Errors of the emulation at s (cached).
  const measured& at(int s, detail::scaling_mode mode) {
    auto key = std::make_pair(s, static_cast<int>(mode));
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    host_matrix C = make_matrix(m(), n());
    detail::reference_dgemm(problem(C), 1.0, 0.0, s, mode);
    return cache_[key] = measure(C);
  }

  // Smallest s whose measured errors meet native's in both metrics (0: none up to 20).
  int oracle_native(detail::scaling_mode mode) {
    for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s) {
      const measured& e = at(s, mode);
      if (e.rel <= native().rel && e.scaled <= native().scaled) return s;
    }
    return 0;
  }

  // Smallest s whose measured scaled error is <= bound (0: none).
  int oracle_scaled(detail::scaling_mode mode, double bound) {
    for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s)
      if (at(s, mode).scaled <= bound) return s;
    return 0;
  }

  const auto_case& spec() const { return c_; }

 private:
  auto_case c_;
  std::map<std::pair<int, int>, measured> cache_;
};

}  // namespace ozdgemm::test
