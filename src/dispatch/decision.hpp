// Per-call choice between the emulation and the native routine, and the performance model
// auto mode uses. The model is calibrated on the H200 (bench/results, docs/performance_model.md).
#pragma once

#include <cstdint>

#include "core/scaling_rules.hpp"
#include "dispatch/settings.hpp"

namespace ozdgemm::detail {

struct prediction {
  double native_ms;
  double emulated_ms;
};

// Device-memory call: native cublasDgemm against the emulation on the same GPU.
// num_moduli == kAutoModuli (OZDGEMM_MODULI=auto): the count is not known before the call; the
// model assumes kAutoModuliEstimate (config.hpp) plus the choice's stream synchronisation;
// kCertifiedModuli: that plus the certification's band GEMMs and passes.
prediction predict_device(int64_t m, int64_t n, int64_t k, int num_moduli, scaling_mode mode,
                          bool reads_c);

// Host-memory call: the CPU BLAS against PCIe transfers plus the emulation.
prediction predict_host(int64_t m, int64_t n, int64_t k, int num_moduli, scaling_mode mode,
                        bool reads_c);

struct decision {
  bool emulate;
  const char* reason;  // static string, for logs and the exit summary
  prediction predicted;
};

// The mode rules that do not need a GPU: native mode, emulate mode, auto mode's size floor and
// the model. Callers check "can emulation serve this call at all" before.
decision decide(const config& cfg, const prediction& p, int64_t m, int64_t n, int64_t k);

}  // namespace ozdgemm::detail
