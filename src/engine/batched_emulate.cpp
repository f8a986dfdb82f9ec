#include "engine/batched_emulate.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "common/error.hpp"
#include "core/checked_math.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "crt.cuh"
#include "engine/carver.hpp"
#include "engine/layout.hpp"
#include "engine/pipeline.hpp"
#include "residues.cuh"
#include "scaling.cuh"

namespace ozdgemm::detail {
namespace {

// Where a batch's arrays sit in its workspace, each 256-byte aligned. Per-vector arrays are
// [qa][m] and [qb][n] (matrix i's vector v at i m + v, operand_vectors::batch), planes
// [qa][s][m_pad][k_pad] and [qb][s][n_pad][k_pad], products [count][s][n_pad][m_pad]: matrix i's
// planes and products are laid out as one call's (layout.hpp), so the CRT of matrix i is the
// single call's CRT on them. qa, qb: count, or 1 for a broadcast operand with fast scaling. Each
// side's scan outputs (and accurate scaling's row maxima) are zeroed by one memset.
struct batch_layout {
  int64_t m_pad, n_pad, k_pad, nblk, qa, qb;
  int* emax_a;
  uint32_t* flags_a;
  unsigned long long* sum_q2_a;  // fast
  size_t a_zeroed_end;
  int* exp_a;
  int8_t* res_a;
  size_t b_zeroed_begin;
  int* emax_b;
  uint32_t* flags_b;
  unsigned long long* sum_q2_b;  // fast
  unsigned long long* row_max;   // accurate: [count][m]
  size_t b_zeroed_end;
  int* exp_b;
  int* head_b;  // accurate: [count][n]
  // accurate: the bound planes [count][m_pad][k_pad] and [count][n_pad][k_pad], in the first
  // bytes of the residue planes (written after the bound GEMMs have read them), and U
  // [count][nblk][n_pad][m_pad], dead before the first product is written: it shares prod's
  // bytes (the larger of the two), as in the single call's layout.
  int8_t* bound_a;
  int8_t* bound_b;
  int32_t* bound_u;
  int32_t* prod;
  int8_t* res_b;
  char* lt_ws;
  size_t lt_ws_bytes;
  size_t total_bytes;
  bool fits;
};

// Sizes beyond the GPU path's (core/gemm_problem.hpp) are refused first, so that round_up and
// the padded sizes below cannot overflow; every count and byte size after that is checked.
batch_layout make_batch_layout(void* base, const batch_dims& d, int64_t count) {
  batch_layout L{};
  if (count < 1 || d.s < kMinModuli || d.s > kMaxModuli || d.m < 1 || d.n < 1 || d.k < 1 ||
      !fits_gpu_path(d.m, d.n, d.k, false)) {
    L.fits = false;
    return L;
  }
  L.m_pad = round_up(d.m, kPad);
  L.n_pad = round_up(d.n, kPad);
  L.k_pad = round_up(d.k, kPad);
  L.nblk = (L.k_pad + kKBlock - 1) / kKBlock;
  const bool accurate = d.mode == scaling_mode::accurate;
  L.qa = d.broadcast_a && !accurate ? 1 : count;
  L.qb = d.broadcast_b && !accurate ? 1 : count;
  carver c(base);
  const int64_t va = c.count(L.qa, d.m), vb = c.count(L.qb, d.n);
  L.emax_a = c.take<int>(va);
  L.flags_a = c.take<uint32_t>(va);
  L.sum_q2_a = accurate ? nullptr : c.take<unsigned long long>(va);
  L.a_zeroed_end = c.used();
  L.exp_a = c.take<int>(va);
  L.res_a = c.take<int8_t>(c.count(L.qa, d.s, L.m_pad, L.k_pad));
  L.b_zeroed_begin = c.align();
  L.emax_b = c.take<int>(vb);
  L.flags_b = c.take<uint32_t>(vb);
  L.sum_q2_b = accurate ? nullptr : c.take<unsigned long long>(vb);
  L.row_max = accurate ? c.take<unsigned long long>(va) : nullptr;
  L.b_zeroed_end = c.used();
  L.exp_b = c.take<int>(vb);
  L.head_b = accurate ? c.take<int>(vb) : nullptr;
  {
    const int64_t u = accurate ? c.count(count, L.nblk, L.m_pad, L.n_pad) : 0;
    const int64_t prod = c.count(count, d.s, L.m_pad, L.n_pad);
    L.prod = c.take<int32_t>(u > prod ? u : prod);
    L.bound_u = accurate ? L.prod : nullptr;
  }
  L.res_b = c.take<int8_t>(c.count(L.qb, d.s, L.n_pad, L.k_pad));
  L.bound_a = accurate ? L.res_a : nullptr;  // s >= 2 planes per matrix: room for one
  L.bound_b = accurate ? L.res_b : nullptr;
  // The lt backend's workspace as for one product of the batch's size (all matrices side by
  // side): the batch's GEMMs are that large together, capped as the single call's.
  const int64_t cols = c.count(count, L.n_pad);
  L.lt_ws_bytes = c.ok() ? int8_gemm_workspace_bytes(d.gemm, L.m_pad, cols) : 0;
  if (L.lt_ws_bytes != 0) L.lt_ws = c.take<char>(static_cast<int64_t>(L.lt_ws_bytes));
  L.total_bytes = c.used();
  L.fits = c.ok();
  return L;
}

batch_dims dims_of(const device_gemm_batch& b) {
  const gemm_problem& p = b.call.p;
  return batch_dims{p.m,
                    p.n,
                    p.k,
                    b.call.moduli.count(),
                    b.count > 1 && b.stride_a == 0,
                    b.count > 1 && b.stride_b == 0,
                    resolve_int8_gemm(b.call.int8_gemm),
                    b.call.mode};
}

// Accurate scaling's exponents (pipeline.cpp, accurate_exponents, per matrix): the bound planes
// of every matrix, U_i = u(A_i)^T u(B_i) per k-block as one strided call per block over the
// matrices, then the exponent kernels once over every U_i.
void batch_accurate_exponents(const device_gemm_batch& b, const batch_layout& L,
                              const operand_vectors& va, const operand_vectors& vb,
                              const int8_gemm_target& g, const modulus_table& tb) {
  const gemm_problem& p = b.call.p;
  launch_bound_quantize(va, L.emax_a, L.bound_a, g.stream);
  launch_bound_quantize(vb, L.emax_b, L.bound_b, g.stream);
  OZDGEMM_CHECK_LAUNCH();
  const int64_t mk = L.m_pad * L.k_pad, nk = L.n_pad * L.k_pad, mn = L.m_pad * L.n_pad;
  for (int64_t blk = 0; blk < L.nblk; ++blk) {
    const int64_t k0 = blk * kKBlock;
    const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
    const lt_gemm_shape shape{
        L.m_pad, L.n_pad, klen,       L.k_pad, L.k_pad, L.m_pad, static_cast<int>(b.count),
        mk,      nk,      L.nblk * mn};
    int8_gemm_views(g, shape, L.bound_a + k0, L.bound_b + k0, L.bound_u + blk * mn, false);
  }
  accurate_exponent_args a = accurate_args(L, p.m, p.n);
  a.batch = b.count;
  launch_accurate_exponents(a, tb, g.stream);
  OZDGEMM_CHECK_LAUNCH();
}

// Step 3: every matrix's s products, k-block by k-block (folded mod m_t between blocks, as
// block_gemms does). With both operands per matrix the planes of (matrix i, modulus t) sit at
// (i s + t) plane sizes on both sides and in prod: one strided call covers all count * s
// products while a product is small (batched_gemms on one matrix's size); from that size up, one
// call per modulus over the matrices, as the single call issues one per modulus. A broadcast
// operand (stride 0 across matrices) breaks the uniform stride over i s + t: then one call per
// modulus over the matrices, or per matrix over the moduli when that is fewer calls.
void batch_gemms(const device_gemm_batch& b, const batch_layout& L, const int8_gemm_target& g,
                 const modulus_table& tb) {
  const int s = tb.s;
  const int64_t mk = L.m_pad * L.k_pad, nk = L.n_pad * L.k_pad, mn = L.m_pad * L.n_pad;
  const int64_t step_a = L.qa > 1 ? s * mk : 0, step_b = L.qb > 1 ? s * nk : 0;
  const bool small = batched_gemms(b.call.batching, L.m_pad, L.n_pad, L.k_pad);
  for (int64_t blk = 0; blk < L.nblk; ++blk) {
    const int64_t k0 = blk * kKBlock;
    const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
    const bool acc = blk > 0;
    if (acc) {
      for (int64_t i = 0; i < b.count; ++i) launch_fold(L.prod + i * s * mn, mn, tb, g.stream);
      OZDGEMM_CHECK_LAUNCH();
    }
    auto issue = [&](int64_t a_off, int64_t b_off, int64_t c_off, int64_t count, int64_t sa,
                     int64_t sb, int64_t sc) {
      const lt_gemm_shape shape{
          L.m_pad, L.n_pad, klen, L.k_pad, L.k_pad, L.m_pad, static_cast<int>(count), sa, sb, sc};
      int8_gemm_views(g, shape, L.res_a + a_off + k0, L.res_b + b_off + k0, L.prod + c_off, acc);
    };
    if (small && L.qa > 1 && L.qb > 1) {
      // The products' stride is uniform over j = i s + t: any split of j works. At most
      // kMaxBatchChunk products per call, the batch size every other call here stays within.
      const int64_t total = b.count * s;
      for (int64_t j = 0; j < total; j += kMaxBatchChunk)
        issue(j * mk, j * nk, j * mn, std::min(kMaxBatchChunk, total - j), mk, nk, mn);
    } else if (small && b.count < s) {
      for (int64_t i = 0; i < b.count; ++i)
        issue(i * step_a, i * step_b, i * s * mn, s, mk, nk, mn);
    } else {
      for (int t = 0; t < s; ++t) issue(t * mk, t * nk, t * mn, b.count, step_a, step_b, s * mn);
    }
  }
}

}  // namespace

bool batched_emulation_workspace_bytes(const batch_dims& d, int64_t count, size_t* bytes) noexcept {
  const batch_layout L = make_batch_layout(nullptr, d, count);
  *bytes = L.fits ? L.total_bytes : 0;
  return L.fits;
}

int64_t batch_chunk(const batch_dims& d, int64_t count, size_t budget) noexcept {
  return batch_chunk_by(count, budget, [&](int64_t q, size_t* bytes) {
    return batched_emulation_workspace_bytes(d, q, bytes);
  });
}

bool products_fit_cache(const batch_dims& d, size_t l2_bytes) noexcept {
  if (d.m < 1 || d.n < 1 || d.s < 1 || !fits_gpu_path(d.m, d.n, d.k < 1 ? 1 : d.k, false))
    return false;
  const double products = 4.0 * d.s * static_cast<double>(round_up(d.m, kPad)) *
                          static_cast<double>(round_up(d.n, kPad));
  return products <= 0.5 * static_cast<double>(l2_bytes);
}

const char* batch_engine_refusal(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                                 scaling_mode mode, int8_gemm_backend gemm) noexcept {
  if (!moduli.is_fixed() || !moduli.valid()) return "the moduli count is chosen per call";
  if (m < 1 || n < 1 || k < 1 || !fits_gpu_path(m, n, k, false)) return "sizes";
  try {
    const layout whole = layout_for(nullptr, m, n, k, moduli.count(), mode, false, false,
                                    resolve_int8_gemm(gemm), 0, {});
    if (!whole.fits) return "sizes";
    if (whole.row_blocks != 1) return "one matrix runs in blocks of rows of C";
  } catch (...) {
    return "sizes";
  }
  return nullptr;
}

int enqueue_batched_emulation(const device_gemm_batch& b, void* workspace) {
  const device_gemm& call = b.call;
  const gemm_problem& p = call.p;
  if (!call.moduli.is_fixed() || call.reuse_a || call.karatsuba.on() || call.mirrored_b != 0)
    throw std::invalid_argument("batched emulation: a fixed count and real calls only");
  if (b.count < 1 || b.count > kMaxBatchChunk)
    throw std::invalid_argument("batched emulation: count outside [1, kMaxBatchChunk]");
  const modulus_table& tb = moduli_for(call.moduli.count());
  const batch_layout L = make_batch_layout(workspace, dims_of(b), b.count);
  if (!L.fits) throw std::length_error("batched emulation workspace size overflows");
  const cudaStream_t st = call.stream;
  const int8_gemm_target g{call.int8_handle, st, resolve_int8_gemm(call.int8_gemm), L.lt_ws,
                           L.lt_ws_bytes};
  char* ws = static_cast<char*>(workspace);
  OZDGEMM_CUDA_TRY(cudaMemsetAsync(ws, 0, L.a_zeroed_end, st));
  OZDGEMM_CUDA_TRY(
      cudaMemsetAsync(ws + L.b_zeroed_begin, 0, L.b_zeroed_end - L.b_zeroed_begin, st));

  // 1. Scaling: the single call's scans and exponents, over every matrix's vectors. (Accurate
  // scaling: qa = qb = count, a broadcast operand read once per matrix at stride 0.)
  const bool fast = call.mode == scaling_mode::fast;
  operand_vectors va{p.a, p.m, p.k, call.alpha.dev, L.m_pad, L.k_pad};
  operand_vectors vb{p.b, p.n, p.k, call.alpha.dev, L.n_pad, L.k_pad};
  va.batch = L.qa;
  va.batch_stride = L.qa > 1 ? b.stride_a : 0;
  vb.batch = L.qb;
  vb.batch_stride = L.qb > 1 ? b.stride_b : 0;
  scan_operand(va, false, fast, L.emax_a, L.flags_a, nullptr, nullptr, L.sum_q2_a, nullptr, st);
  scan_operand(vb, false, fast, L.emax_b, L.flags_b, nullptr, nullptr, L.sum_q2_b, nullptr, st);
  if (fast) {
    // Each exponent is a function of its vector's entries alone: one launch over all of them.
    launch_fast_exponents(L.qa * p.m, L.emax_a, L.sum_q2_a, tb, L.exp_a, st);
    launch_fast_exponents(L.qb * p.n, L.emax_b, L.sum_q2_b, tb, L.exp_b, st);
    OZDGEMM_CHECK_LAUNCH();
  } else {
    batch_accurate_exponents(b, L, va, vb, g, tb);
  }

  // 2. Residues, rounded as the single call rounds them (scaling_rules.hpp).
  const bool nearest = rounds_to_nearest(tb, p.k);
  launch_residues(va, L.exp_a, tb, nearest, L.res_a, st);
  launch_residues(vb, L.exp_b, tb, nearest, L.res_b, st);
  OZDGEMM_CHECK_LAUNCH();

  // 3. INT8 GEMMs.
  batch_gemms(b, L, g, tb);

  // 4. Reduction + CRT + inverse scaling + alpha/beta, C_i at C + i stride_c; Inf/NaN rows and
  // columns re-read A_i and B_i.
  const crt_args args{L.prod, L.m_pad, L.n_pad, L.exp_a, L.exp_b, L.flags_a, L.flags_b, p.a, p.b};
  const crt_batch cb{b.count,
                     tb.s * L.m_pad * L.n_pad,
                     L.qa > 1 ? p.m : 0,
                     L.qb > 1 ? p.n : 0,
                     L.qa > 1 ? b.stride_a : 0,
                     L.qb > 1 ? b.stride_b : 0,
                     b.stride_c};
  launch_batched_crt(p, args, cb, tb, call.alpha, call.beta, st);
  OZDGEMM_CHECK_LAUNCH();
  return tb.s;
}

}  // namespace ozdgemm::detail
