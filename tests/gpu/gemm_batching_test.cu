// Both ways of issuing the modulus GEMMs (one strided batch, or one call per modulus) give
// the same bits: the engine switches between them by size, so each must be exact.
#include <cmath>
#include <random>
#include <vector>

#include "engine/emulate.hpp"
#include "gpu_fixture.hpp"

namespace {

using namespace ozdgemm::detail;

std::vector<double> run(cublasHandle_t h, gemm_batching batching, scaling_mode mode, int64_t m,
                        int64_t n, int64_t k, const std::vector<double>& ha,
                        const std::vector<double>& hb) {
  device_buffer<double> a(ha), b(hb), c(m * n);
  void* ws = nullptr;
  EXPECT_EQ(cudaMalloc(&ws, emulation_workspace_bytes(m, n, k, moduli_setting::fixed(16), mode)),
            cudaSuccess);
  const gemm_problem p{m, n, k, operand_a(op_kind::n, a.ptr, m), operand_b(op_kind::t, b.ptr, n),
                       c.ptr, m};
  device_gemm call{p,
                   scalar_arg{nullptr, 1.0},
                   scalar_arg{nullptr, 0.0},
                   moduli_setting::fixed(16),
                   mode,
                   nullptr,
                   h,
                   nullptr,
                   batching};
  enqueue_emulation(call, ws);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(ws);
  return c.to_host();
}

// The suite of this file: GpuTest (skips without a device, one cuBLAS handle per test).
class GemmBatching : public GpuTest {};

TEST_F(GemmBatching, BatchedAndLoopedModulusGemmsAgreeBitwise) {
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  std::mt19937_64 g(5);
  std::normal_distribution<double> nd;
  for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
    for (const auto& shape : {std::vector<int64_t>{300, 200, 500},
                              std::vector<int64_t>{5, 3, 131056 + 77}}) {  // two k-blocks
      const int64_t m = shape[0], n = shape[1], k = shape[2];
      std::vector<double> ha(m * k), hb(n * k);
      for (double& x : ha) x = nd(g) * std::exp(2.0 * nd(g));
      for (double& x : hb) x = nd(g);
      const auto batched = run(handle_, gemm_batching::batched, mode, m, n, k, ha, hb);
      const auto looped = run(handle_, gemm_batching::looped, mode, m, n, k, ha, hb);
      EXPECT_EQ(batched, looped) << m << "x" << n << "x" << k;
      int64_t nonzero = 0;
      for (double x : batched) nonzero += x != 0.0;
      EXPECT_GT(nonzero, m * n / 2) << "the comparison must be over real results";
    }
}

}  // namespace
