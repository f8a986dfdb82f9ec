// Prototype scaling rules, host only, for measuring how many bits each rule keeps against
// what the CRT bound allows. Not used by the pipeline: the rules in
// core/scaling_rules.hpp are shared with the kernels and change only with the lead.
//
// Every rule returns exponents with sum_l |A'_il||B'_lj| <= L for all (i, j) (proofs below),
// so reference_dgemm_with_scaling() recovers A'B' exactly with them.
#pragma once

#include <vector>

#include "core/gemm_problem.hpp"
#include "reference/host_reference.hpp"

namespace ozdgemm::detail {

enum class prototype_rule {
  // Row/column scale from the largest element alone: |A'_l| < 2^(e + emax + 1) =: 2^bA, so
  // sum_l |A'||B'| < k 2^(bA + bB) <= L when bA = bB = floor((log2 L - log2 k) / 2).
  max_element,
  // fast mode's Cauchy-Schwarz bound, but the rows take what the columns leave: columns as
  // in fast mode (||B'_j|| <= 2^hB_j sqrt(QB_j) <= sqrt(L)); each row the largest g with
  // 2^g sqrt(QA_i) max_j 2^hB_j sqrt(QB_j) <= L (squared: QA_i 4^g max_j QB_j 4^hB_j <= L^2,
  // compared in long double with upward-rounded factors). Reclaims the floor() of one side.
  cauchy_schwarz_rest,
  // The ideal per-vector scaling for this bound structure: accurate mode's two-step rule
  // applied to the exact W = |A||B| (long double, inflated by (1 + (k + 2) 2^-63) to stay an
  // upper bound) instead of the 7-bit U. What the accurate mode would keep with an exact
  // bound GEMM.
  exact_product,
};

scaling_result prototype_scaling(const gemm_problem& p, int num_moduli, prototype_rule rule);

// How many bits the exponents keep: bits of row i = e_i + emax_i + 1 (|A'_il| < 2^bits), and
// the headroom left in the CRT range, log2(L / sum_l |A'_il||B'_lj|), over all (i, j).
struct tightness {
  double mean_bits_a = 0, mean_bits_b = 0;  // over nonzero vectors
  double min_headroom = 0, mean_headroom = 0;  // bits, over (i, j) with a nonzero sum
};
tightness measure_tightness(const gemm_problem& p, int num_moduli, const scaling_result& sc);

}  // namespace ozdgemm::detail
