// Inf and NaN in A or B. An output element C_ij whose row of op(A) or column of op(B) holds a
// non-finite entry is itself non-finite in native DGEMM (Inf * 0 = NaN, Inf * x = +-Inf), and
// its class (NaN, +Inf, -Inf) depends only on which terms are non-finite, not on summation
// order. Such elements are recomputed as a plain FP64 dot product, which yields that class;
// every other element comes from the emulation, whose scaling ignores non-finite entries.
#pragma once

#include "core/gemm_problem.hpp"
#include "core/hd.hpp"

namespace ozdgemm::detail {

OZDGEMM_HD double nonfinite_dot(const operand& a, int64_t i, const operand& b, int64_t j,
                                int64_t k) {
  double s = 0.0;
  for (int64_t l = 0; l < k; ++l) {
    s = s + mul_rn(a.at(i, l), b.at(j, l));
    if (s != s) break;  // NaN is absorbing
  }
  return s;
}

}  // namespace ozdgemm::detail
