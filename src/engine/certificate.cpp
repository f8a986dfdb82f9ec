#include "engine/certificate.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>

#include "certify.cuh"
#include "common/error.hpp"
#include "core/certified_bound.hpp"
#include "core/moduli.hpp"
#include "engine/pipeline.hpp"
#include "engine/speculation.hpp"
#include "scaling.cuh"

namespace ozdgemm::detail {
namespace {

// The certified count's inputs before its band GEMM: for accurate scaling the band drops (fast
// scaling's ratio launches write them) and the l1 norms (fast scaling scans them with its norms,
// scan_operand), and the band planes unless the residue pass writes them (write_bands false).
void prepare_certificate(const device_gemm& call, const layout& L, bool write_bands) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  if (call.mode != scaling_mode::fast) {
    launch_band_drops(p.m, L.emax_a, L.exp_sum_a, L.nnz_a, L.drop_a, st);
    launch_band_drops(p.n, L.emax_b, L.exp_sum_b, L.nnz_b, L.drop_b, st);
  }
  if (write_bands) {
    launch_band_planes(vectors_a(call, L), L.emax_a, L.drop_a, L.bands_a, st);
    if (b_from_a(call) == b_source::own)
      launch_band_planes(vectors_b(call, L), L.emax_b, L.drop_b, L.bands_b, st);
    else if (call.karatsuba.on())
      copy_bands_to_b(call, L);
  }
  if (call.mode != scaling_mode::fast) {
    launch_norm1_scan(vectors_a(call, L), L.emax_a, L.norm_a, st);
    launch_norm1_scan(vectors_b(call, L), L.emax_b, L.norm_b, st);
  }
  OZDGEMM_CHECK_LAUNCH();
}

// The worst certified ratio of every s over rows [i0, i0 + rows) and columns [c0, c0 + cols)
// of C (cols 0: all of them), from G (or the single band GEMM's g32) holding those columns from
// its column 0.
void certify(const device_gemm& call, const layout& L, const unsigned long long* g,
             const int32_t* g32, int64_t i0, int64_t rows, int64_t c0, int64_t cols,
             double threshold, uint32_t nearest_mask) {
  const gemm_problem& p = call.p;
  certify_args ca{};
  ca.g = g;
  ca.g32 = g32;
  ca.i0 = i0;
  ca.rows = p.m - i0 < rows ? p.m - i0 : rows;  // >= 1: the padding is under 16 rows
  ca.ld = rows;
  ca.m = p.m;
  ca.n = p.n;
  ca.k = p.k;
  ca.emax_a = L.emax_a;
  ca.emax_b = L.emax_b + c0;
  ca.flags_a = L.flags_a;
  ca.flags_b = L.flags_b + c0;
  ca.norm_a = L.norm_a;
  ca.norm_b = L.norm_b + c0;
  ca.drop_a = L.drop_a;
  ca.drop_b = L.drop_b + c0;
  ca.exps_all_a = L.exps_all_a;
  ca.exps_all_b = L.exps_all_b + c0;
  ca.nearest_mask = nearest_mask;
  ca.target = threshold;
  ca.worst = L.worst + 2 * (kMaxModuli + 1);
  ca.cols = cols;
  launch_certified_ratios(ca, call.stream);
  OZDGEMM_CHECK_LAUNCH();
}

}  // namespace

// The certified count's per-element bound, once the ratio launches kept the exponents of every
// s and the band planes and l1 norms of both operands are written: per block of rows of C the
// band GEMMs G_d = sum_p Q_p(A) Q_{d-p}(B)^T (exact INT32 per k-block, added into G in 64 bits
// with weight 2^(7 (kCertBands - 1 - d)); with one band and one k-block the INT32 sums are G)
// and the worst certified ratio of every s (core/certified_bound.hpp).
void launch_certificate(const device_gemm& call, const layout& L, const int8_gemm_target& g) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  const int64_t a_plane = L.m_pad * L.k_pad, b_plane = L.n_pad * L.k_pad;
  const int8_t* bands_a = L.bands_a;
  const int8_t* bands_b = L.bands_b;
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
  // A triangle of C (device_gemm::part) is certified per block of rows over the columns its
  // products reach (block_cols; both halves of a complex embedding's T): the elements it writes.
  const bool whole =
      single && call.mode == scaling_mode::fast && L.row_blocks > 1 && call.part == c_part::all &&
      static_cast<size_t>(L.m_pad) * static_cast<size_t>(L.n_pad) * 4 <= L.shared_bytes;
  const int64_t blocks = whole ? 1 : L.row_blocks;
  int32_t* part = whole ? L.prod : L.cert_part;
  for (int64_t rb = 0; rb < blocks; ++rb) {
    const auto [i0, rows] = whole ? row_span{0, L.m_pad} : block_rows(L, rb);
    const col_span cs = block_cols(call, L, i0, rows);
    const int halves = call.part != c_part::all && call.mirrored_b > 0 ? 2 : 1;
    for (int h = 0; h < halves; ++h) {
      // Columns [c0, c1) of the call (all of them but for a triangle), G from its column 0.
      const int64_t c0 = call.part == c_part::all ? 0 : cs.c0 + h * call.mirrored_b;
      const int64_t c1 = call.part == c_part::all ? L.n_pad : cs.c1 + h * call.mirrored_b;
      const int64_t cols = c1 - c0;
      if (!single)
        OZDGEMM_CUDA_TRY(cudaMemsetAsync(L.cert_g, 0, static_cast<size_t>(rows * cols) * 8, st));
      for (int d = 0; d < kCertBands; ++d)
        for (int q = 0; q <= d; ++q)
          for (int64_t blk = 0; blk < L.nblk; ++blk) {
            const int64_t k0 = blk * kKBlock;
            const int64_t klen = L.k_pad - k0 < kKBlock ? L.k_pad - k0 : kKBlock;
            if (call.part == c_part::all) {
              int8_gemm(g, rows, L.n_pad, k0, klen, L.k_pad, bands_a + q * a_plane + i0 * L.k_pad,
                        a_plane, bands_b + (d - q) * b_plane, part, 1, false);
            } else {
              const lt_gemm_shape shape{rows, cols, klen, L.k_pad, L.k_pad, rows, 1, 0, 0, 0};
              int8_gemm_views(g, shape, bands_a + q * a_plane + i0 * L.k_pad + k0,
                              bands_b + (d - q) * b_plane + c0 * L.k_pad + k0, part, false);
            }
            if (!single)
              launch_band_accumulate(L.cert_g, part, rows * cols, kBandBits * (kCertBands - 1 - d),
                                     st);
            OZDGEMM_CHECK_LAUNCH();
          }
      certify(call, L, single ? nullptr : L.cert_g, single ? part : nullptr, i0, rows, c0,
              call.part == c_part::all ? 0 : std::min(c1, p.n) - c0, threshold, nearest_mask);
    }
  }
}

namespace {

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

}  // namespace

void launch_choice_inputs(const device_gemm& call, const layout& L, const int8_gemm_target& g,
                          bool bands_in_residues) {
  const gemm_problem& p = call.p;
  const cudaStream_t st = call.stream;
  const bool certified = call.moduli.is_certified();
  const auto_bounds b = make_auto_bounds();
  unsigned long long* worst_a = L.worst;
  unsigned long long* worst_b = L.worst + (kMaxModuli + 1);
  if (call.mode == scaling_mode::fast) {
    launch_fast_ratios(
        fast_ratio_args{p.m, p.k, L.emax_a, L.flags_a, L.sum_q2_a, L.exp_sum_a, L.nnz_a, worst_a,
                        L.exps_all_a, certified ? L.drop_a : nullptr},
        b, st);
    launch_fast_ratios(
        fast_ratio_args{p.n, p.k, L.emax_b, L.flags_b, L.sum_q2_b, L.exp_sum_b, L.nnz_b, worst_b,
                        L.exps_all_b, certified ? L.drop_b : nullptr},
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
  if (certified) {
    prepare_certificate(call, L, !bands_in_residues);
    if (!bands_in_residues) launch_certificate(call, L, g);
  }
}

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

}  // namespace ozdgemm::detail
