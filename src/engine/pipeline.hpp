// The steps of the GPU pipeline (engine/emulate.hpp) that every way of choosing the moduli
// count shares: the operands as the per-vector kernels see them, the scaling scans, the exponents
// of accurate scaling, the INT8 GEMMs and the CRT per block of rows of C, and the Karatsuba
// form's sums and products. Enqueued on call.stream; nothing here waits for the host.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "crt.cuh"
#include "engine/emulate.hpp"
#include "engine/layout.hpp"
#include "scaling.cuh"

namespace ozdgemm::detail {

// How the s modulus GEMMs are issued. Measured on the H200 (bench/results/probes/README.md): one
// strided-batched call is faster while one product is too small to fill the GPU (n = 2048: 0.86
// vs 1.00 ms at s = 14), one call per modulus is faster from n = 4096 up (3.05 vs 3.43 ms; 131 vs
// 134 ms at n = 16384). The switch sits at 2^35 = 3.2e10 multiply-adds per modulus, between the
// measured sizes. OZDGEMM_GEMM_BATCHING=batched|looped overrides the rule (read once), for
// measurements.
bool batched_gemms(gemm_batching choice, int64_t m_pad, int64_t n_pad, int64_t k_pad);

// The two operands as the per-vector kernels see them, with the layout's padded plane sizes.
operand_vectors vectors_a(const device_gemm& call, const layout& L);
operand_vectors vectors_b(const device_gemm& call, const layout& L);

// Whether B's residues and band planes are A's, read in place (fast scaling, a call with its own
// A; each is a function of its vector's values, so the bits are those B's own would give):
// * a real call whose p.b is the same vectors as p.a (same pointer, leading dimension and order;
//   a SYRK's square or triangle, a GEMM of A and A^T), m == n: a_transposed; its statistics and
//   exponents are A's too (b_is_a: the layout's share_a_as_b);
// * a complex embedding in the Karatsuba form, m_pad == n', from device_gemm::embedded_b: Re and
//   Im of op(B)'s column j are those of op(A)'s row j, Im negated for ^H (the CRT negates P2,
//   crt_args::negate_p2), and B*'s band rows are A's rows, halves swapped for columns n' + j
//   (copy_bands_to_b); P3's B is A's sums (^T) or differences (^H, karatsuba_sums).
b_source b_from_a(const device_gemm& call);
inline bool b_is_a(const device_gemm& call) {
  return !call.karatsuba.on() && b_from_a(call) != b_source::own;
}

// B's band planes from A's, for a complex call whose B is A's (b_from_a); A's are written.
void copy_bands_to_b(const device_gemm& call, const layout& L);

// The columns of B whose statistics are scanned: the first n' of a complex call's B*
// (device_gemm::mirrored_b), all of them otherwise.
operand_vectors scanned_vectors_b(const device_gemm& call, const layout& L);

// What B's residues are written from: in the Karatsuba form only the first k' of each column of
// B* (Re B, Im B), which is all its GEMMs read of B (karatsuba_gemms).
operand_vectors residue_vectors_b(const device_gemm& call, const layout& L);

// One operand's scaling statistics: exponent extremes and non-finite flags, with a per-call
// choice's sums (`stats`), and fast mode's norms; with norm1 (a certified call, fast scaling) the
// certificate's l1 norms in the same pass as fast mode's norms.
void scan_operand(const operand_vectors& v, bool stats, bool fast, int* emax, uint32_t* flags,
                  unsigned long long* exp_sum, unsigned int* nnz, unsigned long long* sum_q2,
                  unsigned long long* norm1, cudaStream_t st);

// The arguments of accurate mode's exponent kernels for an m x n call (or every matrix of a
// batch: batch_layout in engine/batched_emulate.cpp has the same arrays), from its layout.
template <class Layout>
accurate_exponent_args accurate_args(const Layout& L, int64_t m, int64_t n) {
  accurate_exponent_args a{};
  a.u = L.bound_u;
  a.nblk = L.nblk;
  a.m = m;
  a.n = n;
  a.m_pad = L.m_pad;
  a.n_pad = L.n_pad;
  a.emax_a_enc = L.emax_a;
  a.emax_b_enc = L.emax_b;
  a.head_b = L.head_b;
  a.row_max_bits = L.row_max;
  a.exp_a = L.exp_a;
  a.exp_b = L.exp_b;
  return a;
}

// Accurate mode's exponents for one moduli count, from the bound GEMM's U.
void accurate_exponents(const device_gemm& call, const layout& L, const modulus_table& tb);

// Records e on s when e is set (stage_events' optional instrumentation).
void record(cudaEvent_t e, cudaStream_t s);

// Bit s set: the residues of s moduli round to nearest at depth k (scaling_rules.hpp).
uint32_t nearest_mask_for(int64_t k);

// Rows [i0, i0 + rows) of C as a problem of their own (padded rows; m >= 1: the padding is under
// 16 rows).
gemm_problem block_problem(const gemm_problem& p, int64_t i0, int64_t rows);

// The CRT's arguments for rows [i0, i0 + rows) of C (pb: the block's problem); in the Karatsuba
// form the CRT combines the three products (karatsuba_gemms).
crt_args crt_args_for(const device_gemm& call, const layout& L, const gemm_problem& pb, int64_t i0,
                      int64_t rows);

// The residue planes of Re + Im of both operands of the Karatsuba form, once the residues exist;
// chosen: the count chosen on the GPU, with tb the table of kMaxModuli (launch_residue_sums).
void karatsuba_sums(const device_gemm& call, const layout& L, const modulus_table& tb,
                    const int* chosen = nullptr);

// The columns [c0, c1) of C (of each half of T in the Karatsuba form) that rows [i0, i0 + rows)
// need: all of them, or those the call's triangle reaches (device_gemm::part), whose INT8
// products go to the planes' first c1 - c0 columns.
struct col_span {
  int64_t c0, c1;
};
col_span block_cols(const device_gemm& call, const layout& L, int64_t i0, int64_t rows);

// A triangle call's CRT of rows [i0, i0 + rows): pb and args narrowed to block_cols's columns,
// with the triangle's mask.
void restrict_to_part(const device_gemm& call, const layout& L, int64_t i0, int64_t rows,
                      gemm_problem* pb, crt_args* args);

// Step 3 for rows [i0, i0 + rows) of C: the INT8 GEMMs of tb.s moduli per k-block, batched over
// the moduli or one call each (batched_gemms), on g.stream; between k-blocks the INT32 sums are
// reduced mod m_t so that the next block cannot overflow.
void block_gemms(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                 const modulus_table& tb, int64_t i0, int64_t rows);

// Which residues enqueue_products writes: both sides, B's only (reuse_a keeps A's), or none
// (written already, with the band planes: engine/emulate.cpp).
enum class residue_writes { both, b_only, none };

// Steps 2-4 of a call whose count tb.s is known on the host: the residues (`writes`) from the
// exponents exp_a and exp_b, then per block of rows of C
// (one block unless the products would outgrow the workspace bound, rule_row_block) the INT8
// GEMMs and the reduction + CRT + inverse scaling + alpha/beta; the CRT writes C only where
// *only_if == tb.s when only_if is set (launch_crt).
void enqueue_products(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                      const operand_vectors& va, const modulus_table& tb, const int* exp_a,
                      const int* exp_b, residue_writes writes, const int* only_if);

}  // namespace ozdgemm::detail
