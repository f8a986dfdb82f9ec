#include "engine/int8_gemm.hpp"

#include <atomic>
#include <cstring>

#include "common/cublas_api.hpp"
#include "common/env.hpp"
#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "common/logging.hpp"
#include "engine/int8_gemm_lt.hpp"

namespace ozdgemm::detail {
namespace {

// The lt backend's workspace: the 64 MiB the probe allowed where its gains were measured
// (bench/results/probes/README.md: from 4096^3 up, where one INT32 product
// plane is 64 MiB or more), and one product plane's size below that, so that small calls do
// not reserve 64 MiB for nothing. No floor: the workspace then adds at most 1/s to the s
// product planes the call holds anyway, so a small OZDGEMM_MAX_WORKSPACE is not taken up by it
// (a 4 MiB floor sent a 16^3 call native under a 4 MiB cap: gpu_workspace_cap at c035d26).
// cuBLASLt's heuristic then offers only algorithms that fit the workspace given.
constexpr size_t kLtWorkspaceMax = size_t{64} << 20;

std::atomic<int> forced{static_cast<int>(int8_gemm_backend::setting)};

int8_gemm_backend from_env() noexcept {
  static const int8_gemm_backend b = int8_gemm_from_env_value(setting_env("OZDGEMM_INT8_GEMM"));
  return b;
}

}  // namespace

bool parse_int8_gemm_backend(const char* s, int8_gemm_backend* out) noexcept {
  if (s == nullptr) return false;
  if (std::strcmp(s, "cublas") == 0) {
    *out = int8_gemm_backend::cublas;
    return true;
  }
  if (std::strcmp(s, "lt") == 0) {
    *out = int8_gemm_backend::lt;
    return true;
  }
  return false;
}

const char* to_string(int8_gemm_backend b) noexcept {
  switch (b) {
    case int8_gemm_backend::setting: return "setting";
    case int8_gemm_backend::cublas: return "cublas";
    case int8_gemm_backend::lt: return "lt";
  }
  return "?";
}

int8_gemm_backend int8_gemm_from_env_value(const char* value) noexcept {
  int8_gemm_backend b = int8_gemm_backend::lt;
  if (value == nullptr || parse_int8_gemm_backend(value, &b)) return b;
  try {  // the wording of dispatch/settings.cpp's other settings
    logger().warn("OZDGEMM_INT8_GEMM='{}' is invalid (expected cublas|lt); using lt", value);
  } catch (...) {
  }
  return int8_gemm_backend::lt;
}

int8_gemm_backend int8_gemm_setting() noexcept {
  const auto f = static_cast<int8_gemm_backend>(forced.load(std::memory_order_relaxed));
  return f != int8_gemm_backend::setting ? f : from_env();
}

void set_int8_gemm_setting(int8_gemm_backend b) noexcept {
  forced.store(static_cast<int>(b), std::memory_order_relaxed);
}

size_t int8_gemm_workspace_bytes(int8_gemm_backend resolved, int64_t m_pad,
                                 int64_t n_pad) noexcept {
  if (resolved != int8_gemm_backend::lt) return 0;
  // In double: m_pad n_pad may not fit in 64 bits; a multiple of 1024 when it matters (both
  // are multiples of 16), so the result keeps the workspace's 256-byte alignment.
  const double plane = 4.0 * static_cast<double>(m_pad) * static_cast<double>(n_pad);
  if (plane >= static_cast<double>(kLtWorkspaceMax)) return kLtWorkspaceMax;
  return static_cast<size_t>(plane);
}

void int8_gemm_views(const int8_gemm_target& t, const lt_gemm_shape& v, const int8_t* a,
                     const int8_t* b, int32_t* c, bool accumulate) {
  static const int32_t one = 1, zero = 0;
  if (t.use == lt_use::plan_only) {  // the cublas backend has no plans
    if (t.backend == int8_gemm_backend::lt)
      (void)lt_int8_gemm(t.handle, t.stream, v, a, b, c, accumulate, t.lt_workspace,
                         t.lt_workspace_bytes, t.use);
    return;
  }
  // Test-only (common/fault_injection.hpp). Not while a graph body is captured: nothing runs
  // there, and the bodies of the choice on the GPU get their fault at launch (engine/graph_choice.cpp).
  if (t.use != lt_use::in_graph_body && inject_fault(fault::cublas))
    throw cublas_error(CUBLAS_STATUS_EXECUTION_FAILED, "injected fault: INT8 GEMM failed");
  if (t.backend == int8_gemm_backend::lt) {
    if (lt_int8_gemm(t.handle, t.stream, v, a, b, c, accumulate, t.lt_workspace,
                     t.lt_workspace_bytes, t.use))
      return;
    // Not served (a failure, logged there, or a shape whose timing chose cublasGemmEx);
    // nothing that changes C was enqueued, beyond timing's C = A^T B: cublasGemmEx below.
  }
  OZDGEMM_CUBLAS_TRY(cublas_gemm_strided_batched_ex(
      t.handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(v.m), static_cast<int>(v.n),
      static_cast<int>(v.k), &one, a, CUDA_R_8I, static_cast<int>(v.lda), v.stride_a, b, CUDA_R_8I,
      static_cast<int>(v.ldb), v.stride_b, accumulate ? &one : &zero, c, CUDA_R_32I,
      static_cast<int>(v.ldc), v.stride_c, v.batch, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
}

void int8_gemm(const int8_gemm_target& t, int64_t m_rows, int64_t n_pad, int64_t k0, int64_t klen,
               int64_t k_pad, const int8_t* a, int64_t a_stride, const int8_t* b, int32_t* c,
               int batch, bool accumulate) {
  const lt_gemm_shape shape{m_rows, n_pad, klen,     k_pad,         k_pad,
                            m_rows, batch, a_stride, n_pad * k_pad, m_rows * n_pad};
  int8_gemm_views(t, shape, a + k0, b + k0, c, accumulate);
}

}  // namespace ozdgemm::detail
