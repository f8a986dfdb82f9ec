// The auto-mode performance model (dispatch/performance_model.cpp, docs/performance.md) with the
// H200's prior rates against the H200 sweep it is calibrated on (support/h200_sweep.hpp).
#include <gtest/gtest.h>

#include "dispatch/gpu_rates.hpp"
#include "support/h200_sweep.hpp"

namespace ozdgemm::test {
namespace {

TEST(PerformanceModel, NeverPicksASlowerEmulationAndTakesLargeGains) {
  // The H200's prior: its published peaks times the efficiencies measured on it.
  detail::gpu_identity id;
  id.name = "NVIDIA H200";
  id.cc_major = 9;
  const detail::gpu_spec* spec = detail::find_published(id);
  ASSERT_NE(spec, nullptr);
  EXPECT_GT(expect_sweep_decisions(detail::prior_rates(*spec)), 0);
}

}  // namespace
}  // namespace ozdgemm::test
