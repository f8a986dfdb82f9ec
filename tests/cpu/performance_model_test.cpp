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

// The certified count (the default) against auto on the H200, as measured in one run
// (bench/results/default/README.md, run 5; fast scaling, phi = 0.5, both s = 15): certified took
// 3.03 ms against auto's 2.38 at 4096^3, 127.4 against 115.9 ms at 16384^3. The model's extra cost
// of certifying must land within 25% of the measured difference.
TEST(PerformanceModel, CertifiedCostMatchesTheH200Measurement) {
  const detail::gpu_rates r = h200_prior();
  const struct {
    int64_t n;
    double measured_ms;
  } cases[] = {{4096, 3.03 - 2.38}, {16384, 127.41 - 115.87}};
  for (const auto& c : cases) {
    const double cert = detail::predict_device(c.n, c.n, c.n, detail::moduli_setting::certified(),
                                               detail::scaling_mode::fast, false, r)
                            .emulated_ms;
    const double aut = detail::predict_device(c.n, c.n, c.n, detail::moduli_setting::automatic(),
                                              detail::scaling_mode::fast, false, r)
                           .emulated_ms;
    EXPECT_NEAR((cert - aut) / c.measured_ms, 1.0, 0.25)
        << c.n << " ratio " << (cert - aut) / c.measured_ms;
  }
}

}  // namespace
}  // namespace ozdgemm::test
