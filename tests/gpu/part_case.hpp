// One case of the tests of calls computing a triangle or the square of C (triangle_test.cpp,
// shared_operand_test.cpp): which part, op(A), and the moduli count.
#pragma once

#include "core/gemm_problem.hpp"

namespace ozdgemm::test {

struct part_case {
  detail::c_part part;
  bool transposed;  // op(A) = A^T (A stored k x n)
  int moduli;       // OZDGEMM_MODULI's code: a count, or -1 for the certified default
};

}  // namespace ozdgemm::test
