// Shared by the automatic-moduli tests and the accuracy table: the input sets of issue 5, the
// measured errors of the emulation at each s and of a native-DGEMM stand-in, and the "oracle"
// s (the smallest s whose measured errors met the target, by brute force).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
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

// One problem with its double-double reference, |A||B| and the native stand-in's errors
// (naive_gemm: the plain FP64 triple loop, alpha = 1, beta = 0).
class auto_problem {
 public:
  explicit auto_problem(const auto_case& c) : c_(c), in_(make_auto_inputs(c)) {
    const int64_t m = c.m, n = c.n, k = c.k;
    R_ = make_matrix(m, n);
    dd_gemm('N', 'N', m, n, k, 1.0, in_.a.ptr(), in_.a.ld, in_.b.ptr(), in_.b.ld, 0.0, R_.ptr(),
            R_.ld);
    abs_ab_.resize(static_cast<size_t>(m * n));
    abs_product('N', 'N', m, n, k, in_.a.ptr(), in_.a.ld, in_.b.ptr(), in_.b.ld, abs_ab_.data(),
                m);
    host_matrix C = make_matrix(m, n);
    naive_gemm('N', 'N', m, n, k, 1.0, in_.a.ptr(), in_.a.ld, in_.b.ptr(), in_.b.ld, 0.0,
               C.ptr(), C.ld);
    native_ = measure(C);
  }

  detail::gemm_problem problem(host_matrix& C) const {
    return make_problem('N', 'N', c_.m, c_.n, c_.k, in_.a.ptr(), in_.a.ld, in_.b.ptr(),
                        in_.b.ld, C.ptr(), C.ld);
  }

  measured measure(const host_matrix& C) const {
    const error_report rel = max_rel_error(c_.m, c_.n, C.ptr(), C.ld, R_.ptr(), R_.ld);
    const error_report sc =
        max_scaled_error(c_.m, c_.n, C.ptr(), C.ld, R_.ptr(), R_.ld, abs_ab_.data(), c_.m);
    measured r{rel.max, sc.max};
    if (rel.zero_denominator_mismatches != 0 || rel.nonfinite_mismatches != 0)
      r.rel = INFINITY;
    if (sc.zero_denominator_mismatches != 0 || sc.nonfinite_mismatches != 0)
      r.scaled = INFINITY;
    return r;
  }

  // Errors of the emulation at s (cached).
  const measured& at(int s, detail::scaling_mode mode) {
    auto key = std::make_pair(s, static_cast<int>(mode));
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    host_matrix C = make_matrix(c_.m, c_.n);
    detail::reference_dgemm(problem(C), 1.0, 0.0, s, mode);
    return cache_[key] = measure(C);
  }

  // Smallest s whose measured errors meet native's in both metrics (0: none up to 20).
  int oracle_native(detail::scaling_mode mode) {
    for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s) {
      const measured& e = at(s, mode);
      if (e.rel <= native_.rel && e.scaled <= native_.scaled) return s;
    }
    return 0;
  }

  // Smallest s whose measured scaled error is <= bound (0: none).
  int oracle_scaled(detail::scaling_mode mode, double bound) {
    for (int s = detail::kMinModuli; s <= detail::kMaxModuli; ++s)
      if (at(s, mode).scaled <= bound) return s;
    return 0;
  }

  const measured& native() const { return native_; }
  const auto_case& spec() const { return c_; }

 private:
  auto_case c_;
  operand_pair in_;
  host_matrix R_;
  std::vector<double> abs_ab_;
  measured native_;
  std::map<std::pair<int, int>, measured> cache_;
};

}  // namespace ozdgemm::test
