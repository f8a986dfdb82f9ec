// The input sets (automatic moduli count): phi families, non-negative data, rows
// and columns scaled by 2^+-40, one huge row, near-cancelling rows. Shared by the CPU tests
// (tests/cpu/auto_eval.hpp), the GPU tests and the accuracy report (bench/accuracy_report.cu).
// Plain C++, no GMP or CUDA.
#pragma once

#include <cstdint>
#include <string>

#include "support/inputs.hpp"

namespace ozdgemm::test {

enum class auto_set { phi, nonnegative, rows_pm40, huge_row, near_cancel };

struct auto_case {
  std::string name;
  auto_set set;
  double phi;
  int64_t m, n, k;
  uint64_t seed;
};

// op(A) m x k and op(B) k x n for a case. near_cancel: rows 0, 2, 4, ... of op(A) are
// [x, -x (1 + 2^-20 r)] (r uniform in [-1, 1)) and op(B) is [y; y], so those outputs cancel
// to about 2^-20 of (|A||B|)_ij: both error metrics then differ by that factor.
operand_pair make_auto_inputs(const auto_case& c);

// Anti-aligned inputs (docs/auto.md, section 5): op(A) an m x k phi matrix; each column of
// op(B) a phi vector whose entries are permuted so that its largest magnitudes meet the
// smallest magnitudes of row 0 of op(A). anti = false: the same vectors, unpermuted. The
// per-vector statistics of both are the same; their errors are not.
operand_pair anti_aligned_inputs(double phi, int64_t m, int64_t n, int64_t k, uint64_t seed,
                                 bool anti = true);

}  // namespace ozdgemm::test
