#include "core/moduli_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/auto_ratio.hpp"
#include "core/count_search.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

bool parse_accuracy_target(const std::string& text, accuracy_target* out) {
  if (text == "native") {
    *out = accuracy_target{accuracy_kind::native, 0};
    return true;
  }
  if (text == "max") {
    *out = accuracy_target{accuracy_kind::max, 0};
    return true;
  }
  if (text.empty() || text.size() > 3) return false;
  for (char ch : text)
    if (ch < '0' || ch > '9') return false;
  const int b = std::atoi(text.c_str());
  if (b < 1 || b > 200) return false;
  *out = accuracy_target{accuracy_kind::bits, b};
  return true;
}

std::string accuracy_target_name(const accuracy_target& t) {
  switch (t.kind) {
    case accuracy_kind::native:
      return std::string(t.cpu_blas ? "native (CPU BLAS)" : "native") +
             (t.native_shift == 0 ? "" : " / 2^" + std::to_string(t.native_shift));
    case accuracy_kind::max: return "max";
    case accuracy_kind::bits: return std::to_string(t.bits) + " bits";
  }
  return "?";
}

double worst_truncation_ratio(int64_t k, const vector_stats_for_choice& st,
                              const std::vector<int>& exps) {
  double worst = 0.0;
  for (size_t v = 0; v < st.emax.size(); ++v) {
    if (st.emax[v] == kZeroExponent || st.flags[v] != 0 || st.nnz[v] == 0) continue;
    // The same operations as the device (core/auto_ratio.hpp), so both choose the same s.
    worst = std::max(worst, truncation_ratio(k, st.nnz[v], st.exp_sum[v], exps[v]));
  }
  return worst;
}

double combine_ratios(double r, double c, int s, int64_t k) {
  return rounds_to_nearest(moduli_for(s), k) ? 0.5 * (r + c) + 0.25 * (r * c) : r + c + r * c;
}

double target_bound(const accuracy_target& t, int64_t k) {
  switch (t.kind) {
    case accuracy_kind::native:
      return (t.cpu_blas ? 1.0
                         : kNativeFactor * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)))) *
             std::ldexp(1.0, -53 - t.native_shift);
    case accuracy_kind::bits: return std::ldexp(1.0, -t.bits);
    case accuracy_kind::max: return std::ldexp(1.0, -75);
  }
  return 0.0;
}

accuracy_target host_target(const accuracy_target& t) {
  accuracy_target h = t;
  h.cpu_blas = t.kind == accuracy_kind::native;
  return h;
}

accuracy_target complex_target(const accuracy_target& t, const moduli_setting& moduli) {
  accuracy_target c = t;
  if (moduli.is_certified() && t.kind == accuracy_kind::native)
    c.native_shift = kComplexCertifiedShift;
  return c;
}

accuracy_target host_call_target(const accuracy_target& t, const moduli_setting& moduli,
                                 bool complex) {
  const accuracy_target h = host_target(t);
  return complex ? complex_target(h, moduli) : h;
}

moduli_choice choose_moduli(const accuracy_target& t, int64_t k,
                            const std::function<double(int)>& eps_of_s) {
  const bool relative = t.kind == accuracy_kind::max;
  const double native = target_bound(accuracy_target{}, k);
  const count_search r = search_count(target_bound(t, k), relative, native, eps_of_s);
  moduli_choice c;
  c.s = r.s;
  c.predicted = r.eps;
  c.target = r.bound;
  if (r.s == 0) {
    std::ostringstream os;
    if (r.over_native)
      os << "predicted error " << r.eps << " at s = 20 exceeds native DGEMM's " << native;
    else
      os << "predicted error " << r.eps << " at s = 20 exceeds the target ("
         << accuracy_target_name(t) << ": " << r.bound << ")";
    c.why = os.str();
  }
  return c;
}

std::vector<int> fast_exponents_for(const std::vector<int>& emax,
                                    const std::vector<uint64_t>& sum_q2, int s) {
  const modulus_table& tb = moduli_for(s);
  std::vector<int> e(emax.size(), 0);
  for (size_t v = 0; v < emax.size(); ++v) e[v] = fast_exponent(emax[v], sum_q2[v], tb);
  return e;
}

}  // namespace ozdgemm::detail
