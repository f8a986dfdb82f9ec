// The automatic moduli count on the host reference: gather the s-independent statistics of
// the scaling pass once, predict the error for each candidate s (core/moduli_choice.hpp),
// choose s, and compute with it -- or, when no s <= 20 meets the target, fall back to a plain
// FP64 computation (the host stand-in for native DGEMM; the GPU path calls cublasDgemm).
#pragma once

#include <cstdint>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/moduli_choice.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

// What the scaling pass gathers, for every s at once.
struct scaling_statistics {
  scaling_mode mode = scaling_mode::accurate;
  int64_t m = 0, n = 0, k = 0;
  vector_stats_for_choice a, b;    // rows of op(A), columns of op(B)
  std::vector<uint64_t> q2_a, q2_b;  // fast mode: Q = sum q_l^2 (scaling_rules.hpp)
  std::vector<double> u;             // accurate mode: U = u(A)^T u(B), u[j * m + i]
};

scaling_statistics reference_statistics(const gemm_problem& p, scaling_mode mode);

// The exponents reference_scaling(p, s, mode) would choose, from the statistics alone.
void exponents_for(const scaling_statistics& st, int s, std::vector<int>& ea,
                   std::vector<int>& eb);

// eps(s) of core/moduli_choice.hpp.
double predicted_error(const scaling_statistics& st, int s);

moduli_choice reference_choose_moduli(const scaling_statistics& st, const accuracy_target& t);

// C = alpha op(A) op(B) + beta C with s chosen for target t (certified: by
// certified_choose_moduli, reference/certified_choice.hpp, as OZDGEMM_MODULI_CERTIFIED does);
// returns the choice (s == 0: the FP64 fallback ran, and `why` says why).
moduli_choice reference_dgemm_auto(const gemm_problem& p, double alpha, double beta,
                                   scaling_mode mode, const accuracy_target& t,
                                   bool certified = false);

// The fallback: per element, an fma chain over l ascending, then alpha and beta as the
// emulation applies them (beta == 0: C not read).
void reference_fp64_gemm(const gemm_problem& p, double alpha, double beta);

}  // namespace ozdgemm::detail
