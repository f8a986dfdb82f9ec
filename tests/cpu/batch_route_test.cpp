// Auto mode's price of a cuBLAS batch served one GEMM per matrix (dispatch/decision.hpp,
// batch_route): the native batched routine pays its fixed cost once, the emulation its own per
// matrix; other routes pass unchanged. And the predictions for the batched shapes of
// bench/results/batched on the GPUs of the published table, which docs/performance.md quotes
// (the table there must be the model's).
#include <gtest/gtest.h>

#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>

#include "cpu/cpu_test_util.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/gpu_rates.hpp"
#include "dispatch/performance_model.hpp"
#include "engine/complex_gemm.hpp"

namespace ozdgemm::test {
namespace {

detail::route model_route(double native_ms, double emulated_ms) {
  return {true, "auto: model predicts emulation faster", {native_ms, emulated_ms}};
}

TEST(BatchRoute, OnlyAutoModesPricedEmulationIsPricedAgain) {
  detail::config cfg{};
  const detail::route blocked{false, "no CUDA device", {0.0, 0.0}};
  EXPECT_STREQ(detail::batch_route(cfg, blocked, 64).reason, "no CUDA device");
  const detail::route native{false, "auto: model predicts native faster", {1.0, 2.0}};
  EXPECT_FALSE(detail::batch_route(cfg, native, 64).emulate);
  EXPECT_EQ(detail::batch_route(cfg, native, 64).predicted.native_ms, 1.0);
  // One matrix: the single call's route and times.
  const detail::route one = detail::batch_route(cfg, model_route(0.020, 0.015), 1);
  EXPECT_TRUE(one.emulate);
  EXPECT_EQ(one.predicted.emulated_ms, 0.015);
  // A trial of the choice (emulated although not priced faster) runs as the single call would.
  const detail::route trial{true, "auto: trying the choice", {0.020, 0.030}};
  EXPECT_TRUE(detail::batch_route(cfg, trial, 64).emulate);
  EXPECT_EQ(detail::batch_route(cfg, trial, 64).predicted.emulated_ms, 0.030);
  // Forced emulation is not priced.
  cfg.mode = detail::run_mode::emulate;
  const detail::route forced{true, "OZDGEMM_MODE=emulate", {0.020, 1.0}};
  EXPECT_TRUE(detail::batch_route(cfg, forced, 64).emulate);
}

TEST(BatchRoute, NativePaysItsFixedCostOnceTheEmulationPerMatrix) {
  const detail::config cfg{};
  const double latency = detail::native_latency_ms();
  ASSERT_GT(latency, 0.0);
  // Small matrices: one emulated matrix beats one native call (which is half fixed cost), but
  // the native batch runs its 64 matrices for one fixed cost.
  const detail::route small = model_route(2 * latency, 1.5 * latency);
  ASSERT_LT(small.predicted.emulated_ms, (1.0 - cfg.auto_margin) * small.predicted.native_ms);
  const detail::route b = detail::batch_route(cfg, small, 64);
  EXPECT_FALSE(b.emulate);
  EXPECT_NE(std::string(b.reason).find("batched routine"), std::string::npos) << b.reason;
  EXPECT_DOUBLE_EQ(b.predicted.native_ms, latency + 64 * latency);
  EXPECT_DOUBLE_EQ(b.predicted.emulated_ms, 64 * 1.5 * latency);
  // Large matrices: the fixed cost does not matter; the batch is emulated, priced as a whole.
  const detail::route large = model_route(10.0, 7.0);
  const detail::route l = detail::batch_route(cfg, large, 4);
  EXPECT_TRUE(l.emulate);
  EXPECT_STREQ(l.reason, large.reason);
  EXPECT_DOUBLE_EQ(l.predicted.native_ms, latency + 4 * (10.0 - latency));
  EXPECT_DOUBLE_EQ(l.predicted.emulated_ms, 28.0);
}

// The batches of bench/results/batched: count x n^3.
struct batch_shape {
  int64_t count, n;
};
constexpr batch_shape kBatchShapes[] = {{64, 512}, {32, 1024}, {16, 2048}, {8, 4096}, {4, 8192}};

// The route of a batch of the shape at the defaults (auto mode, the certified count priced at
// kAutoModuliEstimate, no history), real or complex (as device_gemm.cpp prices a ZGEMM).
detail::route batched_device_route(const detail::gpu_rates& rates, batch_shape b, bool complex) {
  const detail::config cfg{};
  const int64_t n = b.n;
  const detail::route single =
      complex ? detail::decide_route(
                    cfg, detail::call_site::device, nullptr, n, 2 * n, 2 * n, true, rates,
                    detail::kZgemmNativeWork,
                    detail::uses_karatsuba(detail::complex_form::setting, cfg.scaling, n, n, n))
              : detail::decide_route(cfg, detail::call_site::device, nullptr, n, n, n, true, rates);
  return detail::batch_route(cfg, single, b.count);
}

std::string batch_cell(const detail::route& r) {
  if (!r.emulate) return "native";
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << r.predicted.native_ms / r.predicted.emulated_ms << "x";
  return s.str();
}

// docs/performance.md's table: per GPU and batch, the predicted speed-up over the native batched
// routine at the defaults, real / complex.
std::string batch_table() {
  std::ostringstream t;
  t << "| GPU |";
  for (const batch_shape& b : kBatchShapes) t << " " << b.count << " x " << b.n << " |";
  t << "\n|---|";
  for (size_t i = 0; i < std::size(kBatchShapes); ++i) t << "---|";
  t << "\n";
  for (const char* gpu : kTableGpus) {
    const detail::gpu_rates rates = detail::prior_rates(published_gpu(gpu));
    t << "| " << gpu << " |";
    for (const batch_shape& b : kBatchShapes)
      t << " " << batch_cell(batched_device_route(rates, b, false)) << " / "
        << batch_cell(batched_device_route(rates, b, true)) << " |";
    t << "\n";
  }
  return t.str();
}

// Where FP64 is weak every batch of the table is emulated, and gains; on the H200 the small
// batches stay native. No batch the model emulates is predicted slower than native.
TEST(BatchRoute, PredictionsOnPublishedGpus) {
  for (const char* weak : {"GeForce RTX 4090", "H20", "RTX PRO 6000 Blackwell"}) {
    const detail::gpu_rates rates = detail::prior_rates(published_gpu(weak));
    for (const batch_shape& b : kBatchShapes)
      for (bool complex : {false, true}) {
        const detail::route r = batched_device_route(rates, b, complex);
        EXPECT_TRUE(r.emulate) << weak << " " << b.count << " x " << b.n;
        EXPECT_GT(r.predicted.native_ms, 1.2 * r.predicted.emulated_ms)
            << weak << " " << b.count << " x " << b.n;
      }
  }
  const detail::gpu_rates h200 = detail::prior_rates(published_gpu("H200"));
  EXPECT_FALSE(batched_device_route(h200, kBatchShapes[0], false).emulate);
  EXPECT_FALSE(batched_device_route(h200, kBatchShapes[0], true).emulate);
  const detail::published_table all = detail::published_gpus();
  for (const detail::gpu_spec* g = all.begin; g != all.end; ++g)
    for (const batch_shape& b : kBatchShapes)
      for (bool complex : {false, true}) {
        const detail::route r = batched_device_route(detail::prior_rates(*g), b, complex);
        if (r.emulate) {
          EXPECT_LT(r.predicted.emulated_ms, r.predicted.native_ms) << g->label;
        }
      }
}

TEST(BatchRoute, TheDocsTableIsTheModels) {
  EXPECT_TRUE(page_holds("docs/performance.md", batch_table()));
}

}  // namespace
}  // namespace ozdgemm::test
