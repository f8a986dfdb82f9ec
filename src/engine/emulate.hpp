// The GPU pipeline of Ozaki Scheme II for one call, enqueued on one stream with no host
// synchronisation (fixed s; the automatic moduli count synchronises once, see below):
//   1. scaling: per-vector exponent scan, then the fast (norm) or accurate (INT8 bound GEMM)
//      exponents;
//   2. residues: s INT8 planes per operand;
//   3. s INT8 x INT8 -> INT32 GEMMs, strided-batched over the moduli, per k-block;
//   4. reduction mod m_t fused with CRT reconstruction, inverse scaling and alpha/beta.
// Steps 3 and 4 run per block of rows of C when the INT32 products of all of C would make the
// workspace larger than s(m+n)k + (s+4)mn bytes (see rule_row_block in layout.cpp).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "core/gemm_problem.hpp"
#include "core/karatsuba.hpp"
#include "core/moduli_choice.hpp"
#include "core/moduli_setting.hpp"
#include "core/scalar.hpp"
#include "core/scaling_rules.hpp"
#include "engine/int8_gemm.hpp"
#include "engine/moduli_history.hpp"

namespace ozdgemm::detail {

class gpu_choice_graphs;

// Optional instrumentation: events recorded at the stage boundaries (start, after scaling
// and residues, after the INT8 GEMMs, after CRT). Recording adds no synchronisation. With
// row blocks the GEMMs and the CRT alternate: `blocks` is set to their number, and when it is
// at most kMaxBlocks and the arrays hold events, gemm_done[b] and crt_done[b] are recorded
// after block b's GEMMs and after its CRT (the GEMM time is then the sum over b of
// gemm_done[b] - crt_done[b-1], from `prepared` for b = 0). `multiplied` is recorded after the
// last block's GEMMs, `finished` at the end.
struct stage_events {
  static constexpr int kMaxBlocks = 32;
  cudaEvent_t start, prepared, multiplied, finished;
  int blocks = 0;  // out
  cudaEvent_t gemm_done[kMaxBlocks] = {};
  cudaEvent_t crt_done[kMaxBlocks] = {};
};

// How the s modulus GEMMs are issued: automatic picks by size (pipeline.hpp says why).
enum class gemm_batching { automatic, batched, looped };

// Where a call's B comes from: its own operand, or A read the other way, op(B) = op(A)^T or (a
// complex call) op(A)^H (engine/pipeline.hpp's b_from_a).
enum class b_source { own, a_transposed, a_conjugated };

// The measurement overrides, read once by the engine (README, Environment). Pure apart from
// the one warning an invalid value gets (then the rule, as for the other settings); separate
// from the readers so that the mapping can be unit-tested.
//   OZDGEMM_GEMM_BATCHING: null -> automatic; "batched", "looped"; anything else -> automatic.
gemm_batching gemm_batching_from_env_value(const char* value) noexcept;
//   OZDGEMM_ROW_BLOCK: null -> -1 (the rule); "off" -> 0 (one block); a decimal number of rows
//   in [1, 2^31) -> that; anything else -> -1.
int64_t row_block_from_env_value(const char* value) noexcept;

// device_gemm::moduli chosen per call (moduli_setting::automatic / certified): the scaling
// pass also reduces the statistics of the choice (kernels/scaling.cuh) and, certified, the
// per-element bound's band GEMMs (kernels/certify.cuh); the worst ratios of every s come back to
// the host in one small device-to-host copy once the stream has reached them (s fixes how many
// INT8 GEMMs are launched, so the host must know it before launching them; the host polls an
// event for at most kChoiceWaitSeconds, then gives up and the call runs native); the host runs
// choose_moduli (core/moduli_choice.hpp), the code the host reference runs, then enqueues the
// exponents, residues, GEMMs and CRT for that s. A fixed s never synchronises. This choice is
// not possible under stream capture (no synchronisation there): the call then chooses nothing
// (s = 0) and says why. The certified count can instead be chosen on the GPU (choose_on_gpu,
// engine/gpu_choice.hpp), with no synchronisation and under capture too. Certified: |C - AB| <=
// target |A||B| + u |C| element by element for every input (docs/certified.md), at the price of 6
// INT8 GEMMs of depth k and, per block of rows, an m x n pass.

struct device_gemm {
  gemm_problem p;  // device pointers; m, n, k > 0
  scalar_arg alpha, beta;
  moduli_setting moduli;
  scaling_mode mode;
  cudaStream_t stream;
  cublasHandle_t int8_handle;  // private handle bound to `stream`
  stage_events* events;        // may be null
  gemm_batching batching = gemm_batching::automatic;
  // The workspace already holds A's scaling and residues from the previous call on it with the
  // same A, m, k, alpha, moduli and fast scaling (only another B, n, C): skip A's passes. Fast
  // scaling only: there each row's exponent depends on that row alone, so the result is
  // bit-identical to one call over all columns. The host path's column tiles use it.
  bool reuse_a = false;
  // Read only when moduli.chooses_per_call().
  accuracy_target target{};
  // Which backend runs the INT8 GEMMs (engine/int8_gemm.hpp); `setting` is resolved once per
  // call. The workspace must have been sized for the same backend (it adds the lt backend's
  // workspace), see emulation_workspace_bytes.
  int8_gemm_backend int8_gemm = int8_gemm_backend::setting;
  // Rows of C per block of steps 3-4 (a multiple of 16); 0: the engine's rule. For tests; the
  // workspace must have been sized with the same value.
  int64_t row_block = 0;
  // A per-call choice's event and copy stream (non-blocking, nothing else on it): the context's
  // (handle_context), or null for ones made and freed per call.
  cudaEvent_t choice_ready = nullptr;
  cudaStream_t choice_copy = nullptr;
  // Certified: choose s on the GPU (engine/gpu_choice.hpp) with the context's graphs, when set
  // (run.hpp sets it for calls that ask, choose_on_gpu); null: the synchronising choice above.
  bool choose_on_gpu = false;
  gpu_choice_graphs* graphs = nullptr;
  // A complex call's embedding to multiply in the Karatsuba form (core/karatsuba.hpp): step 3
  // runs 3 INT8 GEMMs per modulus on the halves, which the CRT combines. Same bits as without.
  // The workspace must have been sized with the same halves.
  karatsuba_halves karatsuba{};
  // A complex call's embedding (engine/complex_gemm.cpp): n', B*'s column n' + j holding column
  // j's entries permuted and negated. B's per-column statistics are then scanned over its first
  // n' columns and copied to the others (the same values: the same bits). 0: a real call.
  int64_t mirrored_b = 0;
  // Asked once a per-call choice made on the host has returned s, or before a speculative count
  // is launched: a count it declines runs no emulation (nothing touches C;
  // moduli_choice::gated). Null: every count runs.
  const moduli_gate* gate = nullptr;
  // The call's shape in the history of certified counts (engine/moduli_history.hpp): what a
  // choice on the host returns is recorded there, and an eager certified call that may choose on
  // the GPU launches the count it speculates (engine/speculation.hpp). Null: neither.
  const history_key* shape = nullptr;
  // Set by run.cpp for a count chosen on the GPU with no wait (engine/speculation.hpp): the count
  // whose GEMMs are launched (the CRT runs when the GPU certifies it, the FP64 fallback
  // otherwise), or, with certify_only, none (the certificate alone; the caller runs native); and
  // the slot the smallest certified count is written to (may be null).
  int speculative = 0;
  bool certify_only = false;
  int* outcome = nullptr;
  // One triangle of C (SYRK, HERK and their kin, interpose/level3_device.cpp): per block of rows
  // the INT8 GEMMs cover only the columns the triangle reaches, and the CRT and the FP64 fallback
  // write only the triangle (a complex embedding: T's columns j and n' + j as column j). m == n.
  // The Karatsuba form only for complex calls; no count chosen in graph conditionals (under
  // capture such a call declines: its native routine runs). row_block sets the blocks.
  c_part part = c_part::all;
  // A complex embedding whose op(B) is op(A)^T (a ZSYRK's square) or op(A)^H (a HERK's), set by
  // engine/complex_gemm.cpp: in the Karatsuba form B's residues and band planes are then taken
  // from A's (b_from_a). B* is still packed and scanned (the FP64 fallback and the Inf/NaN dot
  // products read it; its statistics equal A's rows').
  b_source embedded_b = b_source::own;
};

// What enqueue_emulation returns when the certified count is chosen on the GPU: the host does
// not know s (the tally of engine/gpu_choice.hpp counts it), and C is written either way, by
// the emulation or by native DGEMM (graphs) or the FP64 fallback (speculative count).
inline constexpr int kChosenOnGpu = -1;

// How long a per-call choice waits for the stream to reach it. Longer means the stream is held
// back by earlier work, possibly work that waits for the host (a kernel spinning on a flag the
// caller sets after this call returns): waiting on would hang the caller, so the call runs native
// instead, enqueued behind that work like any cuBLAS call. Nothing has touched C by then.
inline constexpr double kChoiceWaitSeconds = 1.0;

// Workspace the call needs, in bytes (a per-call choice: the workspace of s = 20 plus the
// choice's arrays, since the choice comes after the scaling pass, whose results must stay where
// they are; certified: also the certification's arrays).
// The sizes may come from callers: false when the count overflows (or exceeds PTRDIFF_MAX),
// checked before anything is allocated. `gemm` is the call's INT8 GEMM backend (`setting`:
// the process-wide one now): the lt backend's workspace comes last, after every other array,
// so the cublas layout is unchanged and A's arrays keep their offsets (reuse_a).
bool emulation_workspace_bytes(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                               scaling_mode mode, size_t* bytes,
                               int8_gemm_backend gemm = int8_gemm_backend::setting,
                               int64_t row_block = 0, karatsuba_halves halves = {}) noexcept;
// The same for sizes known to fit; throws std::length_error when they do not.
size_t emulation_workspace_bytes(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                                 scaling_mode mode,
                                 int8_gemm_backend gemm = int8_gemm_backend::setting,
                                 int64_t row_block = 0);

// Enqueues the whole pipeline and returns the moduli count used: the fixed s, or the chosen
// one, or 0 when no s in [2, 20] meets call.target (or the
// stream is being captured): then only the scaling statistics were enqueued, C is untouched and the
// caller must run native DGEMM. `choice` (optional) receives the chooser's record (predicted error,
// target, why). Throws cuda_error / cublas_error on failure.
int enqueue_emulation(const device_gemm& call, void* workspace, moduli_choice* choice = nullptr);

}  // namespace ozdgemm::detail
