// The route and the service of one device GEMM request (device_gemm.hpp).
#include "interpose/device_gemm.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <type_traits>

#include "api/dgemm_internal.hpp"
#include "api/status.hpp"
#include "api/zgemm_internal.hpp"
#include "common/cublas_api.hpp"
#include "common/logging.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/gpu_model.hpp"
#include "dispatch/process_state.hpp"
#include "dispatch/settings.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/gpu_choice.hpp"
#include "engine/moduli_history.hpp"
#include "interpose/real_symbol.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {
namespace {
// The engine entry of each element type.
device_result run_device(const device_request<double>& r, const ozdgemm_options_t& o,
                         const moduli_gate* gate) {
  return dgemm_device(r.handle, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda, r.b, r.ldb, r.beta,
                      r.c, r.ldc, o, false, true, gate, r.triangle);
}
device_result run_device(const device_request<cuDoubleComplex>& r, const ozdgemm_options_t& o,
                         const moduli_gate* gate) {
  return zgemm_device(r.handle, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda, r.b, r.ldb, r.beta,
                      r.c, r.ldc, o, false, true, gate, r.triangle);
}
// Whether the engine learns the call's count and applies the gate (engine/run.cpp): not for a
// certified count chosen in graph conditionals (under capture), for real and complex calls alike.
bool chooses_on_host(const config& cfg, bool captured) {
  return !(cfg.moduli.is_certified() && (captured || eager_choice() == eager_choice_kind::graphs));
}
const char* api_name(const device_request<double>&) { return "ozdgemm_dgemm"; }
const char* api_name(const device_request<cuDoubleComplex>&) { return "ozdgemm_zgemm"; }

// The real problem the model prices: ZGEMM runs as one real GEMM of m x 2n x 2k (the embedding
// of docs/complex.md), which is also what native ZGEMM's 8mnk flops amount to; the model counts
// the Karatsuba form where the call will run it (engine/complex_gemm.hpp, uses_karatsuba), and
// native ZGEMM at its own rate (kZgemmNativeWork).
struct model_shape {
  int64_t m, n, k;
  bool karatsuba;
  double native_work;
};
model_shape priced(const device_request<double>& r, scaling_mode) {
  return {r.m, r.n, r.k, false, 1.0};
}
model_shape priced(const device_request<cuDoubleComplex>& r, scaling_mode mode) {
  return {r.m, 2 * r.n, 2 * r.k, uses_karatsuba(complex_form::setting, mode, r.m, r.n, r.k),
          kZgemmNativeWork};
}

// Why emulation cannot serve this call at all, or nullptr.
template <class T>
const char* unsupported(const device_request<T>& r) {
  if (!cuda_usable_in_this_process()) return cuda_unusable_reason();  // touch no CUDA state
  if (r.handle == nullptr) return "null handle";
  if (r.m <= 0 || r.n <= 0 || r.k <= 0) return "empty or invalid sizes";
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  if (cublas_get_math_mode(r.handle, &math) != CUBLAS_STATUS_SUCCESS) return "unreadable handle";
  if ((math & CUBLAS_PEDANTIC_MATH) != 0) return "pedantic math requested on the handle";
  if ((math & CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH) != 0)
    return "cuBLAS FP64 emulation requested on the handle";
  return nullptr;
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) (void)cudaGetLastError();
  return device;
}

// Whether the handle's stream is being captured into a CUDA graph (unknown: yes, the cautious
// answer for what it decides: no calibration now).
bool capturing(cublasHandle_t handle) {
  cudaStream_t stream = nullptr;
  if (cublas_get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS) return true;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

// The route of request r: what cannot serve it, else the mode rules and the model on the GPU
// of the call. Fills the decision line's GPU. counts: the lookup counts as a decision of the shape
// (the retry rule of decision.hpp); a question that runs nothing does not count.
template <class T>
route plan(const device_request<T>& r, const config** cfg_out, call_record* rec, double native_work,
           bool counts, const gpu_rates** rates_out = nullptr) {
  const char* blocked = unsupported(r);
  *cfg_out = nullptr;
  if (blocked != nullptr) return route{false, blocked, {0.0, 0.0}};
  const config& cfg = settings();
  *cfg_out = &cfg;
  // The GPU of the call: whether the emulation runs on it, and its rates (measured on the first
  // call the model decides, unless the stream is being captured; the capture query only
  // matters where the model is consulted: it defers calibration).
  const model_shape sh = priced(r, cfg.scaling);
  const bool consults = consults_model(cfg, sh.m, sh.n, sh.k);
  const bool captured = consults && capturing(r.handle);
  const gpu_model& gpu =
      model_of_device(current_device(), consults ? cfg.calibrate : calibrate_mode::off, captured);
  rec->gpu = gpu.label.c_str();
  if (rates_out != nullptr) *rates_out = &gpu.rates;
  const char* cannot = cfg.mode == run_mode::native ? nullptr : gpu.unusable;
  // Auto mode with a per-call choice: the shape's recent counts price the call, and the count
  // this call's choice returns joins them.
  const bool learns = consults && cfg.moduli.chooses_per_call();
  moduli_outlook outlook;
  if (learns) {
    const history_key key = key_of_call(r.m, r.n, r.k, !std::is_same_v<T, double>, cfg.scaling,
                                        api_options(cfg).accuracy);
    outlook = counts ? process_moduli_history().lookup(key) : process_moduli_history().peek(key);
    outlook.host_choice = chooses_on_host(cfg, captured);
  }
  return decide_route(cfg, call_site::device, cannot, sh.m, sh.n, sh.k, true, gpu.rates,
                      native_work * sh.native_work, sh.karatsuba, learns ? &outlook : nullptr);
}

template <class T>
cublasStatus_t serve(const device_request<T>& r, native_call native, double native_work) noexcept {
  // The library's own native fallback (api/dgemm_internal.hpp) also comes through here.
  if (inside_interception() || in_native_fallback()) return native();
  interception_scope scope;
  const auto t0 = std::chrono::steady_clock::now();
  call_record rec{r.entry, r.m, r.n, r.k, outcome::native, nullptr, 0, 0.0, 0.0, 0.0};
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  try {
    const config* cfg = nullptr;
    const route rt = plan(r, &cfg, &rec, native_work, true);
    rec.reason = rt.reason;
    rec.predicted_native_ms = rt.predicted.native_ms;
    rec.predicted_emulated_ms = rt.predicted.emulated_ms;
    bool served = false;
    if (rt.emulate) {
      // What the engine did, kept apart from the status: guarded() returns early on a throw.
      int ran = 0;
      const char* not_emulated = nullptr;
      const ozdgemm_status_t est = guarded(api_name(r), [&] {
        const device_result d =
            run_device(r, api_options(*cfg), rt.gate.active() ? &rt.gate : nullptr);
        ran = d.s;
        not_emulated = d.not_emulated;  // the engine has recorded the count it learnt
        return d.status;
      });
      if (est == OZDGEMM_STATUS_SUCCESS && ran != 0) {
        served = true;
        rec.result = outcome::emulated;
        rec.num_moduli = ran;
      } else if (not_emulated != nullptr) {  // declined by the choice, or refused up front
        rec.reason = not_emulated;
      } else if (est == OZDGEMM_STATUS_INVALID_VALUE) {  // cuBLAS states the exact status
        rec.reason = "invalid arguments";
        rec.predicted_native_ms = rec.predicted_emulated_ms = 0.0;
      } else {
        logger().warn("{}: emulation failed ({}); running the native routine", r.entry,
                      ozdgemm_status_string(est));
        rec.result = outcome::fallback;
        rec.reason = ozdgemm_status_string(est);
      }
    }
    if (!served) st = native();
  } catch (...) {
    st = native();
    rec.result = outcome::fallback;
    rec.reason = "internal error";
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_call(rec);
  return st;
}

// The route of r as serve_device would take it, deciding nothing; with the settings and the
// model's rates it used (left null when it did not get that far).
template <class T>
route quote(const device_request<T>& r, const config** cfg = nullptr,
            const gpu_rates** rates = nullptr) noexcept {
  if (inside_interception() || in_native_fallback())
    return route{false, "inside the library", {0.0, 0.0}};
  try {
    const config* used = nullptr;
    call_record rec{};
    const route rt = plan(r, &used, &rec, 1.0, false, rates);
    if (cfg != nullptr) *cfg = used;
    return rt;
  } catch (...) {
    return route{false, "internal error", {0.0, 0.0}};
  }
}

// The batch's route: a strided batch the batched engine would take (engine_may: its
// pointers and strides allow it) is priced as the engine's one run where auto mode's model
// decides, any other as one GEMM per matrix (decision.hpp's batch_route).
template <class T>
route quote_batch(const device_request<T>& r, int64_t count, bool engine_may) noexcept {
  const config* cfg = nullptr;
  const gpu_rates* rates = nullptr;
  const route single = quote(r, &cfg, &rates);
  if (cfg == nullptr) return single;
  try {
    constexpr bool complex = !std::is_same_v<T, double>;
    prediction engine{};
    const bool priced_as_engine =
        engine_may && single.priced && rates != nullptr &&
        batch_engine_shape_refusal(r.m, r.n, r.k, count, api_options(*cfg), complex) == nullptr;
    if (priced_as_engine)
      engine = predict_device_batch(r.m, r.n, r.k, cfg->moduli.count(), cfg->scaling, true, *rates,
                                    count, complex);
    return batch_route(*cfg, single, count, priced_as_engine ? &engine : nullptr);
  } catch (...) {
    return route{false, "internal error", {0.0, 0.0}};
  }
}

}  // namespace

cublasStatus_t serve_device(const device_request<double>& r, native_call native,
                            double native_work) noexcept {
  return serve(r, native, native_work);
}
cublasStatus_t serve_device(const device_request<cuDoubleComplex>& r, native_call native,
                            double native_work) noexcept {
  return serve(r, native, native_work);
}
route device_gemm_route(const device_request<double>& r) noexcept { return quote(r); }
route device_gemm_route(const device_request<cuDoubleComplex>& r) noexcept { return quote(r); }
route device_batch_route(const device_request<double>& r, int64_t count, bool engine_may) noexcept {
  return quote_batch(r, count, engine_may);
}
route device_batch_route(const device_request<cuDoubleComplex>& r, int64_t count,
                         bool engine_may) noexcept {
  return quote_batch(r, count, engine_may);
}

}  // namespace ozdgemm::detail
