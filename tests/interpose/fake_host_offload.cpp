// Test double for try_host_offload (src/host_path/offload.cpp), linked into
// libozdgemm_fake_offload.so with the real BLAS hooks in place of the GPU path. It "emulates"
// every non-trivial call with a plain column-major loop over the host_gemm it receives, so the
// hooks' translation (row-major swap, transposes, leading dimensions) is checked by the client
// programs' own references on a machine without a GPU, where the real host path always
// declines. Trivial calls are declined as the real one declines them. An embedded call (ZGEMM,
// host_path/complex_offload.cpp, linked in too) is built, multiplied the same way and finished,
// so its packing and epilogue are checked as well.
#include "offload_double.hpp"

namespace ozdgemm::detail {

host_offload_result try_host_offload(const host_gemm& priced, const char* entry,
                                     host_embedded_call* embedded) noexcept {
  double_call call;
  if (!begin_double_call(priced, entry, embedded, &call)) return {};
  const host_gemm& g = *call.g;
  for (int64_t j = 0; j < g.n; ++j)
    for (int64_t i = 0; i < g.m; ++i) {
      long double s = 0;
      for (int64_t l = 0; l < g.k; ++l) {
        const double a = g.opa == op_kind::n ? g.a[l * g.lda + i] : g.a[i * g.lda + l];
        const double b = g.opb == op_kind::n ? g.b[j * g.ldb + l] : g.b[l * g.ldb + j];
        s += static_cast<long double>(a) * b;
      }
      double& c = g.c[j * g.ldc + i];
      const long double old = g.beta == 0.0 ? 0.0L : static_cast<long double>(g.beta) * c;
      c = static_cast<double>(g.alpha * s + old);
    }
  if (embedded != nullptr) embedded->finish();
  call.log(outcome::emulated, "fake host offload (test double)");
  host_offload_result r;
  r.served = true;
  return r;
}

}  // namespace ozdgemm::detail
