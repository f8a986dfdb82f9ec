#include "engine/run.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>

#include "common/error.hpp"
#include "common/stream_capture.hpp"
#include "engine/gpu_choice.hpp"
#include "engine/speculation.hpp"

namespace ozdgemm::detail {
namespace {

// The certified count of a call that may choose on the GPU (choose_on_gpu): under capture in CUDA
// graph conditionals (engine/gpu_choice.hpp); eager, speculated and checked on the GPU
// (engine/speculation.hpp) unless OZDGEMM_CHOICE=host, or in graph conditionals where a test
// asks for them.
bool may_choose_on_gpu(const device_gemm& call) {
  return call.choose_on_gpu && call.moduli.is_certified() && !call.reuse_a;
}
// Not a triangle of C: the graphs' native DGEMM would write all of it.
bool chooses_on_gpu(const device_gemm& call) {
  return may_choose_on_gpu(call) && call.part == c_part::all &&
         (stream_capturing(call.stream) || eager_choice() == eager_choice_kind::graphs);
}
bool speculates(const device_gemm& call) {
  return may_choose_on_gpu(call) && call.shape != nullptr &&
         eager_choice() == eager_choice_kind::speculate && !stream_capturing(call.stream);
}

// The reasons of run_outcome::declined for a speculating call.
constexpr const char* kLatestNoCount =
    "certified count: the shape's latest call found no s <= 20 that meets the target";

// What a speculating call launches (moduli_history::speculate, after the outcomes delivered so
// far are learnt): call->speculative or call->certify_only set, or true when the call runs
// native with nothing enqueued (out says why). A shape with no outcome yet is left to the host's
// choice.
bool plan_speculation(device_gemm* call, run_outcome* out) {
  harvest_outcomes();
  const speculation sp = process_moduli_history().speculate(*call->shape);
  if (sp.launch > 0) {
    if (call->gate != nullptr && !call->gate->runs(sp.launch)) {
      out->declined = kChosenCountSlower;
      out->choice.gated = true;
      out->choice.why = "s=" + std::to_string(sp.launch) +
                        " speculated; the model predicts the native routine faster";
      return true;
    }
    call->speculative = sp.launch;
  } else if (sp.native) {
    if (!sp.probe) {
      out->declined = kLatestNoCount;
      out->choice.why = "the shape's latest certified count was none";
      return true;
    }
    call->certify_only = true;
  }
  return false;
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
  const bool speculated = call.speculative > 0 || call.certify_only;
  const bool graphs = chooses_on_gpu(call);
  if (graphs || speculated) {
    call.graphs = &ctx.gpu_choice();
  } else if (call.moduli.chooses_per_call()) {  // the host's choice (a speculating shape's first)
    call.choice_ready = ctx.choice_event();
    call.choice_copy = ctx.choice_stream();
  }
  // A certified call with a shape writes its certified count to an outcome slot (the engine
  // commits it right after the chooser kernel), a speculating one and a host's choice alike; the
  // host's choice is then learnt at once, since the host has waited past that point.
  if (call.shape != nullptr && call.moduli.is_certified() && !graphs)
    call.outcome = reserve_outcome(*call.shape);
  run_outcome out;
  try {
    out.s = enqueue(call, ws, &out.choice);
  } catch (...) {
    release_outcome(call.outcome);  // nothing if the engine committed it
    throw;
  }
  release_outcome(call.outcome);
  ctx.end();
  if (out.choice.made) {
    if (call.outcome != nullptr)  // its slot holds the same count, delivered by now
      harvest_outcomes();
    else if (call.shape != nullptr)
      process_moduli_history().record(*call.shape, out.choice.s);
  }
  if (out.s == 0)
    out.declined = call.certify_only       ? kLatestNoCount
                   : out.choice.gated      ? kChosenCountSlower
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
  device_gemm planned = call;
  if (speculates(call) && plan_speculation(&planned, &out)) return out;
  if ((out.refused = workspace_refusal(caller, call.stream, bytes)) != nullptr) return out;
  const std::shared_ptr<handle_context> ctx = context_for(caller);
  return enqueue_on(*ctx, planned, bytes, enqueue);
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

run_outcome run_complex_for_handle(cublasHandle_t caller, const complex_gemm& call, size_t bytes) {
  return run_with_rules(caller, call.real, bytes,
                        [&call](const device_gemm& real, void* ws, moduli_choice* choice) {
                          complex_gemm bound = call;
                          bound.real = real;  // the context's handle, event and copy stream
                          return enqueue_complex(bound, ws, choice);
                        });
}

run_outcome run_batch_for_handle(cublasHandle_t caller, const device_gemm_batch& batch,
                                 size_t bytes) {
  return run_with_rules(caller, batch.call, bytes,
                        [&batch](const device_gemm& call, void* ws, moduli_choice*) {
                          device_gemm_batch bound = batch;
                          bound.call = call;  // the context's handle
                          return enqueue_batched_emulation(bound, ws);
                        });
}

run_outcome run_complex_batch_for_handle(cublasHandle_t caller, const complex_gemm_batch& batch,
                                         size_t bytes) {
  return run_with_rules(caller, batch.call.real, bytes,
                        [&batch](const device_gemm& real, void* ws, moduli_choice*) {
                          complex_gemm_batch bound = batch;
                          bound.call.real = real;  // the context's handle
                          return enqueue_batched_complex(bound, ws);
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
