#include "engine/emulate.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "choice.cuh"
#include "common/env.hpp"
#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "common/logging.hpp"
#include "common/stream_capture.hpp"
#include "core/moduli.hpp"
#include "engine/certificate.hpp"
#include "engine/gpu_choice.hpp"
#include "engine/graph_choice.hpp"
#include "engine/int8_gemm.hpp"
#include "engine/layout.hpp"
#include "engine/pipeline.hpp"
#include "engine/speculation.hpp"
#include "fallback_gemm.cuh"
#include "residues.cuh"
#include "scaling.cuh"

namespace ozdgemm::detail {
namespace {

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
  // With the count known, its residue pass also writes the band planes (one read of each
  // operand instead of two), and the certificate follows it. The Karatsuba form's B residues
  // cover the first half of each embedding column: that pass writes each run's codes twice
  // (launch_residues_and_bands' mirror).
  const bool fused = tb != nullptr;
  // The launched count's exponents among every count's (what the certificate reads).
  const int* exps_a = tb != nullptr ? L.exps_all_a + slot * p.m : nullptr;
  const int* exps_b = tb != nullptr ? L.exps_all_b + slot * p.n : nullptr;
  launch_choice_inputs(call, L, g, fused);
  if (fused) {
    const bool nearest = rounds_to_nearest(*tb, p.k);
    launch_residues_and_bands(va, exps_a, *tb, nearest, L.emax_a, L.drop_a, L.res_a, L.bands_a, st);
    if (b_from_a(call) == b_source::own)
      launch_residues_and_bands(residue_vectors_b(call, L), exps_b, *tb, nearest, L.emax_b,
                                L.drop_b, L.res_b, L.bands_b, st, call.karatsuba);
    else if (call.karatsuba.on())
      copy_bands_to_b(call, L);
    OZDGEMM_CHECK_LAUNCH();
    launch_certificate(call, L, g);
  }
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
  // The residues of the launched count (unless the fused pass wrote them) are written whatever
  // the GPU decides, like the GEMMs that read them.
  enqueue_products(call, L, g, va, *tb, exps_a, exps_b,
                   fused ? residue_writes::none : residue_writes::both, L.chosen);
  launch_fallback_dgemm(p, call.alpha, call.beta, L.chosen, st, static_cast<int>(call.part),
                        call.mirrored_b);
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
  if (!moduli.is_certified()) return bytes_of(moduli.layout_count(), bytes);
  // A certified call may run the layout of a speculated count (enqueue_speculative), whose row
  // blocks can hold more products than kMaxModuli's: the largest of the 20 layouts. That is 2 us
  // of host time per call, so each thread keeps the answers for its last few shapes.
  struct sized {
    int64_t m, n, k, row_block, half_k, half_n;
    int mode, backend;
    size_t bytes;
    bool fits, valid;
  };
  constexpr int kCached = 8;
  thread_local sized cache[kCached] = {};
  thread_local int next = 0;
  const sized key{m,
                  n,
                  k,
                  row_block,
                  halves.k,
                  halves.n,
                  static_cast<int>(mode),
                  static_cast<int>(backend),
                  0,
                  false,
                  true};
  for (const sized& c : cache)
    if (c.m == key.m && c.n == key.n && c.k == key.k && c.row_block == key.row_block &&
        c.half_k == key.half_k && c.half_n == key.half_n && c.mode == key.mode &&
        c.backend == key.backend && c.valid) {
      *bytes = c.bytes;
      return c.fits;
    }
  sized found = key;
  found.fits = bytes_of(moduli.layout_count(), &found.bytes);
  for (int s = kMinModuli; s <= kMaxModuli && found.fits; ++s) {
    size_t b = 0;
    found.fits = bytes_of(s, &b);
    found.bytes = b > found.bytes ? b : found.bytes;
  }
  if (!found.fits) found.bytes = 0;
  cache[next] = found;
  next = (next + 1) % kCached;
  *bytes = found.bytes;
  return found.fits;
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
  // A triangle needs a square C: m x n, or m x 2n' with n' columns a side in a complex embedding.
  const int64_t c_cols = call.mirrored_b > 0 ? call.mirrored_b : p.n;
  if (call.part != c_part::all && (round_up(p.m, kPad) != round_up(c_cols, kPad) || call.reuse_a))
    throw std::invalid_argument("a triangle of C needs a square C and its own A");
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
  layout L = layout_for(workspace, p.m, p.n, p.k, layout_s, call.mode, automatic, certified, gemm,
                        call.row_block, call.karatsuba);
  if (!L.fits) throw std::length_error("emulation workspace size overflows");
  // B = op(A)^T: B's passes below are A's (the kernels that would only rewrite A's values in
  // place, the per-vector exponents and ratios, still run; the passes over B's elements do not).
  const bool shared_b = b_is_a(call);
  if (shared_b) share_a_as_b(&L);
  const cudaStream_t st = call.stream;
  const int8_gemm_target g{call.int8_handle, st, gemm, L.lt_ws, L.lt_ws_bytes};
  // The graphs' native DGEMM would write all of C: a triangle call never chooses there.
  bool on_gpu = certified && call.graphs != nullptr && !speculative && call.part == c_part::all;
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
  if (!shared_b)
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
  enqueue_products(call, L, g, va, *tb, L.exp_a, L.exp_b,
                   prepare_a ? residue_writes::both : residue_writes::b_only, nullptr);
  if (ev != nullptr) record(ev->finished, st);
  return s;
}

}  // namespace ozdgemm::detail
