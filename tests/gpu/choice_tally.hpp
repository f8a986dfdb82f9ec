// The GPU's tally of certified counts chosen on the GPU (engine/gpu_choice.hpp), for the tests
// that check which s such a call ran: the host never learns it otherwise.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/moduli.hpp"
#include "engine/gpu_choice.hpp"

namespace ozdgemm::test {

inline constexpr int kTallySlots = detail::kMaxModuli + 1;

// The tally of chosen counts so far (every context of the process), after the device is idle;
// slot 0 counts the calls that no s served.
inline std::vector<unsigned long long> tally_now() {
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned long long t[kTallySlots];
  detail::read_gpu_choice_tally(t);
  return std::vector<unsigned long long>(t, t + kTallySlots);
}

// The one s whose count grew by one between two tallies (-1: none, several, or more than one).
inline int grown_slot(const std::vector<unsigned long long>& before,
                      const std::vector<unsigned long long>& after) {
  int slot = -1, grown = 0;
  for (int s = 0; s < kTallySlots; ++s)
    if (after[s] != before[s]) {
      grown += static_cast<int>(after[s] - before[s]);
      slot = s;
    }
  return grown == 1 ? slot : -1;
}

}  // namespace ozdgemm::test
