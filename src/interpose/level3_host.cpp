#include "interpose/level3_host.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/logging.hpp"
#include "core/complex_embedding.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/settings.hpp"
#include "host_path/complex_offload.hpp"
#include "host_path/offload.hpp"
#include "interpose/blas_calls.hpp"
#include "interpose/cpu_blas.hpp"
#include "interpose/level3_model.hpp"
#include "level3/blocked.hpp"

namespace ozdgemm::detail {
namespace {

using zd = std::complex<double>;

char uplo_char(uplo_kind u) { return u == uplo_kind::lower ? 'L' : 'U'; }
char side_char(side_kind s) { return s == side_kind::left ? 'L' : 'R'; }
char diag_char(diag_kind d) { return d == diag_kind::unit ? 'U' : 'N'; }
char trans_char(trans_kind t) { return t == trans_kind::n ? 'N' : t == trans_kind::t ? 'T' : 'C'; }
op_kind to_op(trans_kind t) { return t == trans_kind::n ? op_kind::n : op_kind::t; }

// The routine that runs a call's diagonal blocks, without its family's decoration.
template <class T>
const char* routine_name(const rank_k_call<T>& x) {
  constexpr bool real = std::is_same_v<T, double>;
  switch (x.kind) {
    case rank_k_kind::syrk:
      return real ? "dsyrk" : "zsyrk";
    case rank_k_kind::herk:
      return "zherk";
    case rank_k_kind::syr2k:
      return real ? "dsyr2k" : "zsyr2k";
    case rank_k_kind::her2k:
      return "zher2k";
    case rank_k_kind::syrkx:  // cuBLAS's extensions: no host routine
    case rank_k_kind::herkx:
      return "";
  }
  return "";
}
template <class T>
const char* routine_name(const symm_call<T>& x) {
  if (x.hermitian) return "zhemm";
  return std::is_same_v<T, double> ? "dsymm" : "zsymm";
}
template <class T>
const char* routine_name(const triangular_call<T>& x) {
  constexpr bool real = std::is_same_v<T, double>;
  if (x.solve) return real ? "dtrsm" : "ztrsm";
  return real ? "dtrmm" : "ztrmm";
}

// The CPU BLAS's routine of family F that runs x's diagonal blocks; nullptr when it has none.
template <gemm_family F, class Call>
void* native_routine(const Call& x) {
  return cpu_routine(fortran_name(F, routine_name(x)).c_str());
}

// The call on the CPU BLAS's routine f of family F. Its sizes are those of a block of a call that
// came in F's integer width, so they fit it.
template <gemm_family F, class T>
void cpu_native(void* f, const rank_k_call<T>& x) {
  using integer = blas_int<F>;
  const char u = uplo_char(x.uplo), t = trans_char(x.trans);
  const integer n = static_cast<integer>(x.n), k = static_cast<integer>(x.k);
  const integer lda = static_cast<integer>(x.lda), ldb = static_cast<integer>(x.ldb);
  const integer ldc = static_cast<integer>(x.ldc);
  // ZHERK's alpha and beta, ZHER2K's beta: DOUBLE PRECISION.
  const double alpha_re = std::real(x.alpha), beta_re = std::real(x.beta);
  const void* alpha = x.kind == rank_k_kind::herk ? static_cast<const void*>(&alpha_re) : &x.alpha;
  const void* beta = x.hermitian() ? static_cast<const void*>(&beta_re) : &x.beta;
  if (x.two())
    reinterpret_cast<two_operand_fn<integer>>(f)(&u, &t, &n, &k, alpha, x.a, &lda, x.b, &ldb, beta,
                                                 x.c, &ldc, 1, 1);
  else
    reinterpret_cast<rank_k_fn<integer>>(f)(&u, &t, &n, &k, alpha, x.a, &lda, beta, x.c, &ldc, 1,
                                            1);
}

template <gemm_family F, class T>
void cpu_native(void* f, const symm_call<T>& x) {
  using integer = blas_int<F>;
  const char s = side_char(x.side), u = uplo_char(x.uplo);
  const integer m = static_cast<integer>(x.m), n = static_cast<integer>(x.n);
  const integer lda = static_cast<integer>(x.lda), ldb = static_cast<integer>(x.ldb);
  const integer ldc = static_cast<integer>(x.ldc);
  reinterpret_cast<two_operand_fn<integer>>(f)(&s, &u, &m, &n, &x.alpha, x.a, &lda, x.b, &ldb,
                                               &x.beta, x.c, &ldc, 1, 1);
}

template <gemm_family F, class T>
void cpu_native(void* f, const triangular_call<T>& x) {
  using integer = blas_int<F>;
  const char s = side_char(x.side), u = uplo_char(x.uplo), t = trans_char(x.trans);
  const char d = diag_char(x.diag);
  const integer m = static_cast<integer>(x.m), n = static_cast<integer>(x.n);
  const integer lda = static_cast<integer>(x.lda), ldb = static_cast<integer>(x.ldb);
  reinterpret_cast<triangular_fn<integer>>(f)(&s, &u, &t, &d, &m, &n, &x.alpha, x.a, &lda, x.b,
                                              &ldb, 1, 1, 1, 1);
}

// GEMMs to the GPU host path where it emulates them, the CPU BLAS's GEMM of family F otherwise;
// diagonal blocks on the CPU BLAS's routine `native` of family F. Until a block splits nothing
// runs: the caller then forwards the whole call.
template <gemm_family F, class T>
class host_executor final : public level3_executor<T> {
 public:
  host_executor(const char* entry, int64_t block, void* native)
      : entry_(entry), block_(block), native_(native) {}

  void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    if constexpr (std::is_same_v<T, double>) {
      const host_gemm g{to_op(ta), to_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
      const host_offload_result r = try_host_offload(g, entry_);
      const auto cpu = cpu_fortran_gemm<F, gemm_routine::dgemm>();
      if (!r.served) {
        dgemm_columns<F>(cpu, g, 0, n);
        return;
      }
      for (const column_range& left : r.left) dgemm_columns<F>(cpu, g, left.j0, left.count);
    } else {
      using integer = blas_int<F>;
      const auto* ad = reinterpret_cast<const double*>(a);
      const auto* bd = reinterpret_cast<const double*>(b);
      auto* cd = reinterpret_cast<double*>(c);
      const complex_problem p{m,
                              n,
                              k,
                              complex_operand_a(to_op(ta), ta == trans_kind::c, ad, lda),
                              complex_operand_b(to_op(tb), tb == trans_kind::c, bd, ldb),
                              cd,
                              ldc};
      const complex_value al{alpha.real(), alpha.imag()}, be{beta.real(), beta.imag()};
      if (try_host_zgemm_offload(p, al, be, entry_).served) return;
      const char cta = trans_char(ta), ctb = trans_char(tb);
      const integer im = static_cast<integer>(m), in = static_cast<integer>(n);
      const integer ik = static_cast<integer>(k), ilda = static_cast<integer>(lda);
      const integer ildb = static_cast<integer>(ldb), ildc = static_cast<integer>(ldc);
      cpu_fortran_gemm<F, gemm_routine::zgemm>()(
          &cta, &ctb, &im, &in, &ik, reinterpret_cast<const double*>(&alpha), ad, &ilda, bd, &ildb,
          reinterpret_cast<const double*>(&beta), cd, &ildc, 1, 1);
    }
  }

  bool splits(int64_t order, int64_t m, int64_t n, int64_t k) override {
    const char* why = order <= block_ ? "below OZDGEMM_LEVEL3_BLOCK"
                                      : host_gemm_declines(m, n, k, !std::is_same_v<T, double>);
    if (why == nullptr) split_ = true;
    if (!split_) why_ = why;
    return why == nullptr;
  }

  void native(const rank_k_call<T>& x) override {
    if (split_) cpu_native<F>(native_, x);
  }
  void native(const symm_call<T>& x) override {
    if (split_) cpu_native<F>(native_, x);
  }
  void native(const triangular_call<T>& x) override {
    if (split_) cpu_native<F>(native_, x);
  }

  bool split() const { return split_; }
  const char* why() const { return why_; }

 private:
  const char* entry_;
  int64_t block_;
  void* native_;
  bool split_ = false;
  const char* why_ = "small or trivial call";
};

template <gemm_family F, class T, class Call>
bool serve(const Call& x, const char* entry) noexcept {
  try {
    // Every routine a block may run must exist before anything is written.
    const bool have_gemm = std::is_same_v<T, double>
                               ? cpu_fortran_gemm<F, gemm_routine::dgemm>() != nullptr
                               : cpu_fortran_gemm<F, gemm_routine::zgemm>() != nullptr;
    void* const native = have_gemm ? native_routine<F>(x) : nullptr;
    if (native == nullptr) return false;  // the forward reports the missing routine
    call_record rec{entry, 0, 0, 0, outcome::native, nullptr, 0, 0.0, 0.0, 0.0};
    gemm_shape(x, &rec.m, &rec.n, &rec.k);
    const config& cfg = settings();
    constexpr bool complex = !std::is_same_v<T, double>;
    const level3_plan plan = plan_level3(
        x, cfg, [](int64_t m, int64_t n, int64_t k) { return host_gemm_route(m, n, k, complex); },
        &rec);
    rec.reason = plan.declined;
    if (rec.reason == nullptr) {
      host_executor<F, T> ex(entry, plan.block, native);
      blocked(x, ex);
      if (ex.split()) return true;
      rec.reason = ex.why();
    }
    log_call(rec);
    return false;
  } catch (...) {
    // Only before any block ran (nothing after the split throws): nothing written.
    try {
      logger().error("{}: internal error; using the CPU BLAS", entry);
    } catch (...) {
    }
    return false;
  }
}

}  // namespace

template <gemm_family F, class Call>
bool serve_on_host(const Call& x, const char* entry) noexcept {
  return serve<F, std::remove_const_t<std::remove_pointer_t<decltype(x.a)>>>(x, entry);
}

template <gemm_family F, class Call>
bool run_on_cpu_blas(const Call& x) noexcept {
  try {
    void* const f = native_routine<F>(x);
    if (f == nullptr) return false;
    cpu_native<F>(f, x);
    return true;
  } catch (...) {
    return false;  // only the name's allocation throws, before anything ran
  }
}

#define OZDGEMM_LEVEL3_CALL(F, CALL)                                         \
  template bool serve_on_host<F>(const CALL& x, const char* entry) noexcept; \
  template bool run_on_cpu_blas<F>(const CALL& x) noexcept;
#define OZDGEMM_LEVEL3_FAMILY(F)                  \
  OZDGEMM_LEVEL3_CALL(F, rank_k_call<double>)     \
  OZDGEMM_LEVEL3_CALL(F, rank_k_call<zd>)         \
  OZDGEMM_LEVEL3_CALL(F, symm_call<double>)       \
  OZDGEMM_LEVEL3_CALL(F, symm_call<zd>)           \
  OZDGEMM_LEVEL3_CALL(F, triangular_call<double>) \
  OZDGEMM_LEVEL3_CALL(F, triangular_call<zd>)
OZDGEMM_LEVEL3_FAMILY(gemm_family::lp64)
OZDGEMM_LEVEL3_FAMILY(gemm_family::ilp64)
OZDGEMM_LEVEL3_FAMILY(gemm_family::scipy_lp64)
OZDGEMM_LEVEL3_FAMILY(gemm_family::scipy_ilp64)
#undef OZDGEMM_LEVEL3_FAMILY
#undef OZDGEMM_LEVEL3_CALL

}  // namespace ozdgemm::detail
