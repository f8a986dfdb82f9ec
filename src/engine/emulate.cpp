#include "engine/emulate.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "certify.cuh"
#include "choice.cuh"
#include "common/cublas_api.hpp"
#include "common/env.hpp"
#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "common/logging.hpp"
#include "common/stream_capture.hpp"
#include "core/certified_bound.hpp"
#include "core/checked_math.hpp"
#include "core/moduli.hpp"
#include "crt.cuh"
#include "engine/gpu_choice.hpp"
#include "engine/int8_gemm.hpp"
#include "engine/speculation.hpp"
#include "fallback_gemm.cuh"
#include "karatsuba.cuh"
#include "residues.cuh"
#include "scaling.cuh"

namespace ozdgemm::detail {
namespace {

// Carves typed, 256-byte aligned arrays out of one buffer; with a null base it only sizes.
// Every size is checked (core/checked_math.hpp): on overflow ok() turns false and the
// pointers handed out are meaningless; make_layout's callers check it before any use.
class carver {
 public:
  explicit carver(void* base) : base_(static_cast<char*>(base)) {}
  // a * b * c elements, or 0 (and !ok()) when the product overflows.
  int64_t count(int64_t a, int64_t b, int64_t c = 1) {
    int64_t r = 0;
    if (!checked_mul(a, b, &r) || !checked_mul(r, c, &r)) {
      ok_ = false;
      return 0;
    }
    return r;
  }
  template <class T>
  T* take(int64_t count) {
    size_t bytes = 0, aligned = 0, end = 0;
    if (!checked_add(offset_, size_t{255}, &aligned) || !checked_bytes(count, sizeof(T), &bytes) ||
        !checked_add(aligned / 256 * 256, bytes, &end) || end > static_cast<size_t>(PTRDIFF_MAX)) {
      ok_ = false;
      return nullptr;
    }
    offset_ = aligned / 256 * 256;
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + offset_);
    offset_ = end;
    return p;
  }
  size_t used() const { return offset_; }
  // The offset the next take() will get.
  size_t align() {
    offset_ = (offset_ + 255) / 256 * 256;
    return offset_;
  }
  bool ok() const { return ok_; }

 private:
  char* base_;
  size_t offset_ = 0;
  bool ok_ = true;
};

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

// Largest m, n or k a layout accepts: round_up must not overflow, and anything larger could
// not be allocated anyway.
constexpr int64_t kMaxLayoutDim = int64_t{1} << 62;

// Block rb of the layout's blocks of rows: its first padded row and its padded row count (the
// last block may be shorter).
struct row_span {
  int64_t i0, rows;
};
row_span block_rows(const layout& L, int64_t rb) {
  const int64_t i0 = rb * L.row_block;
  return {i0, L.m_pad - i0 < L.row_block ? L.m_pad - i0 : L.row_block};
}

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

// The call's layout with its row blocks: requested_row_block (> 0: rows), else
// OZDGEMM_ROW_BLOCK, else the rule. One make_layout when the rule keeps one block (the common
// case), two when it splits.
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

// How the s modulus GEMMs are issued. Measured on the H200 (bench/results/probes/README.md): one
// strided-batched call is faster while one product is too small to fill the GPU (n = 2048: 0.86
// vs 1.00 ms at s = 14), one call per modulus is faster from n = 4096 up (3.05 vs 3.43 ms; 131 vs
// 134 ms at n = 16384). The switch sits at 2^35 = 3.2e10 multiply-adds per modulus, between the
// measured sizes. OZDGEMM_GEMM_BATCHING=batched|looped overrides the rule (read once), for
// measurements.
bool batched_gemms(gemm_batching choice, int64_t m_pad, int64_t n_pad, int64_t k_pad) {
  static const gemm_batching forced =
      gemm_batching_from_env_value(setting_env("OZDGEMM_GEMM_BATCHING"));
  if (choice == gemm_batching::automatic) choice = forced;
  if (choice != gemm_batching::automatic) return choice == gemm_batching::batched;
  return static_cast<double>(m_pad) * n_pad * k_pad < 34359738368.0;  // 2^35
}

// The two operands as the per-vector kernels see them, with the layout's padded plane sizes.
operand_vectors vectors_a(const device_gemm& call, const layout& L) {
  return operand_vectors{call.p.a, call.p.m, call.p.k, call.alpha.dev, L.m_pad, L.k_pad};
}
operand_vectors vectors_b(const device_gemm& call, const layout& L) {
  return operand_vectors{call.p.b, call.p.n, call.p.k, call.alpha.dev, L.n_pad, L.k_pad};
}
// The columns of B whose statistics are scanned: the first n' of a complex call's B*
// (device_gemm::mirrored_b), all of them otherwise.
operand_vectors scanned_vectors_b(const device_gemm& call, const layout& L) {
  operand_vectors v = vectors_b(call, L);
  if (call.mirrored_b > 0) v.nvec = v.nvec_pad = call.mirrored_b;
  return v;
}
// What B's residues are written from: in the Karatsuba form only the first k' of each column of
// B* (Re B, Im B), which is all its GEMMs read of B (karatsuba_gemms).
operand_vectors residue_vectors_b(const device_gemm& call, const layout& L) {
  operand_vectors v = vectors_b(call, L);
  if (call.karatsuba.on()) v.k = v.k_written = call.karatsuba.k;
  return v;
}

// One operand's scaling statistics: exponent extremes and non-finite flags, with a per-call
// choice's sums (`stats`), and fast mode's norms; with norm1 (a certified call, fast scaling) the
// certificate's l1 norms in the same pass as fast mode's norms.
void scan_operand(const operand_vectors& v, bool stats, bool fast, int* emax, uint32_t* flags,
                  unsigned long long* exp_sum, unsigned int* nnz, unsigned long long* sum_q2,
                  unsigned long long* norm1, cudaStream_t st) {
  if (stats)
    launch_vector_scan_stats(v, emax, flags, exp_sum, nnz, st);
  else
    launch_vector_scan(v, emax, flags, st);
  OZDGEMM_CHECK_LAUNCH();
  if (fast && norm1 != nullptr)
    launch_norm_pair_scan(v, emax, sum_q2, norm1, st);
  else if (fast)
    launch_norm_scan(v, emax, sum_q2, st);
  OZDGEMM_CHECK_LAUNCH();
}

// Accurate mode's exponents for one moduli count, from the bound GEMM's U.
void accurate_exponents(const device_gemm& call, const layout& L, const modulus_table& tb) {
  accurate_exponent_args a{};
  a.u = L.bound_u;
  a.nblk = L.nblk;
  a.m = call.p.m;
  a.n = call.p.n;
  a.m_pad = L.m_pad;
  a.n_pad = L.n_pad;
  a.emax_a_enc = L.emax_a;
  a.emax_b_enc = L.emax_b;
  a.head_b = L.head_b;
  a.row_max_bits = L.row_max;
  a.exp_a = L.exp_a;
  a.exp_b = L.exp_b;
  launch_accurate_exponents(a, tb, call.stream);
}

void record(cudaEvent_t e, cudaStream_t s) {
  if (e != nullptr) OZDGEMM_CUDA_TRY(cudaEventRecord(e, s));
}

// Bit s set: the residues of s moduli round to nearest at depth k (scaling_rules.hpp).
uint32_t nearest_mask_for(int64_t k) {
  uint32_t mask = 0;
  for (int s = kMinModuli; s <= kMaxModuli; ++s)
    if (rounds_to_nearest(moduli_for(s), k)) mask |= uint32_t{1} << s;
  return mask;
}

// Rows [i0, i0 + rows) of C as a problem of their own (padded rows; m >= 1: the padding is under
// 16 rows).
gemm_problem block_problem(const gemm_problem& p, int64_t i0, int64_t rows) {
  gemm_problem pb = p;
  pb.m = p.m - i0 < rows ? p.m - i0 : rows;
  pb.c = p.c + i0;
  pb.a = p.a.from_vector(i0);
  return pb;
}

// The CRT's arguments for rows [i0, i0 + rows) of C (pb: the block's problem); in the Karatsuba
// form the CRT combines the three products (karatsuba_gemms).
crt_args crt_args_for(const device_gemm& call, const layout& L, const gemm_problem& pb, int64_t i0,
                      int64_t rows) {
  crt_args args{L.prod,         rows,      L.n_pad, L.exp_a + i0, L.exp_b,
                L.flags_a + i0, L.flags_b, pb.a,    call.p.b};
  if (call.karatsuba.on()) {
    args.prod3 = L.prod3;
    args.half_n = call.karatsuba.n;
  }
  return args;
}

// The residue planes of Re + Im of both operands of the Karatsuba form, once the residues exist;
// chosen: the count chosen on the GPU, with tb the table of kMaxModuli (launch_residue_sums).
void karatsuba_sums(const device_gemm& call, const layout& L, const modulus_table& tb,
                    const int* chosen = nullptr) {
  const karatsuba_halves& h = call.karatsuba;
  // Re A' in columns [0, k') of each row of A's planes, Im A' in [k', 2k'); Re B in the first k'
  // of rows [0, n') of B's planes, Im B in the first k' of rows [n', 2n'). The sums for B go to
  // columns [k', 2k') of rows [0, n') (-Im B there is dead: only the four-product form reads it).
  launch_residue_sums(L.res_a, L.m_pad * L.k_pad, L.k_pad, h.k, L.m_pad, h.k, tb, L.sum_a,
                      L.m_pad * h.k, h.k, call.stream, chosen);
  launch_residue_sums(L.res_b, L.n_pad * L.k_pad, L.k_pad, h.n * L.k_pad, h.n, h.k, tb,
                      L.res_b + h.k, L.n_pad * L.k_pad, L.k_pad, call.stream, chosen);
  OZDGEMM_CHECK_LAUNCH();
}

// Step 3 of the Karatsuba form for rows [i0, i0 + rows) of C: per k-block of the halves, the
// three products P1, P2 (into the halves of prod's planes that T_re and T_im take) and P3 (into
// prod3), batched over the moduli or one call each; between k-blocks each is reduced mod m_t as
// in block_gemms. The CRT combines them into T's parts (crt_args::prod3), so only calls whose
// CRT has prod3 set may use this form (launch_crt, launch_chosen_crt).
void karatsuba_gemms(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                     const modulus_table& tb, int64_t i0, int64_t rows) {
  const int s = tb.s;
  const int64_t kh = call.karatsuba.k, nh = call.karatsuba.n, K = L.k_pad;
  const int64_t plane = rows * L.n_pad, half = rows * nh;
  const int64_t a_plane = L.m_pad * K, b_plane = L.n_pad * K;
  const int64_t sa_plane = L.m_pad * kh;
  const bool batched = batched_gemms(call.batching, rows, nh, kh);
  for (int64_t k0 = 0; k0 < kh; k0 += kKBlock) {
    const int64_t klen = kh - k0 < kKBlock ? kh - k0 : kKBlock;
    if (k0 > 0) {
      if (g.use == lt_use::plan_only) return;  // accumulating k-blocks are never timed
      launch_fold(L.prod, plane, tb, g.stream);
      launch_fold(L.prod3, half, tb, g.stream);
      OZDGEMM_CHECK_LAUNCH();
    }
    struct product {
      const int8_t* a;
      int64_t lda, a_stride;
      const int8_t* b;
      int64_t ldb, b_stride;
      int32_t* c;
      int64_t c_stride;
    };
    const product products[3] = {
        {L.res_a + i0 * K + k0, K, a_plane, L.res_b + k0, K, b_plane, L.prod, plane},
        {L.res_a + i0 * K + kh + k0, K, a_plane, L.res_b + nh * K + k0, K, b_plane, L.prod + half,
         plane},
        {L.sum_a + i0 * kh + k0, kh, sa_plane, L.res_b + kh + k0, K, b_plane, L.prod3, half}};
    for (const product& q : products) {
      const int count = batched ? s : 1;
      for (int t = 0; t < s; t += count) {
        const lt_gemm_shape shape{rows, nh,    klen,       q.lda,      q.ldb,
                                  rows, count, q.a_stride, q.b_stride, q.c_stride};
        int8_gemm_views(g, shape, q.a + t * q.a_stride, q.b + t * q.b_stride, q.c + t * q.c_stride,
                        k0 > 0);
      }
    }
  }
}

// Step 3 for rows [i0, i0 + rows) of C: the INT8 GEMMs of tb.s moduli per k-block, batched over
// the moduli or one call each (batched_gemms), on g.stream; between k-blocks the INT32 sums are
// reduced mod m_t so that the next block cannot overflow.
void block_gemms(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                 const modulus_table& tb, int64_t i0, int64_t rows) {
  if (call.karatsuba.on()) return karatsuba_gemms(call, L, g, tb, i0, rows);
  const int s = tb.s;
  const int64_t plane = rows * L.n_pad, a_plane = L.m_pad * L.k_pad;
  const int8_t* res_a = L.res_a + i0 * L.k_pad;
  for (int64_t blk = 0; blk < L.nblk; ++blk) {
    const int64_t k0 = blk * kKBlock;
    const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
    if (blk > 0) {
      if (g.use == lt_use::plan_only) return;  // accumulating k-blocks are never timed
      launch_fold(L.prod, plane, tb, g.stream);
      OZDGEMM_CHECK_LAUNCH();
    }
    if (batched_gemms(call.batching, rows, L.n_pad, L.k_pad)) {
      int8_gemm(g, rows, L.n_pad, k0, klen, L.k_pad, res_a, a_plane, L.res_b, L.prod, s, blk > 0);
    } else {
      for (int t = 0; t < s; ++t)
        int8_gemm(g, rows, L.n_pad, k0, klen, L.k_pad, res_a + t * a_plane, a_plane,
                  L.res_b + t * L.n_pad * L.k_pad, L.prod + t * plane, 1, blk > 0);
    }
  }
}

// The certified count's per-element bound, after the ratio launches kept the exponents of
// every s: band planes and l1 norms of both operands, then per block of rows of C the band
// GEMMs G_d = sum_p Q_p(A) Q_{d-p}(B)^T (exact INT32 per k-block, added into G in 64 bits with
// weight 2^(7 (kCertBands - 1 - d)); with one band and one k-block the INT32 sums are G) and
// the worst certified ratio of every s
// (core/certified_bound.hpp). The band planes use residue planes 1..kCertBands, which hold
// nothing yet (plane 0 may hold accurate mode's bound plane); the residues overwrite them.
void certify_on_device(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                       const int8_t* written_bands_a = nullptr,
                       const int8_t* written_bands_b = nullptr) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  const int64_t a_plane = L.m_pad * L.k_pad, b_plane = L.n_pad * L.k_pad;
  const int8_t* bands_a = written_bands_a != nullptr ? written_bands_a : L.res_a + a_plane;
  const int8_t* bands_b = written_bands_b != nullptr ? written_bands_b : L.res_b + b_plane;
  if (written_bands_a == nullptr) {
    launch_band_drops(p.m, L.emax_a, L.exp_sum_a, L.nnz_a, L.drop_a, st);
    launch_band_drops(p.n, L.emax_b, L.exp_sum_b, L.nnz_b, L.drop_b, st);
    launch_band_planes(vectors_a(call, L), L.emax_a, L.drop_a, L.res_a + a_plane, st);
    launch_band_planes(vectors_b(call, L), L.emax_b, L.drop_b, L.res_b + b_plane, st);
  }
  if (call.mode != scaling_mode::fast) {  // fast: scanned with the norms (scan_operand)
    launch_norm1_scan(vectors_a(call, L), L.emax_a, L.norm_a, st);
    launch_norm1_scan(vectors_b(call, L), L.emax_b, L.norm_b, st);
  }
  OZDGEMM_CHECK_LAUNCH();
  // The `max` target is only known once the ratio of s = 20 is (choose_moduli).
  const double threshold = call.target.kind == accuracy_kind::max
                               ? std::numeric_limits<double>::infinity()
                               : target_bound(call.target, p.k);
  const uint32_t nearest_mask = nearest_mask_for(p.k);
  // One band and one k-block: G is the band GEMM's INT32 sums, read as they are.
  const bool single = kCertBands == 1 && L.nblk == 1;
  // All rows at once where G of the whole of C fits in the products' bytes, which hold nothing
  // yet (fast scaling: accurate scaling's U shares them and is read again later): one band GEMM
  // and one ratio pass instead of one per block of rows (a GEMM of a quarter of the rows ran at
  // half the rate of the batched modulus GEMMs on the H200 at 4096^3).
  const bool whole =
      single && call.mode == scaling_mode::fast && L.row_blocks > 1 &&
      static_cast<size_t>(L.m_pad) * static_cast<size_t>(L.n_pad) * 4 <= L.shared_bytes;
  const int64_t blocks = whole ? 1 : L.row_blocks;
  int32_t* part = whole ? L.prod : L.cert_part;
  for (int64_t rb = 0; rb < blocks; ++rb) {
    const auto [i0, rows] = whole ? row_span{0, L.m_pad} : block_rows(L, rb);
    if (!single)
      OZDGEMM_CUDA_TRY(cudaMemsetAsync(L.cert_g, 0, static_cast<size_t>(rows * L.n_pad) * 8, st));
    for (int d = 0; d < kCertBands; ++d)
      for (int q = 0; q <= d; ++q)
        for (int64_t blk = 0; blk < L.nblk; ++blk) {
          const int64_t k0 = blk * kKBlock;
          const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
          int8_gemm(g, rows, L.n_pad, k0, klen, L.k_pad, bands_a + q * a_plane + i0 * L.k_pad,
                    a_plane, bands_b + (d - q) * b_plane, part, 1, false);
          if (!single)
            launch_band_accumulate(L.cert_g, part, rows * L.n_pad, kBandBits * (kCertBands - 1 - d),
                                   st);
          OZDGEMM_CHECK_LAUNCH();
        }
    certify_args ca{};
    ca.g = single ? nullptr : L.cert_g;
    ca.g32 = single ? part : nullptr;
    ca.i0 = i0;
    ca.rows = p.m - i0 < rows ? p.m - i0 : rows;  // >= 1: the padding is under 16 rows
    ca.ld = rows;
    ca.m = p.m;
    ca.n = p.n;
    ca.k = p.k;
    ca.emax_a = L.emax_a;
    ca.emax_b = L.emax_b;
    ca.flags_a = L.flags_a;
    ca.flags_b = L.flags_b;
    ca.norm_a = L.norm_a;
    ca.norm_b = L.norm_b;
    ca.drop_a = L.drop_a;
    ca.drop_b = L.drop_b;
    ca.exps_all_a = L.exps_all_a;
    ca.exps_all_b = L.exps_all_b;
    ca.nearest_mask = nearest_mask;
    ca.target = threshold;
    ca.worst = L.worst + 2 * (kMaxModuli + 1);
    launch_certified_ratios(ca, st);
    OZDGEMM_CHECK_LAUNCH();
  }
}

// Owns an event and a non-blocking stream made for one call (when the context has none).
struct choice_resources {
  cudaEvent_t ready = nullptr;
  cudaStream_t copy = nullptr;
  ~choice_resources() {
    // Destroying a pending event or an idle stream is allowed; the work completes regardless.
    if (ready != nullptr) cudaEventDestroy(ready);
    if (copy != nullptr) cudaStreamDestroy(copy);
  }
};

// Copies `bytes` from `src` (written by work enqueued on call.stream) to `dst` once call.stream
// has reached this point, polling an event rather than synchronising the stream, for at most
// kChoiceWaitSeconds: false when the stream has not got there by then (nothing is copied; the
// work stays enqueued and completes on its own). The copy runs on a non-blocking stream with no
// other work, so it waits for nothing else in the process (a copy on the legacy stream would
// wait for every blocking stream).
bool fetch_when_ready(const device_gemm& call, const void* src, size_t bytes, void* dst) {
  choice_resources own;
  cudaEvent_t ready = call.choice_ready;
  cudaStream_t copy = call.choice_copy;
  if (ready == nullptr) {
    OZDGEMM_CUDA_TRY(cudaEventCreateWithFlags(&own.ready, cudaEventDisableTiming));
    ready = own.ready;
  }
  if (copy == nullptr) {
    OZDGEMM_CUDA_TRY(cudaStreamCreateWithFlags(&own.copy, cudaStreamNonBlocking));
    copy = own.copy;
  }
  OZDGEMM_CUDA_TRY(cudaEventRecord(ready, call.stream));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kChoiceWaitSeconds);
  for (int polls = 0;; ++polls) {
    const cudaError_t q = cudaEventQuery(ready);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) OZDGEMM_CUDA_TRY(q);
    if (std::chrono::steady_clock::now() > deadline) return false;
    // Spin briefly (the choice is usually microseconds away), then let other threads run.
    if (polls < 200)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  OZDGEMM_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, copy));
  OZDGEMM_CUDA_TRY(cudaStreamSynchronize(copy));
  return true;
}

// The automatic moduli count, between the scaling statistics and the exponents: the worst
// ratios for every s (certified: also the certified bound over C), one small copy to the host
// once the stream has reached them (fetch_when_ready; the number of INT8 GEMMs to launch
// depends on the answer), then the host's chooser.
// The statistics the choice reads: the worst ratios of every s (certified: also the certified
// bound over C, into the third row of L.worst).
// certify = false: the worst ratios only (the caller certifies, enqueue_speculative).
void launch_choice_inputs(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                          bool certify = true) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  const bool certified = call.moduli.is_certified();
  const auto_bounds b = make_auto_bounds();
  unsigned long long* worst_a = L.worst;
  unsigned long long* worst_b = L.worst + (kMaxModuli + 1);
  if (call.mode == scaling_mode::fast) {
    launch_fast_ratios(fast_ratio_args{p.m, p.k, L.emax_a, L.flags_a, L.sum_q2_a, L.exp_sum_a,
                                       L.nnz_a, worst_a, L.exps_all_a},
                       b, st);
    launch_fast_ratios(fast_ratio_args{p.n, p.k, L.emax_b, L.flags_b, L.sum_q2_b, L.exp_sum_b,
                                       L.nnz_b, worst_b, L.exps_all_b},
                       b, st);
  } else {
    accurate_ratio_args a{};
    a.u = L.bound_u;
    a.nblk = L.nblk;
    a.m = p.m;
    a.n = p.n;
    a.k = p.k;
    a.m_pad = L.m_pad;
    a.n_pad = L.n_pad;
    a.a = auto_vector_stats{L.emax_a, L.flags_a, L.exp_sum_a, L.nnz_a};
    a.b = auto_vector_stats{L.emax_b, L.flags_b, L.exp_sum_b, L.nnz_b};
    a.col_max = L.col_max;
    a.head_all = L.head_all;
    a.row_max_all = L.row_max_all;
    a.worst_a = worst_a;
    a.worst_b = worst_b;
    a.exps_all_a = L.exps_all_a;
    a.exps_all_b = L.exps_all_b;
    launch_accurate_ratios(a, b, st);
  }
  OZDGEMM_CHECK_LAUNCH();
  if (certified && certify) certify_on_device(call, L, g);
}

// The chooser kernel's arguments for a certified call (kernels/choice.cuh), its count into
// L.chosen; no tally, no speculation, no outcome slot.
choose_args certified_choose_args(const device_gemm& call, const layout& L) {
  choose_args ca{};
  ca.worst = L.worst + 2 * (kMaxModuli + 1);
  ca.relative_to_max = call.target.kind == accuracy_kind::max;
  ca.target = target_bound(call.target, call.p.k);
  ca.native = target_bound(accuracy_target{}, call.p.k);
  ca.chosen = L.chosen;
  return ca;
}

moduli_choice choose_on_device(const device_gemm& call, const layout& L,
                               const int8_gemm_target& g) {
  const gemm_problem& p = call.p;
  const bool certified = call.moduli.is_certified();
  launch_choice_inputs(call, L, g);
  if (certified && call.outcome != nullptr) {
    // The certified count also goes to the call's outcome slot (engine/speculation.hpp), before
    // the wait: a call that waits out still teaches the shape's history once its work is done.
    choose_args ca = certified_choose_args(call, L);
    ca.speculative = -1;
    ca.smallest = call.outcome;
    launch_choose(ca, call.stream);
    OZDGEMM_CHECK_LAUNCH();
    commit_outcome(call.outcome, call.stream);
  }
  unsigned long long host[3][kMaxModuli + 1] = {};
  if (!fetch_when_ready(call, L.worst, (certified ? 3 : 2) * sizeof host[0], host)) {
    moduli_choice c;
    c.waited_out = true;
    char why[96];
    std::snprintf(why, sizeof why, "the stream had not reached the choice after %g s",
                  kChoiceWaitSeconds);
    c.why = why;
    return c;
  }
  if (certified)  // the host reference: certified_ratios (reference/certified_choice.cpp)
    return choose_moduli(call.target, p.k, [&](int s) { return bits_double(host[2][s]); });
  // combine_ratios of the host reference's predicted_error (reference/auto_reference.cpp).
  return choose_moduli(call.target, p.k, [&](int s) {
    return combine_ratios(bits_double(host[0][s]), bits_double(host[1][s]), s, p.k);
  });
}

// What a cached graph depends on (the count it reads, what its bodies read and do), as the bytes
// of a zeroed struct (engine/gpu_choice.hpp).
template <class Key>
std::string key_bytes(const Key& k) {
  return std::string(reinterpret_cast<const char*>(&k), sizeof k);
}

// The conditionals of a call whose certified count is chosen on the GPU: one SWITCH of GEMMs per
// block of rows, and the IF of native DGEMM, each with its cache key and body.
struct gpu_plan {
  std::vector<std::string> switch_keys;  // per block of rows
  std::string native_key;
  cublasOperation_t ta, tb;
};

gpu_plan plan_gpu_choice(const device_gemm& call, const layout& L, const int8_gemm_target& g) {
  const gemm_problem& p = call.p;
  gpu_plan plan;
  const bool batched = batched_gemms(call.batching, L.row_block, L.n_pad, L.k_pad);
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    const auto [i0, rows] = block_rows(L, rb);
    struct gemm_key {
      const void *chosen, *res_a, *res_b, *prod, *lt_ws, *sum_a, *prod3;
      size_t lt_ws_bytes;
      int64_t i0, rows, m_pad, n_pad, k_pad, half_k, half_n;  // halves: 0 but in Karatsuba
      int backend, batching, batched;
    } key;
    std::memset(&key, 0, sizeof key);
    key.chosen = L.chosen;
    key.res_a = L.res_a;
    key.res_b = L.res_b;
    key.prod = L.prod;
    key.lt_ws = L.lt_ws;
    key.lt_ws_bytes = L.lt_ws_bytes;
    key.sum_a = call.karatsuba.on() ? L.sum_a : nullptr;
    key.prod3 = call.karatsuba.on() ? L.prod3 : nullptr;
    key.half_k = call.karatsuba.k;
    key.half_n = call.karatsuba.n;
    key.i0 = i0;
    key.rows = rows;
    key.m_pad = L.m_pad;
    key.n_pad = L.n_pad;
    key.k_pad = L.k_pad;
    key.backend = static_cast<int>(g.backend);
    key.batching = static_cast<int>(call.batching);
    key.batched = batched;
    plan.switch_keys.push_back(key_bytes(key));
  }
  plan.ta = p.a.k_contiguous ? CUBLAS_OP_T : CUBLAS_OP_N;
  plan.tb = p.b.k_contiguous ? CUBLAS_OP_N : CUBLAS_OP_T;
  struct native_key {
    const void *chosen, *a, *b, *c, *alpha_dev, *beta_dev;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    int ta, tb;
  } nk;
  std::memset(&nk, 0, sizeof nk);
  nk.chosen = L.chosen;
  nk.a = p.a.ptr;
  nk.b = p.b.ptr;
  nk.c = p.c;
  nk.alpha_dev = call.alpha.dev;
  nk.beta_dev = call.beta.dev;
  nk.m = p.m;
  nk.n = p.n;
  nk.k = p.k;
  nk.lda = p.a.ld;
  nk.ldb = p.b.ld;
  nk.ldc = p.ldc;
  nk.alpha = call.alpha.host;
  nk.beta = call.beta.host;
  nk.ta = plan.ta;
  nk.tb = plan.tb;
  plan.native_key = key_bytes(nk);
  return plan;
}

// Body s of block rb's SWITCH: block_gemms of s moduli on the body's stream.
gpu_choice_graphs::gemm_bodies switch_body(const device_gemm& call, const layout& L,
                                           const int8_gemm_target& g, int64_t rb) {
  return [&call, &L, g, rb](int s, cudaStream_t body) {
    int8_gemm_target in_body = g;
    in_body.stream = body;
    in_body.use = lt_use::in_graph_body;  // cuBLASLt with the call's workspace, as eager calls
    const auto [i0, rows] = block_rows(L, rb);
    block_gemms(call, L, in_body, moduli_for(s), i0, rows);
  };
}

// The IF's body: native DGEMM with the call's own arguments on the private handle (with no
// workspace in a body, gpu_choice.cpp).
gpu_choice_graphs::body_work native_body(const device_gemm& call, const int8_gemm_target& g,
                                         const gpu_plan& plan) {
  return [&call, g, ta = plan.ta, tb = plan.tb](cudaStream_t) {
    const gemm_problem& p = call.p;
    const bool dev = call.alpha.dev != nullptr;
    OZDGEMM_CUBLAS_TRY(cublas_set_pointer_mode(
        g.handle, dev ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    const cublasStatus_t e = cublas_dgemm_64(
        g.handle, ta, tb, p.m, p.n, p.k, dev ? call.alpha.dev : &call.alpha.host, p.a.ptr, p.a.ld,
        p.b.ptr, p.b.ld, dev ? call.beta.dev : &call.beta.host, p.c, p.ldc);
    (void)cublas_set_pointer_mode(g.handle, CUBLAS_POINTER_MODE_HOST);
    OZDGEMM_CUBLAS_TRY(e);
  };
}

// Whether every conditional of the plan can be had, before anything of the call is enqueued.
// A SWITCH made here (eager, first call of its shape) finds its GEMMs' cuBLASLt plans made first
// on the call's stream, timed as an eager call's are: nothing can be timed while its body is
// captured, and the heuristic's first is up to 15% slower (bench/results/probes/README.md).
bool gpu_choice_ready(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                      const gpu_plan& plan) {
  gpu_choice_graphs& graphs = *call.graphs;
  int8_gemm_target planning = g;
  planning.use = lt_use::plan_only;
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    if (!graphs.has_count_switch(call.stream, plan.switch_keys[rb])) {
      const auto [i0, rows] = block_rows(L, rb);
      for (int s = kMinModuli; s <= kMaxModuli; ++s)
        block_gemms(call, L, planning, moduli_for(s), i0, rows);
    }
    if (!graphs.ready_count_switch(call.stream, g.handle, L.chosen, plan.switch_keys[rb],
                                   switch_body(call, L, g, rb)))
      return false;
  }
  return graphs.ready_native_if(call.stream, g.handle, L.chosen, plan.native_key,
                                native_body(call, g, plan));
}

// The rest of a certified call whose count is chosen on the GPU (engine/gpu_choice.hpp), after
// the scaling statistics: the choice's inputs, the chooser kernel, then the exponents, residues
// and CRT of the chosen s (read from L.chosen), the GEMMs in a SWITCH on s per block of rows, and
// native DGEMM in an IF on s == 0. Nothing waits for the host.
int enqueue_gpu_chosen(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                       const operand_vectors& va, const gpu_plan& plan) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  stage_events* ev = call.events;
  gpu_choice_graphs& graphs = *call.graphs;
  launch_choice_inputs(call, L, g);
  choose_args ca = certified_choose_args(call, L);
  ca.tally = graphs.tally_device();
  launch_choose(ca, st);
  launch_select_exponents(L.exps_all_a, p.m, L.chosen, L.exp_a, st);
  launch_select_exponents(L.exps_all_b, p.n, L.chosen, L.exp_b, st);
  const uint32_t nearest = nearest_mask_for(p.k);
  launch_chosen_residues(va, L.exp_a, L.chosen, nearest, L.res_a, st);
  launch_chosen_residues(residue_vectors_b(call, L), L.exp_b, L.chosen, nearest, L.res_b, st);
  OZDGEMM_CHECK_LAUNCH();
  if (call.karatsuba.on()) karatsuba_sums(call, L, moduli_for(kMaxModuli), L.chosen);
  if (ev != nullptr) record(ev->prepared, st);
  if (ev != nullptr) ev->blocks = static_cast<int>(L.row_blocks);
  const bool block_events = ev != nullptr && L.row_blocks <= stage_events::kMaxBlocks;
  // Test-only: the INT8 GEMMs of this path are graph launches (nodes under capture), so a cuBLAS
  // fault is injected once per call here, before anything writes C.
  if (inject_fault(fault::cublas))
    throw cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "injected fault: INT8 GEMM failed");
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    const auto [i0, rows] = block_rows(L, rb);
    graphs.enqueue_count_switch(st, g.handle, L.chosen, plan.switch_keys[rb],
                                switch_body(call, L, g, rb));
    if (block_events) record(ev->gemm_done[rb], st);
    if (ev != nullptr && rb == L.row_blocks - 1) record(ev->multiplied, st);
    const gemm_problem pb = block_problem(p, i0, rows);
    launch_chosen_crt(pb, crt_args_for(call, L, pb, i0, rows), L.chosen, call.alpha, call.beta, st);
    OZDGEMM_CHECK_LAUNCH();
    if (block_events) record(ev->crt_done[rb], st);
  }
  graphs.enqueue_native_if(st, g.handle, L.chosen, plan.native_key, native_body(call, g, plan));
  if (ev != nullptr) record(ev->finished, st);
  return kChosenOnGpu;
}

// Steps 2-4 of a call whose count tb.s is known on the host: the residues (A's unless
// prepare_a is false: reuse_a) from the exponents exp_a and exp_b, then per block of rows of C
// (one block unless the products would outgrow the workspace bound, rule_row_block) the INT8
// GEMMs and the reduction + CRT + inverse scaling + alpha/beta; the CRT writes C only where
// *only_if == tb.s when only_if is set (launch_crt).
void enqueue_products(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                      const operand_vectors& va, const modulus_table& tb, const int* exp_a,
                      const int* exp_b, bool prepare_a, const int* only_if) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  stage_events* ev = call.events;
  // Rounded to nearest wherever the scaling bound allows (scaling_rules.hpp).
  const bool nearest = rounds_to_nearest(tb, p.k);
  if (prepare_a) launch_residues(va, exp_a, tb, nearest, L.res_a, st);
  launch_residues(residue_vectors_b(call, L), exp_b, tb, nearest, L.res_b, st);
  OZDGEMM_CHECK_LAUNCH();
  if (call.karatsuba.on()) karatsuba_sums(call, L, tb);
  if (ev != nullptr) record(ev->prepared, st);
  if (ev != nullptr) ev->blocks = static_cast<int>(L.row_blocks);
  const bool block_events = ev != nullptr && L.row_blocks <= stage_events::kMaxBlocks;
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    const auto [i0, rows] = block_rows(L, rb);
    block_gemms(call, L, g, tb, i0, rows);
    if (block_events) record(ev->gemm_done[rb], st);
    if (ev != nullptr && rb == L.row_blocks - 1) record(ev->multiplied, st);
    const gemm_problem pb = block_problem(p, i0, rows);
    crt_args args = crt_args_for(call, L, pb, i0, rows);
    args.exp_a = exp_a + i0;
    args.exp_b = exp_b;
    launch_crt(pb, args, tb, call.alpha, call.beta, st, only_if);
    OZDGEMM_CHECK_LAUNCH();
    if (block_events) record(ev->crt_done[rb], st);
  }
}

// The rest of a certified eager call whose count the host speculated (engine/speculation.hpp),
// after the scaling statistics: the choice's inputs, the chooser kernel (it keeps the launched
// count when that count is certified for this data, else 0, and writes the smallest certified
// count to call.outcome), the exponents and residues of the kept count, the INT8 GEMMs of the
// launched count (launched whatever the GPU decides: the host cannot skip them), the CRT that
// runs when the count was kept, and the FP64 fallback that runs when it was not. certify_only: the
// chooser alone (the caller runs native). Nothing waits for the host.
int enqueue_speculative(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                        const operand_vectors& va, moduli_choice* choice) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  stage_events* ev = call.events;
  const int s = call.speculative;  // 0 with certify_only
  const modulus_table* tb = s >= kMinModuli ? &moduli_for(s) : nullptr;
  const int64_t slot = s - kMinModuli;
  launch_choice_inputs(call, L, g);
  choose_args ca = certified_choose_args(call, L);
  ca.tally = call.certify_only ? nullptr : call.graphs->tally_device();
  ca.speculative = call.certify_only ? -1 : s;  // certify_only: none kept
  ca.smallest = call.outcome;
  launch_choose(ca, st);
  OZDGEMM_CHECK_LAUNCH();
  commit_outcome(call.outcome, st);
  if (choice != nullptr) *choice = moduli_choice{};
  if (call.certify_only) {
    if (choice != nullptr)
      choice->why =
          "the shape's latest certified count was none; this call's data was certified "
          "on the GPU beside the native routine";
    return 0;
  }
  if (choice != nullptr) {
    choice->s = kChosenOnGpu;
    choice->why = "certified on the GPU; s=" + std::to_string(s) + " launched";
  }
  // The residues of the launched count, from its exponents among every count's (what the
  // certificate read): written whatever the GPU decides, like the GEMMs that read them.
  enqueue_products(call, L, g, va, *tb, L.exps_all_a + slot * p.m, L.exps_all_b + slot * p.n, true,
                   L.chosen);
  launch_fallback_dgemm(p, call.alpha, call.beta, L.chosen, st);
  OZDGEMM_CHECK_LAUNCH();
  if (ev != nullptr) record(ev->finished, st);
  return kChosenOnGpu;
}

// One warning in the wording of dispatch/settings.cpp's other settings; never throws.
void warn_invalid(const char* name, const char* value, const char* expected) noexcept {
  try {
    logger().warn("{}='{}' is invalid (expected {}); using the rule", name, value, expected);
  } catch (...) {
  }
}

}  // namespace

gemm_batching gemm_batching_from_env_value(const char* value) noexcept {
  if (value == nullptr) return gemm_batching::automatic;
  if (std::strcmp(value, "batched") == 0) return gemm_batching::batched;
  if (std::strcmp(value, "looped") == 0) return gemm_batching::looped;
  warn_invalid("OZDGEMM_GEMM_BATCHING", value, "batched|looped");
  return gemm_batching::automatic;
}

int64_t row_block_from_env_value(const char* value) noexcept {
  if (value == nullptr) return -1;
  if (std::strcmp(value, "off") == 0) return 0;
  // Digits only: strtoll alone would take " 64", "+64" and "0x40".
  bool digits = *value != '\0';
  for (const char* c = value; *c != '\0'; ++c) digits = digits && *c >= '0' && *c <= '9';
  if (digits) {
    errno = 0;
    const long long rows = std::strtoll(value, nullptr, 10);
    if (errno == 0 && rows > 0 && rows < (int64_t{1} << 31)) return rows;
  }
  warn_invalid("OZDGEMM_ROW_BLOCK", value, "off or a number of rows in 1..2^31-1");
  return -1;
}

bool emulation_workspace_bytes(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                               scaling_mode mode, size_t* bytes, int8_gemm_backend gemm,
                               int64_t row_block, karatsuba_halves halves) noexcept {
  if (halves.on() &&
      (2 * halves.k != k || 2 * halves.n != n || halves.k % kPad != 0 || halves.n % kPad != 0))
    return false;  // not the halves of an embedding
  const int8_gemm_backend backend = resolve_int8_gemm(gemm);
  auto bytes_of = [&](int s, size_t* out) {
    const layout L = layout_for(nullptr, m, n, k, s, mode, moduli.chooses_per_call(),
                                moduli.is_certified(), backend, row_block, halves);
    *out = L.total_bytes;
    return L.fits;
  };
  if (!bytes_of(moduli.layout_count(), bytes)) return false;
  // A certified call may run the layout of a speculated count (enqueue_speculative), whose row
  // blocks can hold more products than kMaxModuli's.
  if (moduli.is_certified())
    for (int s = kMinModuli; s <= kMaxModuli; ++s) {
      size_t b = 0;
      if (!bytes_of(s, &b)) return false;
      *bytes = b > *bytes ? b : *bytes;
    }
  return true;
}

size_t emulation_workspace_bytes(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                                 scaling_mode mode, int8_gemm_backend gemm, int64_t row_block) {
  size_t bytes = 0;
  if (!emulation_workspace_bytes(m, n, k, moduli, mode, &bytes, gemm, row_block))
    throw std::length_error("emulation workspace size overflows");
  return bytes;
}

int enqueue_emulation(const device_gemm& call, void* workspace, moduli_choice* choice) {
  const gemm_problem& p = call.p;
  const bool certified = call.moduli.is_certified();
  const bool automatic = call.moduli.chooses_per_call();
  const bool fast = call.mode == scaling_mode::fast;
  if (call.reuse_a && !fast)
    throw std::invalid_argument("reuse_a needs fast scaling: accurate exponents of A depend on B");
  if (call.reuse_a && automatic)
    throw std::invalid_argument("reuse_a needs a fixed moduli count: auto may choose another s");
  // Auto: the layout of s = 20 (its s-dependent arrays hold any s <= 20 at the same offsets,
  // plane t at t times the plane size), and the table of the chosen s once it is known.
  const modulus_table* tb = automatic ? nullptr : &moduli_for(call.moduli.count());
  const int8_gemm_backend gemm = resolve_int8_gemm(call.int8_gemm);
  // A speculated count is checked on the GPU with no graphs (engine/speculation.hpp); its layout
  // is that count's (the products' row blocks as a fixed count's), within the workspace sized
  // for kMaxModuli. Otherwise the count is chosen on the GPU when its graphs can be had (prepared
  // before anything is enqueued), else on the host, as the certified count is without graphs.
  const bool speculative =
      certified && call.graphs != nullptr && (call.speculative > 0 || call.certify_only);
  if (speculative && call.speculative > kMaxModuli)
    throw std::invalid_argument("speculative moduli count above kMaxModuli");
  const int layout_s =
      speculative && call.speculative >= kMinModuli ? call.speculative : call.moduli.layout_count();
  const layout L = layout_for(workspace, p.m, p.n, p.k, layout_s, call.mode, automatic, certified,
                              gemm, call.row_block, call.karatsuba);
  if (!L.fits) throw std::length_error("emulation workspace size overflows");
  const cudaStream_t st = call.stream;
  const int8_gemm_target g{call.int8_handle, st, gemm, L.lt_ws, L.lt_ws_bytes};
  bool on_gpu = certified && call.graphs != nullptr && !speculative;
  gpu_plan plan;
  if (on_gpu) {
    plan = plan_gpu_choice(call, L, g);
    on_gpu = gpu_choice_ready(call, L, g, plan);
    // A capture can be invalidated by other threads' work (the next call tries again): warned
    // once, then at debug level.
    static std::atomic<bool> warned{false};
    if (!on_gpu)
      logger().log(warned.exchange(true) ? spdlog::level::debug : spdlog::level::warn,
                   "certified count: the CUDA graphs of the choice on the GPU cannot be made "
                   "({}); this call chooses on the host",
                   call.graphs->unusable_reason());
  }
  if (automatic && !on_gpu && stream_capturing(call.stream)) {
    if (choice != nullptr) {
      *choice = moduli_choice{};
      choice->why =
          "automatic moduli count needs a host synchronisation; the stream is being "
          "captured into a CUDA graph";
    }
    return 0;
  }
  stage_events* ev = call.events;
  const bool prepare_a = !call.reuse_a;
  char* ws = static_cast<char*>(workspace);

  if (ev != nullptr) record(ev->start, st);
  if (prepare_a) OZDGEMM_CUDA_TRY(cudaMemsetAsync(ws, 0, L.a_zeroed_end, st));
  OZDGEMM_CUDA_TRY(
      cudaMemsetAsync(ws + L.b_zeroed_begin, 0, L.b_zeroed_end - L.b_zeroed_begin, st));

  // 1. Scaling: the statistics of A (unless reused) and B, then fixed fast mode's exponents.
  const operand_vectors va = vectors_a(call, L), vb = vectors_b(call, L);
  // A certified call with fast scaling scans its l1 norms with the norms (certify_on_device).
  const bool norm1_in_scan = certified && fast;
  if (prepare_a)
    scan_operand(va, automatic, fast, L.emax_a, L.flags_a, L.exp_sum_a, L.nnz_a, L.sum_q2_a,
                 norm1_in_scan ? L.norm_a : nullptr, st);
  scan_operand(scanned_vectors_b(call, L), automatic, fast, L.emax_b, L.flags_b, L.exp_sum_b,
               L.nnz_b, L.sum_q2_b, norm1_in_scan ? L.norm_b : nullptr, st);
  if (call.mirrored_b > 0) {
    launch_mirror_halves(call.mirrored_b, L.emax_b, L.flags_b, fast ? L.sum_q2_b : nullptr,
                         automatic ? L.exp_sum_b : nullptr, automatic ? L.nnz_b : nullptr,
                         norm1_in_scan ? L.norm_b : nullptr, st);
    OZDGEMM_CHECK_LAUNCH();
  }
  if (inject_fault(fault::kernel))  // test-only: as if this launch had been rejected
    throw cuda_error(cudaErrorLaunchOutOfResources, "injected fault: kernel launch failed");
  if (fast && !automatic) {
    if (prepare_a) launch_fast_exponents(p.m, L.emax_a, L.sum_q2_a, *tb, L.exp_a, st);
    launch_fast_exponents(p.n, L.emax_b, L.sum_q2_b, *tb, L.exp_b, st);
    OZDGEMM_CHECK_LAUNCH();
  } else if (!fast) {
    launch_bound_quantize(va, L.emax_a, L.bound_a, st);
    launch_bound_quantize(vb, L.emax_b, L.bound_b, st);
    OZDGEMM_CHECK_LAUNCH();
    for (int64_t blk = 0; blk < L.nblk; ++blk) {
      const int64_t k0 = blk * kKBlock;
      const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
      int8_gemm(g, L.m_pad, L.n_pad, k0, klen, L.k_pad, L.bound_a, L.m_pad * L.k_pad, L.bound_b,
                L.bound_u + blk * L.m_pad * L.n_pad, 1, false);
    }
    if (!automatic) {
      accurate_exponents(call, L, *tb);
      OZDGEMM_CHECK_LAUNCH();
    }
  }

  if (speculative) return enqueue_speculative(call, L, g, va, choice);
  if (on_gpu) {  // after the scaling statistics
    if (choice != nullptr) {
      *choice = moduli_choice{};
      choice->s = kChosenOnGpu;
      choice->why = "certified count chosen on the GPU";
    }
    return enqueue_gpu_chosen(call, L, g, va, plan);
  }

  // Auto: choose s (one synchronisation), then the exponents for it, as the fixed path does.
  int s = automatic ? 0 : tb->s;
  if (automatic) {
    moduli_choice c = choose_on_device(call, L, g);
    c.made = !c.waited_out;
    if (c.s != 0 && call.gate != nullptr && !call.gate->runs(c.s)) {
      c.gated = true;
      c.why = "s=" + std::to_string(c.s) + " chosen; the model predicts the native routine faster";
    }
    if (choice != nullptr) *choice = c;
    if (c.s == 0 || c.gated) return 0;
    s = c.s;
    tb = &moduli_for(s);
    if (fast) {
      launch_fast_exponents(p.m, L.emax_a, L.sum_q2_a, *tb, L.exp_a, st);
      launch_fast_exponents(p.n, L.emax_b, L.sum_q2_b, *tb, L.exp_b, st);
    } else {
      accurate_exponents(call, L, *tb);
    }
    OZDGEMM_CHECK_LAUNCH();
  }

  // 2-4. Residues, INT8 GEMMs, CRT.
  enqueue_products(call, L, g, va, *tb, L.exp_a, L.exp_b, prepare_a, nullptr);
  if (ev != nullptr) record(ev->finished, st);
  return s;
}

}  // namespace ozdgemm::detail
