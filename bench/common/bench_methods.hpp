// The methods the benchmark compares, and the instrumented stage split of ozdgemm.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "bench_inputs.hpp"
#include "core/scaling_rules.hpp"
#include "engine/int8_gemm.hpp"

namespace ozdgemm::bench {

using detail::int8_gemm_backend;
using detail::scaling_mode;

inline const char* mode_name(scaling_mode m) {
  return m == scaling_mode::fast ? "fast" : "accurate";
}

enum class method_kind { native, cublas_emu, ozdgemm };

struct method {
  method_kind kind = method_kind::native;
  // cublas_dgemm, cublas_emu_dynamic, cublas_emu_fixed<bits>, ozdgemm (INT8 GEMMs by
  // cublasGemmEx), ozdgemm_lt (by cuBLASLt: OZDGEMM_INT8_GEMM=lt)
  std::string name;
  int moduli = 0;    // ozdgemm only
  scaling_mode mode = scaling_mode::accurate;  // ozdgemm only
  cublasHandle_t handle = nullptr;             // cuBLAS methods: the configured handle
  int8_gemm_backend gemm = int8_gemm_backend::cublas;  // ozdgemm only
};

// The method name of ozdgemm with that INT8 GEMM backend: "ozdgemm" or "ozdgemm_lt".
const char* ozdgemm_method_name(int8_gemm_backend gemm);

// "ozdgemm s=14 fast", "ozdgemm_lt s=14 fast" or the method name.
std::string label(const method& me);

// Configures `h` for cuBLAS's own FP64 emulation: CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH, the
// eager strategy (emulate whenever possible, not only where cuBLAS expects a gain) and dynamic
// mantissa control, or fixed control with at most `bits` mantissa bits. Returns "" or why the
// method cannot be used (any failing setter disables it).
std::string configure_cublas_emulation(cublasHandle_t h, bool fixed, int bits);

// Peak workspace of one ozdgemm call, in bytes (the engine's own figure; the lt backend's
// cuBLASLt workspace included).
size_t ozdgemm_workspace_bytes(const shape& sh, int moduli, scaling_mode mode,
                               int8_gemm_backend gemm);

// Stage split of one ozdgemm configuration, in ms (medians over the instrumented runs):
//   prep       scaling + residue generation
//   gemm       the s INT8 GEMMs
//   reduction  mod-m_t reduction of the INT32 products: fused into the CRT pass by the engine,
//              so it has no boundary of its own and is reported as 0 (kReductionFused)
//   crt        CRT reconstruction + inverse scaling + alpha/beta
// The engine is called directly with stage events, on a private handle and a workspace of our
// own, as src/api/dgemm_api.cpp calls it. This is a separate run from the timed one, so the
// timed run carries no instrumentation.
inline constexpr bool kReductionFused = true;

struct stage_split {
  bool measured = false;
  double prep = kNaN, gemm = kNaN, reduction = kNaN, crt = kNaN;
  std::string error;
};

stage_split measure_stages(const shape& sh, const input_set& in, int moduli, scaling_mode mode,
                           int8_gemm_backend gemm, int reps, cudaStream_t stream,
                           cublasHandle_t private_handle);

}  // namespace ozdgemm::bench
