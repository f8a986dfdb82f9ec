#include "engine/run.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>

#include "common/error.hpp"
#include "common/stream_capture.hpp"
#include "engine/gpu_choice.hpp"

namespace ozdgemm::detail {
namespace {

// engine/gpu_choice.hpp: under capture always, elsewhere when the process asks for it.
bool chooses_on_gpu(const device_gemm& call) {
  return call.choose_on_gpu && call.moduli.is_certified() && !call.reuse_a &&
         (gpu_choice_everywhere() || stream_capturing(call.stream));
}

// A per-call choice on the host synchronises the stream, which a stream under capture cannot do:
// such a call is turned away before anything else, the workspace included (it may not grow
// there).
bool decline_under_capture(const device_gemm& call, run_outcome* out) {
  if (!call.moduli.chooses_per_call() || !stream_capturing(call.stream) || chooses_on_gpu(call))
    return false;
  out->declined = kChoiceUnderCapture;
  out->choice.why = "the choice needs a host synchronisation and the stream is being captured";
  return true;
}

// Held from begin() to end(): one call's enqueue on the context, sized once. `enqueue` gets the
// call completed with the context's private handle (and a per-call choice's event and copy
// stream) and the workspace, and returns the moduli count that ran (0: nothing touched C):
// enqueue_emulation for a real call, enqueue_complex for a complex one.
template <class Enqueue>
run_outcome enqueue_on(handle_context& ctx, device_gemm call, size_t bytes, Enqueue&& enqueue) {
  std::lock_guard<std::mutex> lock(ctx.mutex());
  ctx.begin(call.stream);
  void* ws = ctx.workspace(bytes);
  call.int8_handle = ctx.cublas();
  if (chooses_on_gpu(call)) {
    call.graphs = &ctx.gpu_choice();
  } else if (call.moduli.chooses_per_call()) {
    call.choice_ready = ctx.choice_event();
    call.choice_copy = ctx.choice_stream();
  }
  run_outcome out;
  out.s = enqueue(call, ws, &out.choice);
  ctx.end();
  if (out.s == 0)
    out.declined = out.choice.gated        ? kChosenCountSlower
                   : out.choice.waited_out ? kChoiceWaitedOut
                                           : kNoModuliMeetsTarget;
  return out;
}

// The rules before a caller's context is touched (capture, workspace limits), then the enqueue.
template <class Enqueue>
run_outcome run_with_rules(cublasHandle_t caller, const device_gemm& call, size_t bytes,
                           Enqueue&& enqueue) {
  run_outcome out;
  if (decline_under_capture(call, &out)) return out;
  if ((out.refused = workspace_refusal(caller, call.stream, bytes)) != nullptr) return out;
  const std::shared_ptr<handle_context> ctx = context_for(caller);
  return enqueue_on(*ctx, call, bytes, enqueue);
}

}  // namespace

bool size_workspace(device_gemm* call, size_t* bytes) noexcept {
  call->int8_gemm = resolve_int8_gemm(call->int8_gemm);
  return emulation_workspace_bytes(call->p.m, call->p.n, call->p.k, call->moduli, call->mode, bytes,
                                   call->int8_gemm, call->row_block, call->karatsuba);
}

run_outcome run_for_handle(cublasHandle_t caller, const device_gemm& call, size_t bytes) {
  return run_with_rules(caller, call, bytes, enqueue_emulation);
}

run_outcome run_complex_for_handle(cublasHandle_t caller, const complex_gemm& call,
                                   size_t bytes) {
  return run_with_rules(caller, call.real, bytes,
                        [&call](const device_gemm& real, void* ws, moduli_choice* choice) {
                          complex_gemm bound = call;
                          bound.real = real;  // the context's handle, event and copy stream
                          return enqueue_complex(bound, ws, choice);
                        });
}

run_outcome run_on_context(handle_context& ctx, device_gemm call) {
  run_outcome out;
  if (decline_under_capture(call, &out)) return out;
  size_t bytes = 0;
  if (!size_workspace(&call, &bytes)) throw std::length_error("emulation workspace size overflows");
  return enqueue_on(ctx, call, bytes, enqueue_emulation);
}

}  // namespace ozdgemm::detail
