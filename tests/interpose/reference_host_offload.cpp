// Stand-in for try_host_offload (src/host_path/offload.cpp) on machines without a GPU:
// every non-trivial host call is emulated by the library's CPU reference of the Ozaki
// arithmetic (ozdgemm_dgemm_reference), which is bit-identical to what the GPU computes for the
// same operands and settings. Linked with the real hooks into libozdgemm_reference_offload.so,
// it lets CI run client programs (ScaLAPACK, the netlib testers) with the numbers an emulating
// GPU would produce. Trivial calls are declined as the real host path declines them; an
// embedded call (ZGEMM) is built, run by the reference and finished.
#include "core/moduli_choice.hpp"
#include "dispatch/settings.hpp"
#include "offload_double.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/auto_reference.hpp"

namespace ozdgemm::detail {

host_offload_result try_host_offload(const host_gemm& priced, const char* entry,
                                     host_embedded_call* embedded) noexcept {
  double_call c;
  if (!begin_double_call(priced, entry, embedded, &c)) return {};
  const host_gemm& g = *c.g;
  const config& cfg = settings();
  if (cfg.moduli.chooses_per_call()) {
    // The real host path's choice, at its target.
    const gemm_problem p{g.m, g.n,  g.k, operand_a(g.opa, g.a, g.lda), operand_b(g.opb, g.b, g.ldb),
                         g.c, g.ldc};
    const accuracy_target t = host_call_target(cfg.accuracy, cfg.moduli, embedded != nullptr);
    // No s serving the target: the reference's FP64 product stands in for native's.
    try {
      reference_dgemm_auto(p, g.alpha, g.beta, cfg.scaling, t, cfg.moduli.is_certified());
    } catch (...) {
      c.log(outcome::fallback, "host reference failed");
      return {};
    }
  } else {
    const ozdgemm_status_t st = ozdgemm_dgemm_reference(
        g.opa == op_kind::n ? 'N' : 'T', g.opb == op_kind::n ? 'N' : 'T', g.m, g.n, g.k, g.alpha,
        g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc, api_options(cfg));
    if (st != OZDGEMM_STATUS_SUCCESS) {
      c.log(outcome::fallback, "host reference failed");
      return {};
    }
  }
  if (embedded != nullptr) embedded->finish();
  c.log(outcome::emulated, "host reference (test stand-in for the GPU)", cfg.moduli.count());
  host_offload_result r;
  r.served = true;
  return r;
}

}  // namespace ozdgemm::detail
