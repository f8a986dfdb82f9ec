// Error metrics between a computed C and a reference R (both column-major, own ld).
//
// Non-finite entries: an element where C and R are both NaN, or both the same infinity,
// matches and contributes nothing; any other non-finite mismatch makes the maximum +Inf and
// is counted in `nonfinite_mismatches`, so no NaN can slip through a max().
#pragma once

#include <cstdint>

namespace ozdgemm::test {

struct error_report {
  double max = 0.0;                   // the metric's maximum over the elements it covers
  int64_t argmax_i = -1, argmax_j = -1;
  int64_t zero_denominator_mismatches = 0;  // denominator 0 but C != R
  int64_t nonfinite_mismatches = 0;
};

// max |C - R| / |R| over R != 0; R == 0 with C != 0 is counted, not divided.
error_report max_rel_error(int64_t m, int64_t n, const double* C, int64_t ldc, const double* R,
                           int64_t ldr);

// max |C - R| / (|A||B|)_ij over (|A||B|)_ij != 0, absAB from abs_product(); a zero
// denominator with C != R is counted, not divided.
error_report max_scaled_error(int64_t m, int64_t n, const double* C, int64_t ldc,
                              const double* R, int64_t ldr, const double* absAB, int64_t ldab);

}  // namespace ozdgemm::test
