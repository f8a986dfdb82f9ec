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
void launch_vector_scan(const operand& x, int64_t nvec, int64_t k, const double* alpha_dev,
                        int* emax_enc, uint32_t* flags, cudaStream_t stream);

// fast mode: sum_q2[v] += sum_l q_l^2 (zeroed beforehand), then exps[v].
void launch_norm_scan(const operand& x, int64_t nvec, int64_t k, const double* alpha_dev,
                      const int* emax_enc, unsigned long long* sum_q2, cudaStream_t stream);
void launch_fast_exponents(int64_t nvec, const int* emax_enc, const unsigned long long* sum_q2,
                           const modulus_table& tb, int* exps, cudaStream_t stream);

// accurate mode: the 7-bit upward quantisation u of |x| as one INT8 plane [nvec_pad][k_pad].
void launch_bound_quantize(const operand& x, int64_t nvec, int64_t nvec_pad, int64_t k,
                           int64_t k_pad, const double* alpha_dev, const int* emax_enc,
                           int8_t* plane, cudaStream_t stream);

// accurate mode, from U = u(A)^T u(B) stored as nblk INT32 blocks [nblk][n_pad][m_pad] whose
// sum is U: column headroom and exponents of B, then row exponents of A. row_max_bits
// (m entries) must be zeroed beforehand.
void launch_accurate_exponents(const int32_t* u, int64_t nblk, int64_t m, int64_t n,
                               int64_t m_pad, int64_t n_pad, const int* emax_a_enc,
                               const int* emax_b_enc, const modulus_table& tb, int* head_b,
                               unsigned long long* row_max_bits, int* exp_a, int* exp_b,
                               cudaStream_t stream);

}  // namespace ozdgemm::detail
