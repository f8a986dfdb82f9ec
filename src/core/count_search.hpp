// The search of the moduli chooser (core/moduli_choice.hpp), shared by the host, which chooses
// for the host reference and the synchronising device path, and by the kernel that chooses on
// the GPU (kernels/choice.cuh): one code, so both pick the same s from the same ratios.
#pragma once

#include "core/hd.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

struct count_search {
  int s;            // the smallest s in [kMinModuli, kMaxModuli] with eps(s) <= bound; 0: none
  double eps;       // eps(s) (eps(kMaxModuli) when s == 0)
  double bound;     // the bound eps had to meet
  bool over_native; // s == 0 because eps(kMaxModuli) exceeds native's bound (`max` target)
};

// eps_of(s) is non-increasing in s (every shift grows with L(s)). target: the target's bound;
// relative_to_max: the `max` target, whose bound is max(target, eps(20)) and which gives up only
// when eps(20) exceeds `native`. Bisection: at most 5 evaluations below 20.
template <class Eps>
OZDGEMM_HD count_search search_count(double target, bool relative_to_max, double native,
                                     const Eps& eps_of) {
  count_search r{0, eps_of(kMaxModuli), target, false};
  if (relative_to_max) {
    if (r.eps > native) {
      r.bound = native;
      r.over_native = true;
      return r;
    }
    r.bound = r.bound > r.eps ? r.bound : r.eps;
  }
  if (!(r.eps <= r.bound)) return r;
  int lo = kMinModuli, hi = kMaxModuli;  // eps(hi) <= bound
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const double e = eps_of(mid);
    if (e <= r.bound) {
      hi = mid;
      r.eps = e;
    } else {
      lo = mid + 1;
    }
  }
  r.s = hi;
  return r;
}

}  // namespace ozdgemm::detail
