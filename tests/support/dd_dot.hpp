// One double-double dot product: the reference for sampled output entries.
// TwoProd (via fma) and TwoSum keep the sum to about 2^-104 relative to sum |x_l y_l|, far
// below any error the tests measure.
#pragma once

#include <cmath>
#include <cstdint>

namespace ozdgemm_test {

// *dot = RN(sum_l x[l*incx] y[l*incy]) to double-double accuracy, *abs_dot = sum |x||y|.
inline void dd_dot_strided(const double* x, int64_t incx, const double* y, int64_t incy,
                           int64_t k, double* dot, double* abs_dot) {
  double hi = 0.0, lo = 0.0, a = 0.0;
  for (int64_t l = 0; l < k; ++l) {
    const double xv = x[l * incx], yv = y[l * incy];
    const double p = xv * yv, pe = std::fma(xv, yv, -p);
    const double s = hi + p, bb = s - hi, se = (hi - (s - bb)) + (p - bb);
    hi = s;
    lo += se + pe;
    a += std::fabs(p);
  }
  *dot = hi + lo;
  *abs_dot = a;
}

}  // namespace ozdgemm_test
