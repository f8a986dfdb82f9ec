// The performance model of auto mode: predicted times of the native routine and of the
// emulation for one call. Its rates were measured on an H200 with bench/ozdgemm_bench, and set
// on the side that favours native (docs/performance.md): auto mode must never pick a slower
// emulation. tests/cpu/performance_model_test.cpp holds it to the recorded sweep.
#pragma once

#include <cstdint>

#include "core/moduli_setting.hpp"
#include "core/scaling_rules.hpp"

namespace ozdgemm::detail {

struct prediction {
  double native_ms;
  double emulated_ms;
};

// The moduli count a per-call choice is assumed to need where one must be known before the
// call: conservative, the automatic choice measured on the host is 15-17 for phi <= 2
// (docs/accuracy.md).
inline constexpr int kAutoModuliEstimate = 16;

// Device-memory call: native cublasDgemm against the emulation on the same GPU. A per-call
// choice (auto, certified) costs kAutoModuliEstimate moduli plus the choice's stream
// synchronisation; certified also its band GEMMs and passes.
prediction predict_device(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                          bool reads_c);

// Host-memory call: the CPU BLAS against the transfers over the host link plus the emulation
// as predict_device counts it.
prediction predict_host(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                        bool reads_c);

}  // namespace ozdgemm::detail
