#include "bench_methods.hpp"

#include <library_types.h>

#include <exception>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/scalar.hpp"
#include "engine/emulate.hpp"

namespace ozdgemm::bench {

const char* ozdgemm_method_name(int8_gemm_backend gemm) {
  return gemm == int8_gemm_backend::lt ? "ozdgemm_lt" : "ozdgemm";
}

std::string label(const method& me) {
  if (me.kind != method_kind::ozdgemm) return me.name;
  return me.name + " s=" + std::to_string(me.moduli) + " " + mode_name(me.mode);
}

std::string configure_cublas_emulation(cublasHandle_t h, bool fixed, int bits) {
  auto check = [](cublasStatus_t st, const char* what) -> std::string {
    return st == CUBLAS_STATUS_SUCCESS ? "" : std::string(what) + ": " + cublasGetStatusString(st);
  };
  std::string e = check(cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH),
                        "cublasSetMathMode(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)");
  if (e.empty())
    e = check(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER),
              "cublasSetEmulationStrategy(EAGER)");
  if (e.empty())
    e = check(cublasSetFixedPointEmulationMantissaControl(
                  h, fixed ? CUDA_EMULATION_MANTISSA_CONTROL_FIXED
                           : CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC),
              fixed ? "cublasSetFixedPointEmulationMantissaControl(FIXED)"
                    : "cublasSetFixedPointEmulationMantissaControl(DYNAMIC)");
  if (e.empty() && fixed)
    e = check(cublasSetFixedPointEmulationMaxMantissaBitCount(h, bits),
              "cublasSetFixedPointEmulationMaxMantissaBitCount");
  return e;
}

size_t ozdgemm_workspace_bytes(const shape& sh, int moduli, scaling_mode mode,
                               int8_gemm_backend gemm) {
  return detail::emulation_workspace_bytes(sh.m, sh.n, sh.k, detail::moduli_setting::fixed(moduli),
                                           mode, gemm);
}

stage_split measure_stages(const shape& sh, const input_set& in, int moduli, scaling_mode mode,
                           int8_gemm_backend gemm, int reps, cudaStream_t stream,
                           cublasHandle_t private_handle) {
  namespace d = ozdgemm::detail;
  stage_split out;
  out.measured = true;
  try {
    device_array<char> ws(ozdgemm_workspace_bytes(sh, moduli, mode, gemm));
    constexpr int kBlocks = d::stage_events::kMaxBlocks;
    event_pool ev(4 + 2 * kBlocks);
    // Members are set by name after value-initialisation, so fields the engine adds later
    // keep their defaults here.
    d::stage_events se{};
    se.start = ev[0];
    se.prepared = ev[1];
    se.multiplied = ev[2];
    se.finished = ev[3];
    for (int b = 0; b < kBlocks; ++b) {
      se.gemm_done[b] = ev[4 + b];
      se.crt_done[b] = ev[4 + kBlocks + b];
    }
    d::device_gemm call{};
    call.p.m = sh.m;
    call.p.n = sh.n;
    call.p.k = sh.k;
    call.p.a = d::operand_a(d::op_kind::n, in.a.get(), sh.m);
    call.p.b = d::operand_b(d::op_kind::n, in.b.get(), sh.k);
    call.p.c = in.c.get();
    call.p.ldc = sh.m;
    call.alpha = d::scalar_arg{nullptr, 1.0};
    call.beta = d::scalar_arg{nullptr, 0.0};
    call.moduli = d::moduli_setting::fixed(moduli);
    call.mode = mode;
    call.stream = stream;
    call.int8_handle = private_handle;
    call.events = &se;
    call.int8_gemm = gemm;
    std::vector<double> prep, gemm, crt;
    for (int r = 0; r <= reps; ++r) {
      d::enqueue_emulation(call, ws.get());
      OZDGEMM_CUDA_TRY(cudaEventSynchronize(se.finished));
      if (r == 0) continue;  // warm-up
      prep.push_back(elapsed_ms(se.start, se.prepared));
      if (se.blocks <= 1) {
        gemm.push_back(elapsed_ms(se.prepared, se.multiplied));
        crt.push_back(elapsed_ms(se.multiplied, se.finished));
      } else if (se.blocks <= kBlocks) {  // row blocks: GEMMs and CRT alternate, sum each
        double g = 0, c = 0;
        for (int b = 0; b < se.blocks; ++b) {
          g += elapsed_ms(b == 0 ? se.prepared : se.crt_done[b - 1], se.gemm_done[b]);
          c += elapsed_ms(se.gemm_done[b], se.crt_done[b]);
        }
        gemm.push_back(g);
        crt.push_back(c);
      } else {
        gemm.push_back(kNaN);
        crt.push_back(kNaN);
      }
    }
    out.prep = median(prep);
    out.gemm = median(gemm);
    out.reduction = kReductionFused ? 0.0 : kNaN;
    out.crt = median(crt);
  } catch (const std::exception& e) {
    out.error = e.what();
    recover(stream);
  }
  return out;
}

}  // namespace ozdgemm::bench
