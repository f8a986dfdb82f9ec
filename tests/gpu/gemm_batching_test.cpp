// Both ways of issuing the modulus GEMMs (one strided batch, or one call per modulus) give
// the same bits: the engine switches between them by size, so each must be exact.
#include <cmath>
#include <random>
#include <vector>

#include "engine/emulate.hpp"
#include "engine_product.hpp"
#include "gpu_fixture.hpp"

namespace {

using namespace ozdgemm::detail;

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
      const auto batched = ozdgemm::gpu_test::run_engine(
          handle_, int8_gemm_backend::setting, gemm_batching::batched, mode, m, n, k, ha, hb);
      const auto looped = ozdgemm::gpu_test::run_engine(
          handle_, int8_gemm_backend::setting, gemm_batching::looped, mode, m, n, k, ha, hb);
      EXPECT_EQ(batched, looped) << m << "x" << n << "x" << k;
      int64_t nonzero = 0;
      for (double x : batched) nonzero += x != 0.0;
      EXPECT_GT(nonzero, m * n / 2) << "the comparison must be over real results";
    }
}

}  // namespace
