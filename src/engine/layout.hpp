// Where one call's arrays sit in its workspace (engine/emulate.hpp's pipeline): the scaling
// statistics, the exponents, the residue planes, the INT32 products of one block of rows of C, the
// certificate's arrays, the Karatsuba form's and the lt backend's, each 256-byte aligned, and the
// blocks of rows of C that steps 3-4 run on.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/karatsuba.hpp"
#include "core/scaling_rules.hpp"
#include "engine/int8_gemm.hpp"

namespace ozdgemm::detail {

struct layout {
  int64_t m_pad, n_pad, k_pad, nblk;
  // A's arrays come first and their offsets depend on m, k, s and the mode only, so a call
  // with the same A and another n finds A's scaling and residues where it left them
  // (device_gemm::reuse_a). Each side's scan outputs are zeroed by one memset per call.
  int* emax_a;
  uint32_t* flags_a;
  unsigned long long* sum_q2_a;   // fast
  unsigned long long* exp_sum_a;  // auto only (null otherwise), likewise below
  unsigned int* nnz_a;
  unsigned long long* norm_a;  // certified only (null otherwise), likewise below
  size_t a_zeroed_end;
  int* exp_a;
  int8_t* res_a;  // [s][m_pad][k_pad]
  // certified: [kCertBands][m_pad][k_pad], the band planes (their own bytes: a speculated count
  // writes them in its residue pass, engine/emulate.cpp)
  int8_t* bands_a;
  size_t b_zeroed_begin;
  int* emax_b;
  uint32_t* flags_b;
  unsigned long long* sum_q2_b;  // fast
  unsigned long long* row_max;   // accurate
  unsigned long long* exp_sum_b;
  unsigned int* nnz_b;
  unsigned long long* norm_b;
  // [2][kMaxModuli + 1]: worst ratios of A, then of B; certified: a third row, the worst
  // certified ratio over C (one copy brings all of them back)
  unsigned long long* worst;
  unsigned long long* row_max_all;  // accurate: [19][m]
  size_t b_zeroed_end;
  // Written before they are read.
  int* exp_b;
  int* head_b;
  // accurate: the u planes, read only by the bound GEMMs, before any residue is written: they
  // sit in the first residue plane of each side.
  int8_t* bound_a;
  int8_t* bound_b;
  // bound_u (accurate) is dead once the exponents exist, before the first product GEMM
  // writes prod: the two share their bytes (shared_bytes, the larger of the two).
  int32_t* bound_u;
  int32_t* prod;  // [s][n_pad][rows of one block]
  size_t shared_bytes;
  int8_t* res_b;                  // [s][n_pad][k_pad]
  int8_t* bands_b;                // certified: [kCertBands][n_pad][k_pad]
  int64_t row_block, row_blocks;  // rows of C per block of steps 3-4, and their number
  long long* col_max;             // auto, accurate: [n]
  int* head_all;                  // auto, accurate: [19][n]
  int* exps_all_a;                // certified: [19][m], [19][n] (the exponents of every s)
  int* exps_all_b;
  int* drop_a;  // certified: [m], [n], the band drops
  int* drop_b;
  int* chosen;                 // certified: the count chosen on the GPU (engine/gpu_choice.hpp)
  unsigned long long* cert_g;  // certified: [n_pad][row_block], G of one block of rows
  int32_t* cert_part;          // certified: [n_pad][row_block], one band GEMM's INT32 sums
  // Karatsuba form (core/karatsuba.hpp), halves k' and n': the residues of Re + Im of A'
  // ([s][m_pad][k']) and the third product ([s][n'][rows of one block]). Those of B go into
  // B's residue planes, in the second half of rows [0, n'), which that form never reads.
  int8_t* sum_a;
  int32_t* prod3;
  size_t prod3_bytes;
  char* lt_ws;  // the lt INT8 GEMM backend's workspace (null, 0 bytes for cublas)
  size_t lt_ws_bytes;
  size_t total_bytes;
  bool fits;  // false: some size overflowed; nothing above may be used
};

// Block rb of the layout's blocks of rows: its first padded row and its padded row count (the
// last block may be shorter).
struct row_span {
  int64_t i0, rows;
};
row_span block_rows(const layout& L, int64_t rb);

// The rows per block of a call computing one triangle of C of order m (device_gemm::part):
// OZDGEMM_ROW_BLOCK's rows where set, else core/gemm_problem.hpp's triangle_rows.
int64_t part_row_block(int64_t m);

// The call's layout with its row blocks: requested_row_block (> 0: rows), else
// OZDGEMM_ROW_BLOCK, else the rule. One make_layout when the rule keeps one block (the common
// case), two when it splits.
layout layout_for(void* base, int64_t m, int64_t n, int64_t k, int s, scaling_mode mode,
                  bool automatic, bool certified, int8_gemm_backend gemm,
                  int64_t requested_row_block, const karatsuba_halves& halves);

// Points B's statistics, exponents, residue and band planes at A's, for a call whose B is A read
// the other way (pipeline.hpp's b_is_a; m == n, so the planes have the same size). B's own bytes
// stay in the layout, unused; B's worst ratios keep their own row.
void share_a_as_b(layout* L);

}  // namespace ozdgemm::detail
