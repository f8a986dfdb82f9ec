// One case of the tests of calls computing a triangle or the square of C (triangle_test.cpp,
// shared_operand_test.cpp): which part, op(A), and the moduli count.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "core/gemm_problem.hpp"

namespace ozdgemm::test {

struct part_case {
  detail::c_part part;
  bool transposed;  // op(A) = A^T (A stored k x n)
  int moduli;       // OZDGEMM_MODULI's code: a count, or -1 for the certified default
};

// The case's name, e.g. lower_AT_s14, all_A_certified: the test name's suffix and how gtest
// prints the parameter (else its bytes, padding included).
inline std::string name_of(const part_case& c) {
  const char* part = c.part == detail::c_part::lower   ? "lower"
                     : c.part == detail::c_part::upper ? "upper"
                                                       : "all";
  return std::string(part) + (c.transposed ? "_AT_" : "_A_") +
         (c.moduli > 0 ? "s" + std::to_string(c.moduli) : std::string("certified"));
}
inline std::string part_case_name(const ::testing::TestParamInfo<part_case>& info) {
  return name_of(info.param);
}
inline void PrintTo(const part_case& c, std::ostream* os) { *os << name_of(c); }

}  // namespace ozdgemm::test
