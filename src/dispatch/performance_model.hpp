// The performance model of auto mode: predicted times of the native routine and of the
// emulation for one call, from the rates of the GPU that runs it (dispatch/gpu_rates.hpp). On
// the H200, where they were measured, they sit on the side that favours native
// (docs/performance_model.md): auto mode must never pick a slower emulation.
// tests/cpu/performance_model_test.cpp holds the model to the recorded H200 sweep and to a
// roofline of every GPU of the published table.
#pragma once

#include <cstdint>

#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"
#include "dispatch/gpu_rates.hpp"

namespace ozdgemm::detail {

struct prediction {
  double native_ms;
  double emulated_ms;
};

// The moduli count a per-call choice is priced at for a shape whose choices the process has not
// seen yet (decision.hpp prices the others from what their choices returned): conservative, the
// automatic choice measured on the host is 15-17 for phi <= 2 (docs/auto.md).
inline constexpr int kAutoModuliEstimate = 16;

// Native complex routines against the DGEMM flop rate the model's FP64 rate is (calibrated on
// DGEMM at 2048^3), as multipliers of the native time of the real problem priced (m x 2n x 2k,
// the same flops as native ZGEMM's 8 m n k). On the H200 cublasZgemm ran at 0.82-0.90 of that
// rate at 8192^3 and 16384^3, and cublasZgemm3m in 0.86-0.93 of cublasZgemm's time, not the 3/4
// of its work (bench/results/auto_mode/README.md, 2026-12-03, and zgemm/README.md, runs 5-6): the
// model takes the fast end of each range, which favours native. Other GPUs: not measured; the
// same factors.
inline constexpr double kZgemmNativeWork = 1.0 / 0.9;
inline constexpr double kZgemm3mNativeWork = 0.86 * kZgemmNativeWork;

// Device-memory call: native cublasDgemm against the emulation on the same GPU. A per-call
// choice (auto, certified) costs kAutoModuliEstimate moduli plus the choice itself (choice_ms).
// Rates with a rate missing (an
// unknown GPU not calibrated) predict native faster.
// karatsuba: the m x n x k problem priced is a complex call's embedding run in the Karatsuba
// form (core/karatsuba.hpp): 3/4 of its modulus GEMMs, plus the form's combination pass.
prediction predict_device(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                          bool reads_c, const gpu_rates& rates, bool karatsuba = false);

// A strided batch of `count` m x n x k GEMMs at a fixed count `s` through the batched engine
// (engine/batched_emulate.hpp): native, the batched routine's one fixed cost and each matrix's
// work; emulated, the emulation's fixed cost once and each matrix's passes and INT8 GEMMs, whose
// small kernels run slower than the single call's model says (kEnginePassFactor; complex
// batches kComplexEnginePassFactor; both measured on an H100). complex: the matrices are complex
// (engine/batched_complex.hpp): their embedding m x 2n x 2k, plus its packs and epilogue,
// against cublasZgemm's rate (kZgemmNativeWork). Unknown rates predict native faster.
prediction predict_device_batch(int64_t m, int64_t n, int64_t k, int s, scaling_mode mode,
                                bool reads_c, const gpu_rates& rates, int64_t count,
                                bool complex = false);

// A native call's fixed cost (launch and cuBLAS's set-up), in ms: a batched native routine pays
// it once for all its matrices.
double native_latency_ms();

// The per-call choice's own cost (auto: its stream synchronisation; certified: also its band
// GEMMs and passes), in ms; 0 for a fixed count or unknown rates.
double choice_ms(int64_t m, int64_t n, int64_t k, moduli_setting moduli, const gpu_rates& rates);

// Host-memory call: the CPU BLAS against the transfers over the host link plus the emulation
// as predict_device counts it.
prediction predict_host(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                        bool reads_c, const gpu_rates& rates);

}  // namespace ozdgemm::detail
