// The route of one intercepted call: the emulation or the native routine. The one place that
// decides, for device calls (the cuBLAS hooks) and host calls (the host path) alike; the
// caller logs the outcome once (call_log.hpp).
#pragma once

#include <cstdint>

#include "dispatch/performance_model.hpp"
#include "dispatch/settings.hpp"

namespace ozdgemm::detail {

struct route {
  bool emulate;
  const char* reason;    // static string, for the decision line and the exit summary
  prediction predicted;  // zero when the call was blocked
};

enum class call_site { device, host };

// blocked: why emulation cannot serve this call at all (no CUDA in this process, a handle
// state the emulation does not serve, a GPU it cannot run on, no GPU for host calls), or null.
// Otherwise the mode rules: native mode, emulate mode, and in auto mode the size floor
// (OZDGEMM_MIN_DIM) and the performance model with its margin (OZDGEMM_AUTO_MARGIN), for the
// site's model with the rates of the GPU that would run the call.
// native_work scales the model's native time, for a native routine that does less work than
// the real GEMM priced (cublasZgemm3m); karatsuba (device calls): the priced problem runs in
// the Karatsuba form (predict_device).
route decide_route(const config& cfg, call_site site, const char* blocked, int64_t m, int64_t n,
                   int64_t k, bool reads_c, const gpu_rates& rates, double native_work = 1.0,
                   bool karatsuba = false);

// Whether auto mode's model decides this call (so that its GPU's rates are worth measuring).
bool consults_model(const config& cfg, int64_t m, int64_t n, int64_t k);

}  // namespace ozdgemm::detail
