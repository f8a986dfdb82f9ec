// The engine's INT8 GEMM stage: C = A^T B (+ C) with INT8 inputs and exact INT32 sums, over
// the moduli (one strided-batched call, or one call per modulus) and the k-blocks.
//
// Two backends compute the same integers (integer GEMM with INT32 accumulation is exact, and
// the engine's k-blocks keep every sum below 2^31, core/gemm_problem.hpp), so they give the
// same bits and the choice is about speed only:
//   lt      cublasLtMatmul with an algorithm chosen once per (device, GEMM shape) and cached,
//           and a workspace carved from the engine's own (engine/int8_gemm_lt.hpp). The
//           default: measured faster on the H200 (GEMM stage 10-14% shorter at 16384^3, equal
//           or shorter at the sweep's other shapes, bench/results/probes/README.md)
//           except narrow outputs with very long k (2048 x 2048 x 262144: 1.5x slower, there
//           cublas is faster); an earlier attempt with no workspace had measured slower
//           (bench/results/probes/README.md). Since that sweep, for large GEMMs
//           (those whose cuBLASLt algorithm it times) the lt backend times the cublas backend's
//           cublasGemmEx call alongside its candidates and keeps the faster, so a shape where
//           cublasGemmEx wins runs on it;
//   cublas  cublasGemmStridedBatchedEx with CUBLAS_GEMM_DEFAULT (OZDGEMM_INT8_GEMM=cublas).
// A failing cuBLASLt call falls back to the cublas backend for that GEMM, with a log line.
// Both backends run on the same private handle and stream.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/int8_gemm_lt.hpp"

namespace ozdgemm::detail {

// `setting`: whatever the process-wide setting says (int8_gemm_setting()).
enum class int8_gemm_backend { setting = 0, cublas = 1, lt = 2 };

// "cublas" or "lt" (exact, lower case); false, leaving *out alone, for anything else
// (null included). Pure.
bool parse_int8_gemm_backend(const char* s, int8_gemm_backend* out) noexcept;

// "setting", "cublas" or "lt".
const char* to_string(int8_gemm_backend b) noexcept;

// The value of OZDGEMM_INT8_GEMM the process uses: `value` parsed, or lt when it is null;
// an invalid value gets one warning naming the variable and the value, then lt. The
// reader behind int8_gemm_setting(); separate so that the mapping can be unit-tested.
int8_gemm_backend int8_gemm_from_env_value(const char* value) noexcept;

// The process-wide backend: the one set_int8_gemm_setting() chose, else OZDGEMM_INT8_GEMM read
// once on first use (common/env.hpp; dispatch/settings.cpp reads it through here too, so an
// invalid value is warned about once). Never `setting`.
int8_gemm_backend int8_gemm_setting() noexcept;

// Overrides the environment for the rest of the process (`setting`: back to the environment).
// For the benchmark and the tests, which compare both backends in one process. Calls already
// enqueueing keep the backend they started with (they resolve it once, see below).
void set_int8_gemm_setting(int8_gemm_backend b) noexcept;

// `b`, or the process-wide backend for `setting`.
inline int8_gemm_backend resolve_int8_gemm(int8_gemm_backend b) noexcept {
  return b == int8_gemm_backend::setting ? int8_gemm_setting() : b;
}

// Workspace the lt backend adds to a call's workspace for its m_pad x n_pad products (0 for
// cublas, which uses cuBLAS's own). A function of the padded product only, so every GEMM of a
// call, the accurate mode's bound GEMMs included, fits in it.
size_t int8_gemm_workspace_bytes(int8_gemm_backend resolved, int64_t m_pad,
                                 int64_t n_pad) noexcept;

// Where one call's INT8 GEMMs run.
struct int8_gemm_target {
  cublasHandle_t handle;     // the private handle, bound to `stream`
  cudaStream_t stream;
  int8_gemm_backend backend;  // resolved: cublas or lt
  void* lt_workspace;         // lt: int8_gemm_workspace_bytes() bytes, 256-byte aligned
  size_t lt_workspace_bytes;
  lt_use use = lt_use::run;  // plan_only: plans made, nothing run, with either backend
};

// INT8 x INT8 -> INT32, C = A^T B (+ C when accumulate), m_rows x n_pad per plane, over
// `batch` planes (A planes a_stride bytes apart, B planes n_pad x k_pad, C planes
// m_rows x n_pad with leading dimension m_rows), for the k-block [k0, k0 + klen), on
// t.stream. a_stride is m_rows k_pad for whole planes, more for a block of rows of them (the
// engine's row blocks). All leading dimensions and offsets are multiples of 16 (tensor-core
// alignment). Throws cublas_error / cuda_error on failure.
void int8_gemm(const int8_gemm_target& t, int64_t m_rows, int64_t n_pad, int64_t k0, int64_t klen,
               int64_t k_pad, const int8_t* a, int64_t a_stride, const int8_t* b, int32_t* c,
               int batch, bool accumulate);

// The same on any views of the planes (`shape`: A stored k x m with leading dimension lda,
// B k x n with ldb, C m x n with ldc, column-major; pointers at the views' first elements): the
// Karatsuba form's products of halves of the planes (engine/pipeline.cpp). Leading dimensions,
// strides and offsets must be multiples of 16.
void int8_gemm_views(const int8_gemm_target& t, const lt_gemm_shape& shape, const int8_t* a,
                     const int8_t* b, int32_t* c, bool accumulate);

}  // namespace ozdgemm::detail
