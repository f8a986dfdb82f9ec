// Launchers of the certified moduli count (OZDGEMM_MODULI=certified; core/certified_bound.hpp
// states the arithmetic, docs/certified.md the proof). Per call, after the scaling
// statistics: magnitude-band planes and l1 norms of both operands, the band GEMMs (INT8, run by
// the engine), their exact sum G per element, and the worst certified ratio of every s. Every
// reduction is an integer sum or an atomicMax on the bits of a non-negative double, so the
// results equal the host reference (reference/certified_choice.cpp) bit for bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/gemm_problem.hpp"

namespace ozdgemm::detail {

// drop[v] = band_drop(emax, exp_sum, nnz) of every vector (the automatic count's statistics).
void launch_band_drops(int64_t nvec, const int* emax_enc, const unsigned long long* exp_sum,
                       const unsigned int* nnz, int* drop, cudaStream_t stream);

// kCertBands INT8 planes of the operand's magnitude codes (magnitude_band from the top
// emax - drop: the code of band p in plane p, 0 elsewhere and in the padding), planes
// nvec_pad * k_pad bytes apart, laid out as the residue planes are ([v][k_pad]).
void launch_band_planes(const operand_vectors& v, const int* emax_enc, const int* drop,
                        int8_t* planes, cudaStream_t stream);

// norm_sum[v] += sum_l norm1_term(x_vl, emax_v) (norm_sum zeroed beforehand).
void launch_norm1_scan(const operand_vectors& v, const int* emax_enc, unsigned long long* norm_sum,
                       cudaStream_t stream);

// Fast scaling's norm scan and the l1 scan above in one pass over the operand: sum_q2[v] +=
// norm_square_term, norm_sum[v] += norm1_term (both zeroed beforehand; the same sums as the two
// scans, integer additions in any order).
void launch_norm_pair_scan(const operand_vectors& v, const int* emax_enc,
                           unsigned long long* sum_q2, unsigned long long* norm_sum,
                           cudaStream_t stream);

// g[e] += part[e] * 2^shift for e < count (part: INT32 sums of products of codes, >= 0).
void launch_band_accumulate(unsigned long long* g, const int32_t* part, int64_t count, int shift,
                            cudaStream_t stream);

// The worst certified ratio of every s over one block of rows of C (up to the target, below).
struct certify_args {
  const unsigned long long* g;  // G of rows [i0, i0 + rows) of C, column-major, leading dim ld
  const int32_t* g32;           // or, when not null, the one band GEMM's INT32 sums (one k-block)
  int64_t i0, rows, ld;
  int64_t m, n, k;
  const int* emax_a;  // encoded as launch_vector_scan stores them
  const int* emax_b;
  const uint32_t* flags_a;
  const uint32_t* flags_b;
  const unsigned long long* norm_a;  // launch_norm1_scan's sums
  const unsigned long long* norm_b;
  const int* drop_a;  // launch_band_drops'
  const int* drop_b;
  const int* exps_all_a;  // [(s - kMinModuli) m + i]: the exponents the scaling gives for s
  const int* exps_all_b;  // [(s - kMinModuli) n + j]
  uint32_t nearest_mask;  // bit s set: the residues of s round to nearest
  // The chooser's target (choose_moduli's c.target, or +inf when it depends on the ratio of
  // s = 20): a slot of s < 20 whose ratio exceeded it holds some ratio above it, not the largest.
  double target;
  unsigned long long* worst;  // [kMaxModuli + 1], atomicMax'ed bits (zeroed beforehand)
  // Columns [0, cols) of the column arrays as passed (a triangle's span of columns: the arrays
  // offset to its first, G holding it from its column 0); 0: all n. n stays exps_all_b's stride.
  int64_t cols = 0;
};
void launch_certified_ratios(const certify_args& a, cudaStream_t stream);

}  // namespace ozdgemm::detail
