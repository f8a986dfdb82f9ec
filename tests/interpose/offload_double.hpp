// What the two test doubles of try_host_offload (fake_host_offload.cpp,
// reference_host_offload.cpp) share besides their route (offload_double.cpp): the call's own
// shape for its decision line, the trivial calls the real host path declines, an embedded call's
// build, and the one decision line.
#pragma once

#include <chrono>
#include <cstdint>

#include "dispatch/call_log.hpp"
#include "host_path/offload.hpp"

namespace ozdgemm::detail {

struct double_call {
  const char* entry = nullptr;
  int64_t m = 0, n = 0, k = 0;  // the caller's shape (an embedded call's, not its embedding's)
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  host_gemm built{};             // an embedded call's real embedding
  const host_gemm* g = nullptr;  // what to multiply: `built`, or the priced call itself

  void log(outcome result, const char* why, int moduli = 0) const {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log_call({entry, m, n, k, result, why, moduli, 0, 0, seconds});
  }
};

// Fills `c` for the call; false when it is declined as the real host path declines it (a trivial
// call: native) or its embedding cannot be built (a fallback), with its decision line logged.
inline bool begin_double_call(const host_gemm& priced, const char* entry,
                              host_embedded_call* embedded, double_call* c) {
  c->entry = entry;
  c->m = embedded != nullptr ? embedded->m : priced.m;
  c->n = embedded != nullptr ? embedded->n : priced.n;
  c->k = embedded != nullptr ? embedded->k : priced.k;
  if (priced.m == 0 || priced.n == 0 || priced.k == 0 || priced.alpha == 0.0) {
    c->log(outcome::native, "trivial call");
    return false;
  }
  c->g = &priced;
  if (embedded != nullptr) {
    try {
      c->built = embedded->build();
    } catch (...) {
      c->log(outcome::fallback, "build failed");
      return false;
    }
    c->g = &c->built;
  }
  return true;
}

}  // namespace ozdgemm::detail
