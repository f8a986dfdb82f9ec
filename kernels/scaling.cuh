// Launchers of the scaling stage: per-vector statistics and exponents (src/core/scaling_rules.hpp
// states the rules and their proof). Vectors are rows of op(A) and columns of op(B).
// Per-vector reductions use integer atomics only (max, or, add), so results do not depend
// on scheduling and equal the host reference bit for bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"

namespace ozdgemm::detail {

// emax_enc[v] = floor(log2 max_l |x_vl|) + kExponentBias over finite entries, 0 for a zero
// vector; flags[v] |= non-finite classes. Both arrays must be zeroed beforehand.
inline constexpr int kExponentBias = 4096;
void launch_vector_scan(const operand_vectors& v, int* emax_enc, uint32_t* flags,
                        cudaStream_t stream);

// A complex call's B* (docs/complex.md, section 1): column n' + j holds column j's entries
// permuted and negated, so its statistics are column j's. Copies entries [0, half) of each array
// into [half, 2 half); sum_q2, exp_sum, nnz and norm1 (the certificate's l1 sums) may be null
// (not kept by the call).
void launch_mirror_halves(int64_t half, int* emax_enc, uint32_t* flags, unsigned long long* sum_q2,
                          unsigned long long* exp_sum, unsigned int* nnz, unsigned long long* norm1,
                          cudaStream_t stream);

// fast mode: sum_q2[v] += sum_l q_l^2 (zeroed beforehand), then exps[v].
void launch_norm_scan(const operand_vectors& v, const int* emax_enc, unsigned long long* sum_q2,
                      cudaStream_t stream);
void launch_fast_exponents(int64_t nvec, const int* emax_enc, const unsigned long long* sum_q2,
                           const modulus_table& tb, int* exps, cudaStream_t stream);

// accurate mode: the 7-bit upward quantisation u of |x| as one INT8 plane [nvec_pad][k_pad] (a
// batch, operand_vectors::batch: one plane per operand, [batch][nvec_pad][k_pad]).
void launch_bound_quantize(const operand_vectors& v, const int* emax_enc, int8_t* plane,
                           cudaStream_t stream);

// accurate mode, from U = u(A)^T u(B) stored as nblk INT32 blocks [nblk][n_pad][m_pad] whose
// sum is U: column headroom and exponents of B, then row exponents of A. row_max_bits
// (m entries) must be zeroed beforehand.
struct accurate_exponent_args {
  const int32_t* u;  // [nblk][n_pad][m_pad]
  int64_t nblk, m, n, m_pad, n_pad;
  const int* emax_a_enc;
  const int* emax_b_enc;
  int* head_b;                       // n, scratch
  unsigned long long* row_max_bits;  // m, zeroed beforehand
  int* exp_a;                        // out: m
  int* exp_b;                        // out: n
  // A batch of matrices of one shape (engine/batched_emulate.hpp; <= 65535): matrix i's U at
  // u + i nblk n_pad m_pad, its per-vector arrays (all of the above) at + i m or + i n.
  int64_t batch = 1;
};
void launch_accurate_exponents(const accurate_exponent_args& a, const modulus_table& tb,
                               cudaStream_t stream);

// ---- Automatic moduli count (core/moduli_choice.hpp; docs/auto.md, section 3) --------------
// The model needs, per vector, the sum of the exponents and the count of its nonzero finite
// entries, then for every candidate s the worst ratio max_v r_v(s) (core/auto_ratio.hpp) of
// each operand. The worst ratios are atomicMax'ed on the bit patterns of non-negative doubles
// (which order like the values) into arrays indexed by s, [0, kMaxModuli]; the host reads the
// 2 x 21 words back and runs choose_moduli, the code the host reference runs.

// The only moduli-dependent inputs of the scaling rules, for every s (index s; 0, 1 unused).
struct auto_bounds {
  double bound[kMaxModuli + 1];           // modulus_table::bound
  double bound_accurate[kMaxModuli + 1];  // modulus_table::bound_accurate
};
auto_bounds make_auto_bounds();

// launch_vector_scan plus exp_sum[v] += sum of exponent_of(x_vl) and nnz[v] += count, over
// nonzero finite entries (all four arrays zeroed beforehand). Integer atomics: deterministic.
void launch_vector_scan_stats(const operand_vectors& v, int* emax_enc, uint32_t* flags,
                              unsigned long long* exp_sum, unsigned int* nnz, cudaStream_t stream);

// fast mode: worst[s] = bits of max_v r_v(s), e_v(s) = fast_exponent(emax_v, Q_v, bound(s)),
// for s in [kMinModuli, kMaxModuli] (worst zeroed beforehand). exps_all (null: not kept):
// e_v(s) at [(s - kMinModuli) nvec + v], for the certified count (certify.cuh).
struct fast_ratio_args {
  int64_t nvec, k;
  const int* emax_enc;
  const uint32_t* flags;
  const unsigned long long* sum_q2;
  const unsigned long long* exp_sum;
  const unsigned int* nnz;
  unsigned long long* worst;  // [kMaxModuli + 1]
  int* exps_all;              // null: not kept
  // Not null: also drop[v] = band_drop(emax, exp_sum, nnz), the certified count's band drops
  // (launch_band_drops, certify.cuh), from the same statistics in the same launch.
  int* drop = nullptr;
};
void launch_fast_ratios(const fast_ratio_args& a, const auto_bounds& b, cudaStream_t stream);

// The per-vector statistics of one operand, for launch_accurate_ratios.
struct auto_vector_stats {
  const int* emax_enc;
  const uint32_t* flags;
  const unsigned long long* exp_sum;
  const unsigned int* nnz;
};

// accurate mode, from U as for launch_accurate_exponents: for every s, the column headroom
// and exponents of B, the row maxima of 2^hB_j(s) U_ij and the exponents of A, reduced to the
// worst ratios worst_a[s], worst_b[s]. Scratch: col_max (n), head_all (19 n), row_max_all
// (19 m, zeroed beforehand); worst_a, worst_b zeroed beforehand. One pass over U for all s.
// exps_all_a (19 m), exps_all_b (19 n) (null: not kept): the exponents of every s, as for
// launch_fast_ratios.
struct accurate_ratio_args {
  const int32_t* u;  // as for launch_accurate_exponents
  int64_t nblk, m, n, k, m_pad, n_pad;
  auto_vector_stats a, b;
  long long* col_max;               // n, scratch
  int* head_all;                    // 19 n, scratch
  unsigned long long* row_max_all;  // 19 m, zeroed beforehand
  unsigned long long* worst_a;      // [kMaxModuli + 1], zeroed beforehand
  unsigned long long* worst_b;
  int* exps_all_a;  // 19 m; null: not kept
  int* exps_all_b;  // 19 n; null: not kept
};
void launch_accurate_ratios(const accurate_ratio_args& a, const auto_bounds& b,
                            cudaStream_t stream);

}  // namespace ozdgemm::detail
