#include "reference/auto_reference.hpp"

#include <algorithm>

#include "core/crt.hpp"
#include "core/element.hpp"
#include "core/moduli.hpp"
#include "reference/host_reference.hpp"
#include "reference/certified_choice.hpp"

namespace ozdgemm::detail {
namespace {

// emax, the exponent sum and count of the nonzero entries and the non-finite flags of each
// vector; in fast mode also Q = sum q_l^2 (a second pass, as on the device: it needs emax).
void gather(const operand& x, int64_t nvec, int64_t k, bool fast, vector_stats_for_choice& st,
            std::vector<uint64_t>& q2) {
  st.emax.assign(nvec, kZeroExponent);
  st.exp_sum.assign(nvec, 0);
  st.nnz.assign(nvec, 0);
  st.flags.assign(nvec, 0);
  q2.assign(fast ? nvec : 0, 0);
  for (int64_t v = 0; v < nvec; ++v) {
    for (int64_t l = 0; l < k; ++l) {
      const double e = x.at(v, l);
      const int ex = exponent_of(e);
      st.emax[v] = std::max(st.emax[v], ex);
      st.flags[v] |= nonfinite_flag(e);
      if (ex != kZeroExponent) {
        st.exp_sum[v] += ex;
        ++st.nnz[v];
      }
    }
    if (!fast || st.emax[v] == kZeroExponent) continue;
    for (int64_t l = 0; l < k; ++l) q2[v] += norm_square_term(x.at(v, l), st.emax[v]);
  }
}

}  // namespace

scaling_statistics reference_statistics(const gemm_problem& p, scaling_mode mode) {
  scaling_statistics st;
  st.mode = mode;
  st.m = p.m;
  st.n = p.n;
  st.k = p.k;
  const bool fast = mode == scaling_mode::fast;
  gather(p.a, p.m, p.k, fast, st.a, st.q2_a);
  gather(p.b, p.n, p.k, fast, st.b, st.q2_b);
  if (!fast) st.u = bound_product(p, st.a.emax, st.b.emax);
  return st;
}

void exponents_for(const scaling_statistics& st, int s, std::vector<int>& ea,
                   std::vector<int>& eb) {
  if (st.mode == scaling_mode::fast) {
    ea = fast_exponents_for(st.a.emax, st.q2_a, s);
    eb = fast_exponents_for(st.b.emax, st.q2_b, s);
  } else {
    accurate_exponents_from_u(st.u, st.m, st.n, st.a.emax, st.b.emax, moduli_for(s), ea, eb);
  }
}

double predicted_error(const scaling_statistics& st, int s) {
  std::vector<int> ea, eb;
  exponents_for(st, s, ea, eb);
  return combine_ratios(worst_truncation_ratio(st.k, st.a, ea),
                        worst_truncation_ratio(st.k, st.b, eb), s, st.k);
}

moduli_choice reference_choose_moduli(const scaling_statistics& st, const accuracy_target& t) {
  return choose_moduli(t, st.k, [&](int s) { return predicted_error(st, s); });
}

void reference_fp64_gemm(const gemm_problem& p, double alpha, double beta) {
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t i = 0; i < p.m; ++i) {
      double* c = p.c + j * p.ldc + i;
      double v = 0.0;
      if (alpha != 0.0)
        for (int64_t l = 0; l < p.k; ++l) v = fma_rn(p.a.at(i, l), p.b.at(j, l), v);
      *c = apply_alpha_beta(v, alpha, beta, c);
    }
}

moduli_choice reference_dgemm_auto(const gemm_problem& p, double alpha, double beta,
                                   scaling_mode mode, const accuracy_target& t, bool certified) {
  moduli_choice c;
  // Nothing to emulate: any s gives the BLAS result; report the smallest.
  if (p.m == 0 || p.n == 0 || p.k == 0 || alpha == 0.0) {
    c.s = kMinModuli;
    reference_dgemm(p, alpha, beta, kMinModuli, mode);
    return c;
  }
  c = certified ? certified_choose_moduli(p, mode, t, kCertBands)
                : reference_choose_moduli(reference_statistics(p, mode), t);
  if (c.s == 0)
    reference_fp64_gemm(p, alpha, beta);
  else
    reference_dgemm(p, alpha, beta, c.s, mode);
  return c;
}

}  // namespace ozdgemm::detail
