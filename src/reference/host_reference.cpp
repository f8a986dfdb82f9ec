#include "reference/host_reference.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/checked_math.hpp"
#include "core/crt.hpp"
#include "core/element.hpp"
#include "core/moduli.hpp"
#include "core/special_values.hpp"

namespace ozdgemm::detail {
namespace {

struct vector_stats {
  std::vector<int> emax;
  std::vector<uint8_t> flags;
};

vector_stats scan_vectors(const operand& x, int64_t nvec, int64_t k) {
  vector_stats st{std::vector<int>(nvec, kZeroExponent), std::vector<uint8_t>(nvec, 0)};
  for (int64_t v = 0; v < nvec; ++v)
    for (int64_t l = 0; l < k; ++l) {
      const double e = x.at(v, l);
      st.emax[v] = std::max(st.emax[v], exponent_of(e));
      st.flags[v] |= nonfinite_flag(e);
    }
  return st;
}

std::vector<int> fast_exponents(const operand& x, int64_t nvec, int64_t k,
                                const std::vector<int>& emax, const modulus_table& tb) {
  std::vector<int> e(nvec, 0);
  for (int64_t v = 0; v < nvec; ++v) {
    if (emax[v] == kZeroExponent) continue;
    uint64_t q2 = 0;
    for (int64_t l = 0; l < k; ++l) q2 += norm_square_term(x.at(v, l), emax[v]);
    e[v] = fast_exponent(emax[v], q2, tb);
  }
  return e;
}

void accurate_exponents(const gemm_problem& p, const vector_stats& sa, const vector_stats& sb,
                        const modulus_table& tb, std::vector<int>& ea, std::vector<int>& eb) {
  accurate_exponents_from_u(bound_product(p, sa.emax, sb.emax), p.m, p.n, sa.emax, sb.emax, tb,
                            ea, eb);
}

// Residue planes [t][v][l] of x 2^e rounded as `nearest` says.
std::vector<int8_t> residues(const operand& x, int64_t nvec, int64_t k, const std::vector<int>& e,
                             bool nearest, const modulus_table& tb) {
  std::vector<int8_t> r(static_cast<size_t>(tb.s) * nvec * k);
  for (int64_t v = 0; v < nvec; ++v)
    for (int64_t l = 0; l < k; ++l) {
      const scaled_int si = scale_to_int(x.at(v, l), e[v], nearest);
      for (int t = 0; t < tb.s; ++t) r[(t * nvec + v) * k + l] = int8_residue(si, tb, t);
    }
  return r;
}

}  // namespace

// Accurate scaling, s-independent part: U = u(A)^T u(B) as exact integer loops, stored
// column-major (u[j * m + i]); exact in a double since U < 127^2 k < 2^53.
std::vector<double> bound_product(const gemm_problem& p, const std::vector<int>& emax_a,
                                  const std::vector<int>& emax_b) {
  const int64_t m = p.m, n = p.n, k = p.k;
  std::vector<int8_t> ua(m * k), ub(n * k);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t l = 0; l < k; ++l)
      ua[i * k + l] = emax_a[i] == kZeroExponent ? 0 : bound_quantize(p.a.at(i, l), emax_a[i]);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t l = 0; l < k; ++l)
      ub[j * k + l] = emax_b[j] == kZeroExponent ? 0 : bound_quantize(p.b.at(j, l), emax_b[j]);
  std::vector<double> u(m * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      int64_t acc = 0;
      for (int64_t l = 0; l < k; ++l) acc += int64_t{ua[i * k + l]} * ub[j * k + l];
      u[j * m + i] = static_cast<double>(acc);
    }
  return u;
}

// Accurate scaling for one s from U: the column rule, then the row rule.
void accurate_exponents_from_u(const std::vector<double>& u, int64_t m, int64_t n,
                               const std::vector<int>& emax_a, const std::vector<int>& emax_b,
                               const modulus_table& tb, std::vector<int>& ea,
                               std::vector<int>& eb) {
  ea.assign(m, 0);
  eb.assign(n, 0);
  std::vector<int> head_b(n);
  for (int64_t j = 0; j < n; ++j) {
    double col_max = 0.0;
    for (int64_t i = 0; i < m; ++i) col_max = std::max(col_max, u[j * m + i]);
    head_b[j] = accurate_column_headroom(col_max, tb);
    eb[j] = accurate_exponent(head_b[j], emax_b[j]);
  }
  for (int64_t i = 0; i < m; ++i) {
    double row_max = 0.0;
    for (int64_t j = 0; j < n; ++j)
      row_max = std::max(row_max, scale_pow2(u[j * m + i], head_b[j]));
    ea[i] = accurate_exponent(accurate_row_headroom(row_max, tb), emax_a[i]);
  }
}

bool reference_scratch_bytes(int64_t m, int64_t n, int64_t k, int num_moduli, size_t* bytes) {
  // The largest simultaneous allocations: accurate scaling's u(A), u(B), U and the residue
  // planes of both operands (s m k + s n k int8), each bounded here.
  if (m < 0 || n < 0 || k < 0 || num_moduli < 0) return false;
  const int64_t s = num_moduli;
  int64_t mk = 0, nk = 0, mn = 0, smk = 0, snk = 0;
  size_t u_bytes = 0, total = 0;
  if (!checked_mul(m, k, &mk) || !checked_mul(n, k, &nk) || !checked_mul(m, n, &mn) ||
      !checked_mul(s, mk, &smk) || !checked_mul(s, nk, &snk) ||
      !checked_bytes(mn, sizeof(double), &u_bytes))
    return false;
  for (int64_t part : {mk, nk, smk, snk}) {
    if (!checked_add(total, static_cast<size_t>(part), &total)) return false;
  }
  if (!checked_add(total, u_bytes, &total) || total > static_cast<size_t>(PTRDIFF_MAX)) return false;
  *bytes = total;
  return true;
}

scaling_result reference_scaling(const gemm_problem& p, int num_moduli, scaling_mode mode) {
  const modulus_table& tb = moduli_for(num_moduli);
  const vector_stats sa = scan_vectors(p.a, p.m, p.k);
  const vector_stats sb = scan_vectors(p.b, p.n, p.k);
  scaling_result r;
  r.flags_a = sa.flags;
  r.flags_b = sb.flags;
  r.nearest = rounds_to_nearest(tb, p.k);
  if (mode == scaling_mode::fast) {
    r.exp_a = fast_exponents(p.a, p.m, p.k, sa.emax, tb);
    r.exp_b = fast_exponents(p.b, p.n, p.k, sb.emax, tb);
  } else {
    r.exp_a.assign(p.m, 0);
    r.exp_b.assign(p.n, 0);
    accurate_exponents(p, sa, sb, tb, r.exp_a, r.exp_b);
  }
  return r;
}

void reference_dgemm(const gemm_problem& p, double alpha, double beta, int num_moduli,
                     scaling_mode mode) {
  moduli_for(num_moduli);  // throws for a count out of range, whatever the shape
  if (p.m == 0 || p.n == 0) return;
  if (alpha == 0.0 || p.k == 0) {
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t i = 0; i < p.m; ++i) {
        double* c = p.c + j * p.ldc + i;
        *c = beta == 0.0 ? 0.0 : mul_rn(beta, *c);
      }
    return;
  }
  reference_dgemm_with_scaling(p, alpha, beta, num_moduli,
                               reference_scaling(p, num_moduli, mode));
}

void reference_dgemm_with_scaling(const gemm_problem& p, double alpha, double beta,
                                  int num_moduli, const scaling_result& sc) {
  const modulus_table& tb = moduli_for(num_moduli);
  const std::vector<int8_t> ra = residues(p.a, p.m, p.k, sc.exp_a, sc.nearest, tb);
  const std::vector<int8_t> rb = residues(p.b, p.n, p.k, sc.exp_b, sc.nearest, tb);
  const int s = tb.s;
  const int limbs = limbs_for(s);
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t i = 0; i < p.m; ++i) {
      double* c = p.c + j * p.ldc + i;
      double v;
      if ((sc.flags_a[i] | sc.flags_b[j]) != 0) {
        v = nonfinite_dot(p.a, i, p.b, j, p.k);
      } else {
        // The limb count of the kernel for s (crt_kernel<S>), so the bits are the same.
        v = with_crt_accumulator(limbs, [&](auto acc) {
          for (int t = 0; t < s; ++t) {
            const int8_t* x = &ra[(t * p.m + i) * p.k];
            const int8_t* y = &rb[(t * p.n + j) * p.k];
            int64_t dot = 0;  // exact: |term| <= 2^14
            for (int64_t l = 0; l < p.k; ++l) dot += int64_t{x[l]} * y[l];
            const int64_t mt = tb.m[t];
            acc.add(static_cast<uint32_t>(((dot % mt) + mt) % mt), tb, t);
          }
          return acc.finish(tb, -(sc.exp_a[i] + sc.exp_b[j]));
        });
      }
      *c = apply_alpha_beta(v, alpha, beta, c);
    }
}

}  // namespace ozdgemm::detail
