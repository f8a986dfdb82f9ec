// The auto-mode performance model (dispatch/performance_model.cpp, docs/performance_model.md)
// with the H200's prior rates against the H200 sweep it is calibrated on (support/h200_sweep.hpp).
#include "dispatch/performance_model.hpp"

#include <gtest/gtest.h>

#include "dispatch/gpu_rates.hpp"
#include "support/h200_sweep.hpp"

namespace ozdgemm::test {
namespace {

TEST(PerformanceModel, NeverPicksASlowerEmulationAndTakesLargeGains) {
  EXPECT_GT(expect_sweep_decisions(h200_prior()), 0);
}

// The certificate's cost as measured on an H100 (bench/results/default/README.md; fast scaling,
// phi = 0.5): the default's kernel time over that of the fixed count it runs, by ncu (run 16:
// 3.047 against 2.749 ms at 4096^3, 17.65 against 16.29 at 8192^3; run 15: 118.11 against
// 109.82 at 16384^3). The model's price of the choice, with the H100's prior rates, must land
// within 25% of each.
TEST(PerformanceModel, CertifiedCostMatchesTheH100Measurement) {
  const detail::gpu_rates r = published_prior("NVIDIA H100 80GB HBM3");
  const struct {
    int64_t n;
    double measured_ms;
  } cases[] = {{4096, 3.047 - 2.749}, {8192, 17.647 - 16.295}, {16384, 118.115 - 109.824}};
  for (const auto& c : cases) {
    const double cert = detail::choice_ms(c.n, c.n, c.n, detail::moduli_setting::certified(), r);
    EXPECT_NEAR(cert / c.measured_ms, 1.0, 0.25) << c.n << " model " << cert << " ms";
  }
}

}  // namespace
}  // namespace ozdgemm::test
