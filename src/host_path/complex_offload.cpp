#include "host_path/complex_offload.hpp"

#include "reference/complex_reference.hpp"

namespace ozdgemm::detail {
namespace {

class embedded_zgemm final : public host_embedded_call {
 public:
  embedded_zgemm(const complex_problem& p, complex_value alpha, complex_value beta)
      : p_(p), alpha_(alpha), beta_(beta) {
    m = p.m;
    n = p.n;
    k = p.k;
  }

  host_gemm build() override {
    e_ = embed_on_host(p_);
    const gemm_problem& r = e_.real;
    return host_gemm{op_kind::n, op_kind::n, r.m, r.n, r.k, 1.0, e_.a_pack.data(), r.m,
                     e_.b_pack.data(), r.k, 0.0, e_.t.data(), r.m};
  }

  void finish() noexcept override { complex_epilogue_on_host(p_, e_.t.data(), alpha_, beta_); }

 private:
  complex_problem p_;
  complex_value alpha_, beta_;
  host_embedding e_;
};

}  // namespace

host_offload_result try_host_zgemm_offload(const complex_problem& p, complex_value alpha,
                                           complex_value beta, const char* entry) noexcept {
  try {
    embedded_zgemm call(p, alpha, beta);
    // The shape the model prices: the real m x 2n x 2k problem (native ZGEMM's 8 m n k flops
    // are the same count). alpha == 0 and k == 0 are trivial calls, which stay on the CPU BLAS.
    host_gemm priced{};
    priced.opa = priced.opb = op_kind::n;
    priced.m = p.m;
    priced.n = 2 * p.n;
    priced.k = 2 * p.k;
    priced.alpha = is_zero(alpha) ? 0.0 : 1.0;
    priced.lda = p.m;
    priced.ldb = 2 * p.k;
    priced.beta = is_zero(beta) ? 0.0 : 1.0;
    priced.ldc = p.m;
    return try_host_offload(priced, entry, &call);
  } catch (...) {
    return host_offload_result{};
  }
}

}  // namespace ozdgemm::detail
