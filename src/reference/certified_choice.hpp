// The certified moduli count (OZDGEMM_MODULI=certified; docs/certified.md):
// the host reference of what the GPU computes (engine/certificate.cpp, kernels/certify.cu).
//
// The shipped chooser (core/moduli_choice.hpp) predicts T_ij / (|A||B|)_ij from per-vector
// statistics, which cannot see how the entries of a row of op(A) and a column of op(B) are
// paired; it is a model and fails on anti-aligned inputs. This chooser bounds the ratio for
// every element (i, j) rigorously:
//
//   T_ij(s) = 2^-e_i ||b_j||_1 + 2^-f_j ||a_i||_1 + k 2^-(e_i+f_j)   (the truncation bound,
//             docs/accuracy.md eq. 1, for the exponents the scaling chooses for s)
//   W_ij   <= (|A||B|)_ij                                           (a proven lower bound)
//
// and picks the smallest s with max_ij T_ij(s) / W_ij <= target (target_bound(): sqrt(k) u for
// `native`). Then |X_ij 2^-(e_i+f_j) - (AB)_ij| <= target (|A||B|)_ij for every (i, j): the
// guarantee holds for all inputs, not only for the sets it was tried on.
//
// W comes from magnitude bands that an INT8 GEMM can multiply exactly (core/certified_bound.hpp,
// shared with the GPU's kernels/certify.cu, which computes the same bits with kCertBands
// bands): Q_p(A) (m x k, INT8) holds the codes of band p (0 elsewhere; band 0 also holds the
// entries above the vector's top = emax - drop, clamped), likewise Q_p(B), and
//   (|A||B|)_ij >= 2^(topA_i + topB_j - 12) sum_{d < bands} 2^(-7d) G_d[i, j],
//   G_d = sum_{p = 0..d} Q_p(A) Q_{d-p}(B)^T   (INT8 GEMMs, exact in INT32 per k-block of
//                                              kKBlock terms),
// because every term dropped (bands >= `bands`, pairs with pa + pb >= bands) is >= 0.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/certified_bound.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "core/moduli_choice.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

// The host reference computes up to 3 bands (the GPU: kCertBands), to show what more bands buy.
inline constexpr int kMaxBands = 3;
static_assert(kCertBands <= kMaxBands);

// The s-independent part: normalised lower bounds of (|A||B|)_ij and upper bounds of the l1
// norms. Normalised means divided by 2^(emaxA_i + emaxB_j) (resp. 2^emax), so nothing
// overflows or underflows however the inputs are scaled.
struct certified_bound_data {
  int64_t m = 0, n = 0, k = 0;
  int bands = 0;
  std::vector<int> emax_a, emax_b;
  std::vector<int> drop_a, drop_b;  // band_drop of each vector: its bands start at emax - drop
  std::vector<uint8_t> skip_a, skip_b;  // zero vectors (their outputs are exact) or non-finite
                                        // ones (recomputed in FP64 by the pipeline)
  std::vector<double> na, nb;  // >= ||a_i||_1 2^-emaxA_i, >= ||b_j||_1 2^-emaxB_j (norm_from_sum)
  std::vector<double> w;       // w[j * m + i] <= (|A||B|)_ij 2^-(emaxA_i + emaxB_j); 0: no
                               // information (every pair of entries below the bands)
};

// bands in [1, kMaxBands]. O(bands (bands + 1) / 2 m n k) integer operations, as the GPU's
// INT8 GEMMs would do them (per-k-block INT32 sums added into 64 bits).
// terms: where given (k entries), only the terms l with terms[l] != 0 enter G: a sum of fewer
// non-negative terms is still a lower bound of (|A||B|)_ij, a weaker one (for measuring what a
// band GEMM over part of the depth costs in moduli; the norms and the band anchors stay the
// whole vectors'). Null: every term, what the GPU computes.
certified_bound_data reference_certified_bound(const gemm_problem& p, int bands,
                                               const std::vector<uint8_t>* terms = nullptr);

// An upper bound of max over (i, j) of T_ij / (|A||B|)_ij for the exponents ea (rows of op(A))
// and eb (columns of op(B)) and residues rounded to nearest or truncated; +inf when some
// non-skipped (i, j) has w == 0; 0 when every pair is skipped.
double certified_worst_ratio(const certified_bound_data& pb, const std::vector<int>& ea,
                      const std::vector<int>& eb, bool nearest);

// The same bound for one element (certified_ratio; for tests).
double certified_ratio_at_element(const certified_bound_data& pb, int64_t i, int64_t j, int ea, int eb,
                         bool nearest);

// certified_worst_ratio() for every s in [kMinModuli, kMaxModuli] (index s; others 0), with the
// exponents the scaling pass in `mode` would choose for s and its rounding of the residues:
// with bands = kCertBands, the worst ratios the GPU computes (kernels/certify.cu), bit for bit.
std::array<double, kMaxModuli + 1> certified_ratios(const gemm_problem& p, scaling_mode mode,
                                                   const certified_bound_data& pb);

// The smallest s whose rigorous bound meets the target (choose_moduli's semantics for
// native / bits / max, on the rigorous ratio instead of the model's eps); s == 0 when none.
moduli_choice certified_choose_moduli(const gemm_problem& p, scaling_mode mode,
                                     const accuracy_target& t, int bands);

}  // namespace ozdgemm::detail
