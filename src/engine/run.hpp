// The one way into the engine. Every emulated call (the C API, which the cuBLAS hooks use, and
// the host path's workers; real or complex) goes through here, so that the rules of one call live
// in one place: the workspace is sized once, the limits are checked before anything is enqueued,
// the context's lock is held for the whole enqueue, and the call is ordered after the previous call
// on the same context (handle_context::begin / end).
#pragma once

#include <cublas_v2.h>

#include "core/moduli_choice.hpp"
#include "engine/batched_complex.hpp"
#include "engine/batched_emulate.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/emulate.hpp"
#include "engine/handle_context.hpp"

namespace ozdgemm::detail {

struct run_outcome {
  // The moduli count that ran; 0: nothing that touches C was enqueued (see declined / refused).
  int s = 0;
  // Why a per-call choice ran no s (no s <= 20 meets the target, or the stream is being
  // captured); static strings, for the call log. The choice's record says more.
  const char* declined = nullptr;
  moduli_choice choice;
  // Why the workspace limits refused the call before anything was enqueued (static string,
  // handle_context.hpp's reasons); null when they did not.
  const char* refused = nullptr;
};

// The reasons of run_outcome::declined.
inline constexpr const char* kNoModuliMeetsTarget =
    "auto moduli: no s <= 20 meets the accuracy target";
inline constexpr const char* kChoiceUnderCapture =
    "auto moduli: the choice synchronises, and the stream is being captured";
inline constexpr const char* kChosenCountSlower =
    "auto: the model predicts native faster at the chosen s";
inline constexpr const char* kChoiceWaitedOut =
    "auto moduli: the stream did not reach the choice in time (earlier work pending)";

// The workspace `call` needs, counted once per call, before anything touches the GPU or the
// caller's handle: call->int8_gemm is resolved to the backend the call will use (the workspace
// depends on it). False when the sizes cannot even be counted (an allocation failure for the
// caller: nothing can be allocated that large).
bool size_workspace(device_gemm* call, size_t* bytes) noexcept;

// `call` (sized by size_workspace) on the context of (caller, current device), created on
// first use. A call that the limits would refuse, and a per-call choice on a stream under
// capture, are turned away before the context is created or its workspace grows: neither is
// capturable, and neither is a failure. call.int8_handle is the context's. Throws cuda_error /
// cublas_error on failure.
run_outcome run_for_handle(cublasHandle_t caller, const device_gemm& call, size_t bytes);

// The complex `call` (sized by size_complex_workspace, `bytes` covering the engine's arrays and
// A', B*, T) under the same rules as run_for_handle: the capture and limit checks on the
// embedded real call, then packs, pipeline and epilogue in one enqueue on the context.
run_outcome run_complex_for_handle(cublasHandle_t caller, const complex_gemm& call, size_t bytes);

// A strided batch (engine/batched_emulate.hpp; `bytes` from batched_emulation_workspace_bytes)
// under the same rules as run_for_handle, in one enqueue on the context: s, or a refusal by the
// workspace limits (run_outcome::refused) with nothing enqueued.
run_outcome run_batch_for_handle(cublasHandle_t caller, const device_gemm_batch& batch,
                                 size_t bytes);

// A strided batch of complex matrices (engine/batched_complex.hpp; `bytes` from
// batched_complex_workspace_bytes), likewise.
run_outcome run_complex_batch_for_handle(cublasHandle_t caller, const complex_gemm_batch& batch,
                                         size_t bytes);

// `call` on a context the caller owns (the host path's workers), sized here. The workspace
// limits apply as handle_context::workspace enforces them (a refusal throws), and so does an
// uncountable size (std::length_error). call.stream is the stream the worker orders its work
// on.
run_outcome run_on_context(handle_context& ctx, device_gemm call);

}  // namespace ozdgemm::detail
