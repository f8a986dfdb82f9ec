// The outcome slots of the speculated certified count (engine/speculation.hpp) on a machine with
// no usable GPU: no slot is reserved, committing or releasing a null slot does nothing, and
// harvesting learns nothing, so a call there runs without teaching the history (and the
// interposer runs it natively). On the GPU: tests/gpu/speculative_count_test.cu.
#include "engine/speculation.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "engine/moduli_history.hpp"

namespace ozdgemm::test {
namespace {

bool device_present() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return ok;
}

TEST(Speculation, WithoutADeviceNoSlotAndNothingLearnt) {
  if (device_present()) GTEST_SKIP() << "a CUDA device is present: the GPU tests cover the slots";
  const detail::history_key key =
      detail::key_of_call(96, 80, 64, false, detail::scaling_mode::fast, 0);
  int* slot = detail::reserve_outcome(key);
  EXPECT_EQ(slot, nullptr);
  detail::commit_outcome(slot, nullptr);  // no slot: nothing recorded, no CUDA call
  detail::release_outcome(slot);
  EXPECT_EQ(detail::harvest_outcomes(), 0);
  const detail::speculation sp = detail::process_moduli_history().speculate(key);
  EXPECT_EQ(sp.launch, 0) << "nothing learnt for the shape";
  EXPECT_FALSE(sp.native);
}

}  // namespace
}  // namespace ozdgemm::test
