#include "support/scaling_prototypes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/element.hpp"
#include "core/moduli.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {
namespace {

std::vector<int> vector_emax(const operand& x, int64_t nvec, int64_t k) {
  std::vector<int> e(nvec, kZeroExponent);
  for (int64_t v = 0; v < nvec; ++v)
    for (int64_t l = 0; l < k; ++l) e[v] = std::max(e[v], exponent_of(x.at(v, l)));
  return e;
}

std::vector<uint64_t> vector_q2(const operand& x, int64_t nvec, int64_t k,
                                const std::vector<int>& emax) {
  std::vector<uint64_t> q(nvec, 0);
  for (int64_t v = 0; v < nvec; ++v)
    if (emax[v] != kZeroExponent)
      for (int64_t l = 0; l < k; ++l) q[v] += norm_square_term(x.at(v, l), emax[v]);
  return q;
}

// W_ij = sum_l |a_il||b_lj|, an upper bound in long double, column-major.
std::vector<long double> exact_w(const gemm_problem& p) {
  const long double inflate = 1.0L + static_cast<long double>(p.k + 2) * std::ldexp(1.0L, -63);
  std::vector<long double> w(p.m * p.n);
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t i = 0; i < p.m; ++i) {
      long double acc = 0;
      for (int64_t l = 0; l < p.k; ++l)
        acc += std::fabs(static_cast<long double>(p.a.at(i, l))) *
               std::fabs(static_cast<long double>(p.b.at(j, l)));
      w[j * p.m + i] = acc * inflate;
    }
  return w;
}

// Largest integer h with v 2^(step h) <= limit (v, limit > 0).
int largest_shift_ld(long double v, long double limit, int step) {
  int h = static_cast<int>(std::floor(std::log2(limit / v) / step)) + 1;
  while (std::ldexp(v, step * h) > limit) --h;
  while (std::ldexp(v, step * (h + 1)) <= limit) ++h;
  return h;
}

}  // namespace

scaling_result prototype_scaling(const gemm_problem& p, int num_moduli, prototype_rule rule) {
  const modulus_table& tb = moduli_for(num_moduli);
  const long double L = tb.bound;  // <= the exact L
  scaling_result r;
  r.flags_a.assign(p.m, 0);
  r.flags_b.assign(p.n, 0);
  r.exp_a.assign(p.m, 0);
  r.exp_b.assign(p.n, 0);
  const std::vector<int> ema = vector_emax(p.a, p.m, p.k), emb = vector_emax(p.b, p.n, p.k);
  switch (rule) {
    case prototype_rule::max_element: {
      // Largest b with k 4^b <= L.
      const int b = largest_shift_ld(static_cast<long double>(p.k), L, 2);
      for (int64_t i = 0; i < p.m; ++i)
        if (ema[i] != kZeroExponent) r.exp_a[i] = b - ema[i] - 1;
      for (int64_t j = 0; j < p.n; ++j)
        if (emb[j] != kZeroExponent) r.exp_b[j] = b - emb[j] - 1;
      break;
    }
    case prototype_rule::cauchy_schwarz_rest: {
      const std::vector<uint64_t> qa = vector_q2(p.a, p.m, p.k, ema);
      const std::vector<uint64_t> qb = vector_q2(p.b, p.n, p.k, emb);
      long double col_use = 0;  // max_j QB_j 4^hB_j
      for (int64_t j = 0; j < p.n; ++j) {
        r.exp_b[j] = fast_exponent(emb[j], qb[j], tb);
        if (emb[j] == kZeroExponent || qb[j] == 0) continue;
        const int hb = r.exp_b[j] + emb[j] + 1 - kNormBits;  // the g of fast_exponent
        col_use = std::max(col_use, std::ldexp(static_cast<long double>(qb[j]), 2 * hb));
      }
      for (int64_t i = 0; i < p.m; ++i) {
        if (ema[i] == kZeroExponent || qa[i] == 0) continue;
        if (col_use == 0) {
          r.exp_a[i] = fast_exponent(ema[i], qa[i], tb);
          continue;
        }
        // Q values < 2^63 are exact in long double; the product needs 126 bits, so round up.
        const long double prod =
            static_cast<long double>(qa[i]) * col_use * (1.0L + std::ldexp(1.0L, -62));
        const int g = largest_shift_ld(prod, L * L * (1.0L - std::ldexp(1.0L, -62)), 2);
        r.exp_a[i] = std::min(g, kMaxScaledBits - kNormBits) - ema[i] - 1 + kNormBits;
      }
      break;
    }
    case prototype_rule::exact_product: {
      const std::vector<long double> w = exact_w(p);
      std::vector<int> hb(p.n, kMaxScaledBits);
      for (int64_t j = 0; j < p.n; ++j) {
        long double cm = 0;
        for (int64_t i = 0; i < p.m; ++i) cm = std::max(cm, w[j * p.m + i]);
        if (cm > 0) hb[j] = largest_shift_ld(cm, L, 2);  // 2^(2 hb) W_ij <= L
        if (emb[j] != kZeroExponent) r.exp_b[j] = hb[j];
      }
      for (int64_t i = 0; i < p.m; ++i) {
        long double rm = 0;
        for (int64_t j = 0; j < p.n; ++j) rm = std::max(rm, std::ldexp(w[j * p.m + i], hb[j]));
        if (ema[i] != kZeroExponent && rm > 0) r.exp_a[i] = largest_shift_ld(rm, L, 1);
      }
      // Keep every |A'| below 2^78 as the residue code requires.
      for (int64_t i = 0; i < p.m; ++i)
        if (ema[i] != kZeroExponent) r.exp_a[i] = std::min(r.exp_a[i], kMaxScaledBits - 1 - ema[i]);
      for (int64_t j = 0; j < p.n; ++j)
        if (emb[j] != kZeroExponent) r.exp_b[j] = std::min(r.exp_b[j], kMaxScaledBits - 1 - emb[j]);
      break;
    }
  }
  return r;
}

tightness measure_tightness(const gemm_problem& p, int num_moduli, const scaling_result& sc) {
  const long double L = moduli_for(num_moduli).bound;
  const std::vector<int> ema = vector_emax(p.a, p.m, p.k), emb = vector_emax(p.b, p.n, p.k);
  tightness t;
  int64_t na = 0, nb = 0;
  for (int64_t i = 0; i < p.m; ++i)
    if (ema[i] != kZeroExponent) t.mean_bits_a += sc.exp_a[i] + ema[i] + 1, ++na;
  for (int64_t j = 0; j < p.n; ++j)
    if (emb[j] != kZeroExponent) t.mean_bits_b += sc.exp_b[j] + emb[j] + 1, ++nb;
  t.mean_bits_a /= std::max<int64_t>(na, 1);
  t.mean_bits_b /= std::max<int64_t>(nb, 1);
  const std::vector<long double> w = exact_w(p);
  t.min_headroom = std::numeric_limits<double>::infinity();
  int64_t cnt = 0;
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t i = 0; i < p.m; ++i) {
      const long double x = std::ldexp(w[j * p.m + i], sc.exp_a[i] + sc.exp_b[j]);
      if (!(x > 0)) continue;
      const double h = static_cast<double>(std::log2(L / x));
      t.min_headroom = std::min(t.min_headroom, h);
      t.mean_headroom += h;
      ++cnt;
    }
  t.mean_headroom /= std::max<int64_t>(cnt, 1);
  return t;
}

}  // namespace ozdgemm::detail
