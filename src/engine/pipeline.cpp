#include "engine/pipeline.hpp"

#include "certify.cuh"
#include "common/env.hpp"
#include "common/error.hpp"
#include "core/certified_bound.hpp"
#include "karatsuba.cuh"
#include "residues.cuh"
#include "scaling.cuh"

namespace ozdgemm::detail {
namespace {

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
  // A triangle's block: columns [c0, c0 + cols) of each half, into the planes' first columns.
  const col_span span = block_cols(call, L, i0, rows);
  const int64_t cols = span.c1 - span.c0, b0 = span.c0 * K;
  const bool batched = batched_gemms(call.batching, rows, cols, kh);
  // B's Re and Im: the first k' of its rows j and n' + j, or A's row j's halves (b_from_a);
  // Re + Im: the second k' of B's rows j, or A's sums for op(A)^T (the differences for op(A)^H
  // are written where B's sums go).
  const b_source from = b_from_a(call);
  const bool own = from == b_source::own;
  const int8_t* re_b = own ? L.res_b + b0 : L.res_a + span.c0 * K;
  const int8_t* im_b = own ? L.res_b + nh * K + b0 : L.res_a + span.c0 * K + kh;
  const int64_t re_im_stride = own ? b_plane : a_plane;
  const bool sums_of_a = from == b_source::a_transposed;
  const int8_t* sum_b = sums_of_a ? L.sum_a + span.c0 * kh : L.res_b + b0 + kh;
  const int64_t sum_ld = sums_of_a ? kh : K, sum_stride = sums_of_a ? sa_plane : b_plane;
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
        {L.res_a + i0 * K + k0, K, a_plane, re_b + k0, K, re_im_stride, L.prod, plane},
        {L.res_a + i0 * K + kh + k0, K, a_plane, im_b + k0, K, re_im_stride, L.prod + half, plane},
        {L.sum_a + i0 * kh + k0, kh, sa_plane, sum_b + k0, sum_ld, sum_stride, L.prod3, half}};
    for (const product& q : products) {
      const int count = batched ? s : 1;
      for (int t = 0; t < s; t += count) {
        const lt_gemm_shape shape{rows, cols,  klen,       q.lda,      q.ldb,
                                  rows, count, q.a_stride, q.b_stride, q.c_stride};
        int8_gemm_views(g, shape, q.a + t * q.a_stride, q.b + t * q.b_stride, q.c + t * q.c_stride,
                        k0 > 0);
      }
    }
  }
}

// Step 3 of a real call computing one triangle, for rows [i0, i0 + rows) of C: the INT8 GEMMs
// of the columns the block reaches (block_cols) into the planes' first columns, per k-block as
// block_gemms.
void triangle_gemms(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                    const modulus_table& tb, int64_t i0, int64_t rows) {
  const int s = tb.s;
  const int64_t K = L.k_pad, plane = rows * L.n_pad;
  const int64_t a_plane = L.m_pad * K, b_plane = L.n_pad * K;
  const col_span span = block_cols(call, L, i0, rows);
  const int64_t cols = span.c1 - span.c0;
  const bool batched = batched_gemms(call.batching, rows, cols, K);
  for (int64_t blk = 0; blk < L.nblk; ++blk) {
    const int64_t k0 = blk * kKBlock;
    const int64_t klen = K - k0 < kKBlock ? K - k0 : kKBlock;
    if (blk > 0) {
      if (g.use == lt_use::plan_only) return;  // accumulating k-blocks are never timed
      launch_fold(L.prod, plane, tb, g.stream);
      OZDGEMM_CHECK_LAUNCH();
    }
    const int count = batched ? s : 1;
    for (int t = 0; t < s; t += count) {
      const lt_gemm_shape shape{rows, cols, klen, K, K, rows, count, a_plane, b_plane, plane};
      int8_gemm_views(g, shape, L.res_a + t * a_plane + i0 * K + k0,
                      L.res_b + t * b_plane + span.c0 * K + k0, L.prod + t * plane, blk > 0);
    }
  }
}

}  // namespace

bool batched_gemms(gemm_batching choice, int64_t m_pad, int64_t n_pad, int64_t k_pad) {
  static const gemm_batching forced =
      gemm_batching_from_env_value(setting_env("OZDGEMM_GEMM_BATCHING"));
  if (choice == gemm_batching::automatic) choice = forced;
  if (choice != gemm_batching::automatic) return choice == gemm_batching::batched;
  return static_cast<double>(m_pad) * n_pad * k_pad < 34359738368.0;  // 2^35
}

b_source b_from_a(const device_gemm& call) {
  if (call.mode != scaling_mode::fast || call.reuse_a) return b_source::own;
  if (call.karatsuba.on())
    return round_up(call.p.m, kPad) == call.karatsuba.n ? call.embedded_b : b_source::own;
  const operand &a = call.p.a, &b = call.p.b;
  const bool same = call.mirrored_b == 0 && call.p.m == call.p.n && a.ptr == b.ptr &&
                    a.ld == b.ld && a.k_contiguous == b.k_contiguous;
  return same ? b_source::a_transposed : b_source::own;
}

void copy_bands_to_b(const device_gemm& call, const layout& L) {
  const int64_t K = L.k_pad, kh = call.karatsuba.k, nh = call.karatsuba.n;
  const int64_t a_plane = L.m_pad * K, b_plane = L.n_pad * K;
  const cudaStream_t st = call.stream;
  for (int d = 0; d < kCertBands; ++d) {
    const int8_t* a = L.bands_a + d * a_plane;
    int8_t* b = L.bands_b + d * b_plane;
    // Column j < n' of B*: A' row j's magnitudes; column n' + j: its halves swapped.
    OZDGEMM_CUDA_TRY(
        cudaMemcpyAsync(b, a, static_cast<size_t>(nh * K), cudaMemcpyDeviceToDevice, st));
    OZDGEMM_CUDA_TRY(
        cudaMemcpy2DAsync(b + nh * K, K, a + kh, K, kh, nh, cudaMemcpyDeviceToDevice, st));
    OZDGEMM_CUDA_TRY(
        cudaMemcpy2DAsync(b + nh * K + kh, K, a, K, kh, nh, cudaMemcpyDeviceToDevice, st));
  }
}

operand_vectors vectors_a(const device_gemm& call, const layout& L) {
  return operand_vectors{call.p.a, call.p.m, call.p.k, call.alpha.dev, L.m_pad, L.k_pad};
}
operand_vectors vectors_b(const device_gemm& call, const layout& L) {
  return operand_vectors{call.p.b, call.p.n, call.p.k, call.alpha.dev, L.n_pad, L.k_pad};
}
operand_vectors scanned_vectors_b(const device_gemm& call, const layout& L) {
  operand_vectors v = vectors_b(call, L);
  if (call.mirrored_b > 0) v.nvec = v.nvec_pad = call.mirrored_b;
  return v;
}
operand_vectors residue_vectors_b(const device_gemm& call, const layout& L) {
  operand_vectors v = vectors_b(call, L);
  if (call.karatsuba.on()) v.k = v.k_written = call.karatsuba.k;
  return v;
}

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

void accurate_exponents(const device_gemm& call, const layout& L, const modulus_table& tb) {
  launch_accurate_exponents(accurate_args(L, call.p.m, call.p.n), tb, call.stream);
}

void record(cudaEvent_t e, cudaStream_t s) {
  if (e != nullptr) OZDGEMM_CUDA_TRY(cudaEventRecord(e, s));
}

uint32_t nearest_mask_for(int64_t k) {
  uint32_t mask = 0;
  for (int s = kMinModuli; s <= kMaxModuli; ++s)
    if (rounds_to_nearest(moduli_for(s), k)) mask |= uint32_t{1} << s;
  return mask;
}

gemm_problem block_problem(const gemm_problem& p, int64_t i0, int64_t rows) {
  gemm_problem pb = p;
  pb.m = p.m - i0 < rows ? p.m - i0 : rows;
  pb.c = p.c + i0;
  pb.a = p.a.from_vector(i0);
  return pb;
}

crt_args crt_args_for(const device_gemm& call, const layout& L, const gemm_problem& pb, int64_t i0,
                      int64_t rows) {
  crt_args args{L.prod,         rows,      L.n_pad, L.exp_a + i0, L.exp_b,
                L.flags_a + i0, L.flags_b, pb.a,    call.p.b};
  if (call.karatsuba.on()) {
    args.prod3 = L.prod3;
    args.half_n = call.karatsuba.n;
    args.negate_p2 = b_from_a(call) == b_source::a_conjugated;
  }
  return args;
}

void restrict_to_part(const device_gemm& call, const layout& L, int64_t i0, int64_t rows,
                      gemm_problem* pb, crt_args* args) {
  const col_span span = block_cols(call, L, i0, rows);
  const int64_t c0 = span.c0;
  args->part = static_cast<int>(call.part);
  args->diag = i0 - c0;
  pb->c += c0 * pb->ldc;
  pb->b = pb->b.from_vector(c0);
  args->b = pb->b;
  args->exp_b += c0;
  args->flags_b += c0;
  if (call.karatsuba.on()) {
    args->cols = span.c1 - c0;  // of each half; pb->n stays 2 n'
  } else {
    const int64_t c1 = span.c1 < call.p.n ? span.c1 : call.p.n;
    pb->n = c1 > c0 ? c1 - c0 : 0;
  }
}

void karatsuba_sums(const device_gemm& call, const layout& L, const modulus_table& tb,
                    const int* chosen) {
  const karatsuba_halves& h = call.karatsuba;
  // Re A' in columns [0, k') of each row of A's planes, Im A' in [k', 2k'); Re B in the first k'
  // of rows [0, n') of B's planes, Im B in the first k' of rows [n', 2n'). The sums for B go to
  // columns [k', 2k') of rows [0, n') (-Im B there is dead: only the four-product form reads it).
  launch_residue_sums(L.res_a, L.m_pad * L.k_pad, L.k_pad, h.k, L.m_pad, h.k, tb, L.sum_a,
                      L.m_pad * h.k, h.k, call.stream, chosen);
  // B from A (b_from_a): op(A)^T's sums are A's (nothing to write), op(A)^H's are Re - Im of A's
  // rows.
  const b_source from = b_from_a(call);
  if (from == b_source::own)
    launch_residue_sums(L.res_b, L.n_pad * L.k_pad, L.k_pad, h.n * L.k_pad, h.n, h.k, tb,
                        L.res_b + h.k, L.n_pad * L.k_pad, L.k_pad, call.stream, chosen);
  else if (from == b_source::a_conjugated)
    launch_residue_sums(L.res_a, L.m_pad * L.k_pad, L.k_pad, h.k, h.n, h.k, tb, L.res_b + h.k,
                        L.n_pad * L.k_pad, L.k_pad, call.stream, chosen, true);
  OZDGEMM_CHECK_LAUNCH();
}

col_span block_cols(const device_gemm& call, const layout& L, int64_t i0, int64_t rows) {
  const int64_t n = call.karatsuba.on() ? call.karatsuba.n : L.n_pad;
  const auto at_most_n = [n](int64_t c) { return c < n ? c : n; };
  if (call.part == c_part::lower) return {0, at_most_n(i0 + rows)};
  if (call.part == c_part::upper) return {at_most_n(i0), n};
  return {0, n};
}

void block_gemms(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                 const modulus_table& tb, int64_t i0, int64_t rows) {
  if (call.karatsuba.on()) return karatsuba_gemms(call, L, g, tb, i0, rows);
  if (call.part != c_part::all) return triangle_gemms(call, L, g, tb, i0, rows);
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

void enqueue_products(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                      const operand_vectors& va, const modulus_table& tb, const int* exp_a,
                      const int* exp_b, residue_writes writes, const int* only_if) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  stage_events* ev = call.events;
  // Rounded to nearest wherever the scaling bound allows (scaling_rules.hpp).
  const bool nearest = rounds_to_nearest(tb, p.k);
  if (writes == residue_writes::both) launch_residues(va, exp_a, tb, nearest, L.res_a, st);
  if (writes != residue_writes::none && b_from_a(call) == b_source::own)
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
    gemm_problem pb = block_problem(p, i0, rows);
    crt_args args = crt_args_for(call, L, pb, i0, rows);
    args.exp_a = exp_a + i0;
    args.exp_b = exp_b;
    if (call.part != c_part::all) restrict_to_part(call, L, i0, rows, &pb, &args);
    launch_crt(pb, args, tb, call.alpha, call.beta, st, only_if);
    OZDGEMM_CHECK_LAUNCH();
    if (block_events) record(ev->crt_done[rb], st);
  }
}

}  // namespace ozdgemm::detail
