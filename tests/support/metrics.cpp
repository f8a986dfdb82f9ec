#include "support/metrics.hpp"

#include <cmath>
#include <limits>

namespace ozdgemm::test {
namespace {

// true when the pair is settled by its classes (and then reports a mismatch via *bad).
bool nonfinite_pair(double c, double r, bool* bad) {
  if (std::isfinite(c) && std::isfinite(r)) return false;
  if (std::isnan(c) && std::isnan(r)) {
    *bad = false;
  } else if (std::isinf(c) && std::isinf(r)) {
    *bad = std::signbit(c) != std::signbit(r);
  } else {
    *bad = true;
  }
  return true;
}

template <class Denominator>
error_report max_error(int64_t m, int64_t n, const double* C, int64_t ldc, const double* R,
                       int64_t ldr, Denominator den) {
  error_report rep;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      const double c = C[j * ldc + i], r = R[j * ldr + i];
      bool bad = false;
      double err;
      if (nonfinite_pair(c, r, &bad)) {
        if (!bad) continue;
        ++rep.nonfinite_mismatches;
        err = std::numeric_limits<double>::infinity();
      } else {
        const double d = den(i, j);
        if (d == 0.0) {
          if (c != r) ++rep.zero_denominator_mismatches;
          continue;
        }
        err = std::fabs(c - r) / d;
        if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
      }
      if (err > rep.max || rep.argmax_i < 0) {
        rep.max = err;
        rep.argmax_i = i;
        rep.argmax_j = j;
      }
    }
  return rep;
}

}  // namespace

error_report max_rel_error(int64_t m, int64_t n, const double* C, int64_t ldc, const double* R,
                           int64_t ldr) {
  return max_error(m, n, C, ldc, R, ldr,
                   [&](int64_t i, int64_t j) { return std::fabs(R[j * ldr + i]); });
}

error_report max_scaled_error(int64_t m, int64_t n, const double* C, int64_t ldc,
                              const double* R, int64_t ldr, const double* absAB, int64_t ldab) {
  return max_error(m, n, C, ldc, R, ldr,
                   [&](int64_t i, int64_t j) { return absAB[j * ldab + i]; });
}

}  // namespace ozdgemm::test
