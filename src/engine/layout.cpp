#include "engine/layout.hpp"

#include <algorithm>

#include "common/env.hpp"
#include "core/certified_bound.hpp"
#include "core/checked_math.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "engine/carver.hpp"
#include "engine/emulate.hpp"

namespace ozdgemm::detail {
namespace {

// Largest m, n or k a layout accepts: round_up must not overflow, and anything larger could
// not be allocated anyway.
constexpr int64_t kMaxLayoutDim = int64_t{1} << 62;

// `automatic` adds the model's arrays (and nothing else: the fixed-s layout is unchanged),
// `certified` (with automatic) the certification's; `gemm` (resolved) the INT8 GEMM backend's
// workspace, last. row_block: rows of C per block of the GEMM and CRT steps (0 or >= m: one
// block).
layout make_layout(void* base, int64_t m, int64_t n, int64_t k, int s, scaling_mode mode,
                   bool automatic, bool certified, int8_gemm_backend gemm, int64_t row_block,
                   const karatsuba_halves& halves) {
  constexpr int kSpan = kMaxModuli - kMinModuli + 1;
  layout L{};
  if (m < 0 || n < 0 || k < 0 || m > kMaxLayoutDim || n > kMaxLayoutDim || k > kMaxLayoutDim ||
      s < 1) {
    L.fits = false;
    return L;
  }
  L.m_pad = round_up(m, kPad);
  L.n_pad = round_up(n, kPad);
  L.k_pad = round_up(k, kPad);
  L.nblk = (L.k_pad + kKBlock - 1) / kKBlock;
  L.row_block = row_block <= 0 || row_block >= L.m_pad ? L.m_pad : round_up(row_block, kPad);
  L.row_blocks = L.m_pad == 0 ? 0 : (L.m_pad - 1) / L.row_block + 1;  // no overflow at 2^62
  const bool accurate = mode == scaling_mode::accurate;
  carver c(base);
  L.emax_a = c.take<int>(m);
  L.flags_a = c.take<uint32_t>(m);
  L.sum_q2_a = c.take<unsigned long long>(accurate ? 0 : m);
  if (automatic) {
    L.exp_sum_a = c.take<unsigned long long>(m);
    L.nnz_a = c.take<unsigned int>(m);
  }
  if (certified) L.norm_a = c.take<unsigned long long>(m);
  L.a_zeroed_end = c.used();
  L.exp_a = c.take<int>(m);
  L.res_a = c.take<int8_t>(c.count(s, L.m_pad, L.k_pad));
  if (certified) L.bands_a = c.take<int8_t>(c.count(kCertBands, L.m_pad, L.k_pad));
  L.b_zeroed_begin = c.align();
  L.emax_b = c.take<int>(n);
  L.flags_b = c.take<uint32_t>(n);
  L.sum_q2_b = c.take<unsigned long long>(accurate ? 0 : n);
  L.row_max = c.take<unsigned long long>(accurate ? m : 0);
  if (automatic) {
    L.exp_sum_b = c.take<unsigned long long>(n);
    L.nnz_b = c.take<unsigned int>(n);
    if (certified) L.norm_b = c.take<unsigned long long>(n);
    L.worst = c.take<unsigned long long>((certified ? 3 : 2) * (kMaxModuli + 1));
    L.row_max_all = c.take<unsigned long long>(accurate ? c.count(kSpan, m) : 0);
  }
  L.b_zeroed_end = c.used();
  L.exp_b = c.take<int>(n);
  L.head_b = c.take<int>(accurate ? n : 0);
  {
    const int64_t u = accurate ? c.count(L.nblk, L.m_pad, L.n_pad) : 0;
    const int64_t prod = c.count(s, L.row_block, L.n_pad);
    const size_t before = c.align();
    L.prod = c.take<int32_t>(u > prod ? u : prod);
    L.bound_u = L.prod;
    L.shared_bytes = c.used() - before;
  }
  L.res_b = c.take<int8_t>(c.count(s, L.n_pad, L.k_pad));
  if (certified) L.bands_b = c.take<int8_t>(c.count(kCertBands, L.n_pad, L.k_pad));
  L.bound_a = accurate ? L.res_a : nullptr;  // s >= 2 planes each: room for one bound plane
  L.bound_b = accurate ? L.res_b : nullptr;
  if (automatic && accurate) {
    L.col_max = c.take<long long>(n);
    L.head_all = c.take<int>(c.count(kSpan, n));
  }
  if (certified) {
    L.exps_all_a = c.take<int>(c.count(kSpan, m));
    L.exps_all_b = c.take<int>(c.count(kSpan, n));
    L.drop_a = c.take<int>(m);
    L.drop_b = c.take<int>(n);
    L.chosen = c.take<int>(1);
    L.cert_g = c.take<unsigned long long>(c.count(L.row_block, L.n_pad));
    L.cert_part = c.take<int32_t>(c.count(L.row_block, L.n_pad));
  }
  if (halves.on()) {
    L.sum_a = c.take<int8_t>(c.count(s, L.m_pad, halves.k));
    const size_t before = c.align();
    L.prod3 = c.take<int32_t>(c.count(s, L.row_block, halves.n));
    L.prod3_bytes = c.used() - before;
  }
  L.lt_ws_bytes = int8_gemm_workspace_bytes(gemm, L.m_pad, L.n_pad);
  if (L.lt_ws_bytes != 0) L.lt_ws = c.take<char>(static_cast<int64_t>(L.lt_ws_bytes));
  L.total_bytes = c.used();
  L.fits = c.ok();
  return L;
}

// Rows of C per block of the GEMM and CRT steps. The INT32 products of all of C, 4 s m n
// bytes, are most of the workspace at large sizes (24 GB at 16384^3, s = 15, against
// s(m+n)k + (s+4)mn = 13 GB for an implementation that reduces each product to bytes before
// the next, the workspace bound). When the whole product would take the workspace past that bound,
// the GEMMs and the CRT run on blocks of rows of C: as many rows as the bound leaves room for
// (the products reuse the accurate mode's bound GEMM output, see layout), balanced, and never
// fewer than kMinRowBlock rows or kMinBlockElements elements of C, below which the INT8 GEMMs
// lose speed (the lt backend's workspace is not counted: the peer's cuBLAS workspace is not
// either). Measured on the H200 (bench/results/probes/README.md): blocks
// made 16384^3 6-10% faster (the GEMMs and the CRT both shorter), 4096^3 (4 blocks of
// 1024 x 4096) no slower, but 2048^2 (1024 x 2048) 4% and 2048 x 2048 x 262144 10% slower:
// hence the element floor, which keeps those at one block. The bits are the same: each
// element of C is computed from the same residues by the same CRT.
// OZDGEMM_ROW_BLOCK=off (one block) or =<rows> overrides the rule (read once), for measurement.
constexpr int64_t kMinRowBlock = 1024;
constexpr int64_t kMinBlockElements = int64_t{1} << 22;

// The rule, from the one-block layout `whole` of the same call (fits, m_pad and n_pad > 0).
int64_t rule_row_block(const layout& whole, int64_t m, int64_t n, int64_t k, int s,
                       const karatsuba_halves& halves) {
  const double peer = static_cast<double>(s) * (static_cast<double>(m) + n) * k +
                      (s + 4.0) * static_cast<double>(m) * n;
  // cuBLASLt's workspace (at most 64 MB) is left out, as cuBLAS's own is on the peer's side.
  const double own = static_cast<double>(whole.total_bytes - whole.lt_ws_bytes);
  if (own <= peer) return whole.m_pad;
  const double room = peer - (own - static_cast<double>(whole.shared_bytes) -
                              static_cast<double>(whole.prod3_bytes));
  const double per_row = 4.0 * s * static_cast<double>(whole.n_pad + halves.n);
  const double room_rows = room <= 0 ? 0 : room / per_row;
  if (room_rows >= static_cast<double>(whole.m_pad)) return whole.m_pad;
  int64_t rows = static_cast<int64_t>(room_rows) / 256 * 256;  // < m_pad: fits int64
  const int64_t min_rows =
      round_up(std::max(kMinRowBlock, (kMinBlockElements + whole.n_pad - 1) / whole.n_pad), 256);
  if (rows < min_rows) rows = min_rows;
  if (rows >= whole.m_pad) return whole.m_pad;
  const int64_t blocks = (whole.m_pad + rows - 1) / rows;
  return round_up((whole.m_pad + blocks - 1) / blocks, kPad);  // <= rows: rows is a multiple of 16
}

}  // namespace

int64_t part_row_block(int64_t m) {
  static const int64_t forced = row_block_from_env_value(setting_env("OZDGEMM_ROW_BLOCK"));
  return forced > 0 ? forced : triangle_rows(m);
}

void share_a_as_b(layout* L) {
  L->emax_b = L->emax_a;
  L->flags_b = L->flags_a;
  L->sum_q2_b = L->sum_q2_a;
  L->exp_sum_b = L->exp_sum_a;
  L->nnz_b = L->nnz_a;
  L->norm_b = L->norm_a;
  L->exp_b = L->exp_a;
  L->res_b = L->res_a;
  L->bands_b = L->bands_a;
  L->exps_all_b = L->exps_all_a;
  L->drop_b = L->drop_a;
}

row_span block_rows(const layout& L, int64_t rb) {
  const int64_t i0 = rb * L.row_block;
  return {i0, L.m_pad - i0 < L.row_block ? L.m_pad - i0 : L.row_block};
}

layout layout_for(void* base, int64_t m, int64_t n, int64_t k, int s, scaling_mode mode,
                  bool automatic, bool certified, int8_gemm_backend gemm,
                  int64_t requested_row_block, const karatsuba_halves& halves) {
  // -1: the rule; 0: one block; > 0: rows
  static const int64_t forced = row_block_from_env_value(setting_env("OZDGEMM_ROW_BLOCK"));
  const int64_t rows = requested_row_block > 0 ? requested_row_block : forced;
  if (rows >= 0)
    return make_layout(base, m, n, k, s, mode, automatic, certified, gemm, rows, halves);
  const layout whole = make_layout(base, m, n, k, s, mode, automatic, certified, gemm, 0, halves);
  if (!whole.fits || whole.m_pad == 0 || whole.n_pad == 0) return whole;  // no products
  // The rule sees the arrays of the count, not the certificate's (which scale with the block):
  // a certified call's products get the row blocks of a fixed count's, and its INT8 GEMMs their
  // speed (8 blocks instead of 4 at 8192^3 made them 14% slower on the H200).
  const int64_t rule = rule_row_block(
      certified ? make_layout(nullptr, m, n, k, s, mode, automatic, false, gemm, 0, halves) : whole,
      m, n, k, s, halves);
  return rule >= whole.m_pad
             ? whole
             : make_layout(base, m, n, k, s, mode, automatic, certified, gemm, rule, halves);
}

}  // namespace ozdgemm::detail
