// One call straight into the engine (enqueue_emulation) for the GPU tests that compare ways of
// issuing the INT8 GEMMs: op(A) = A (m x k), op(B) = B^T (B stored n x k), s = 16, alpha = 1,
// beta = 0, on the default stream, with a workspace sized for the backend.
#pragma once

#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/emulate.hpp"
#include "gpu_fixture.hpp"

namespace ozdgemm::gpu_test {

inline std::vector<double> run_engine(cublasHandle_t h, detail::int8_gemm_backend backend,
                                      detail::gemm_batching batching, detail::scaling_mode mode,
                                      int64_t m, int64_t n, int64_t k,
                                      const std::vector<double>& ha,
                                      const std::vector<double>& hb) {
  using namespace ozdgemm::detail;
  device_buffer<double> a(ha), b(hb), c(m * n);
  device_buffer<char> ws(
      emulation_workspace_bytes(m, n, k, moduli_setting::fixed(16), mode, backend));
  EXPECT_NE(ws.ptr, nullptr);
  const gemm_problem p{
      m, n, k, operand_a(op_kind::n, a.ptr, m), operand_b(op_kind::t, b.ptr, n), c.ptr, m};
  device_gemm call{p,
                   scalar_arg{nullptr, 1.0},
                   scalar_arg{nullptr, 0.0},
                   moduli_setting::fixed(16),
                   mode,
                   nullptr,
                   h,
                   nullptr,
                   batching};
  call.int8_gemm = backend;
  EXPECT_EQ(enqueue_emulation(call, ws.ptr), 16);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return c.to_host();
}

}  // namespace ozdgemm::gpu_test
