// Stand-in for try_host_offload (src/host_path/offload.cpp) on machines without a GPU:
// every non-trivial host call is emulated by the library's CPU reference of the Ozaki
// arithmetic (ozdgemm_dgemm_reference), which is bit-identical to what the GPU computes for the
// same operands and settings. Linked with the real hooks into libozdgemm_reference_offload.so,
// it lets CI run client programs (ScaLAPACK, the netlib testers) with the numbers an emulating
// GPU would produce. Trivial calls are declined as the real host path declines them; an
// embedded call (ZGEMM) is built, run by the reference and finished.
#include <chrono>

#include "dispatch/call_log.hpp"
#include "dispatch/settings.hpp"
#include "host_path/offload.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {

host_offload_result try_host_offload(const host_gemm& priced, const char* entry,
                                     host_embedded_call* embedded) noexcept {
  const auto t0 = std::chrono::steady_clock::now();
  // The call's own shape in the log (an embedded call's host_gemm is its real embedding).
  const int64_t lm = embedded != nullptr ? embedded->m : priced.m;
  const int64_t ln = embedded != nullptr ? embedded->n : priced.n;
  const int64_t lk = embedded != nullptr ? embedded->k : priced.k;
  if (priced.m == 0 || priced.n == 0 || priced.k == 0 || priced.alpha == 0.0) {
    log_call({entry, lm, ln, lk, outcome::native, "trivial call", 0, 0, 0, 0});
    return {};
  }
  host_gemm built{};
  try {
    if (embedded != nullptr) built = embedded->build();
  } catch (...) {
    log_call({entry, lm, ln, lk, outcome::fallback, "build failed", 0, 0, 0, 0});
    return {};
  }
  const host_gemm& g = embedded != nullptr ? built : priced;
  const config& cfg = settings();
  const ozdgemm_options_t opts = api_options(cfg);
  const ozdgemm_status_t st =
      ozdgemm_dgemm_reference(g.opa == op_kind::n ? 'N' : 'T', g.opb == op_kind::n ? 'N' : 'T', g.m,
                              g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc, opts);
  if (st == OZDGEMM_STATUS_SUCCESS && embedded != nullptr) embedded->finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (st != OZDGEMM_STATUS_SUCCESS) {
    log_call({entry, lm, ln, lk, outcome::fallback, "host reference failed", 0, 0, 0, seconds});
    return {};
  }
  log_call({entry, lm, ln, lk, outcome::emulated, "host reference (test stand-in for the GPU)",
            cfg.moduli.count(), 0, 0, seconds});
  host_offload_result r;
  r.served = true;
  return r;
}

}  // namespace ozdgemm::detail
