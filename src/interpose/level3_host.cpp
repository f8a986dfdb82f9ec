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
#include "interpose/cpu_blas.hpp"
#include "level3/blocked.hpp"

namespace ozdgemm::detail {
namespace {

using zd = std::complex<double>;

char uplo_char(uplo_kind u) { return u == uplo_kind::lower ? 'L' : 'U'; }
char side_char(side_kind s) { return s == side_kind::left ? 'L' : 'R'; }
char diag_char(diag_kind d) { return d == diag_kind::unit ? 'U' : 'N'; }
char trans_char(trans_kind t) { return t == trans_kind::n ? 'N' : t == trans_kind::t ? 'T' : 'C'; }
op_kind to_op(trans_kind t) { return t == trans_kind::n ? op_kind::n : op_kind::t; }

// Sizes of blocks of a call that came with int arguments.
int to_int(int64_t v) { return static_cast<int>(v); }

// The CPU BLAS routine that runs a call's diagonal blocks.
template <class T>
const char* routine_name(const rank_k_call<T>& x) {
  constexpr bool real = std::is_same_v<T, double>;
  switch (x.kind) {
    case rank_k_kind::syrk:
      return real ? "dsyrk_" : "zsyrk_";
    case rank_k_kind::herk:
      return "zherk_";
    case rank_k_kind::syr2k:
      return real ? "dsyr2k_" : "zsyr2k_";
    case rank_k_kind::her2k:
      return "zher2k_";
  }
  return "";
}
template <class T>
const char* routine_name(const symm_call<T>& x) {
  if (x.hermitian) return "zhemm_";
  return std::is_same_v<T, double> ? "dsymm_" : "zsymm_";
}
template <class T>
const char* routine_name(const triangular_call<T>& x) {
  constexpr bool real = std::is_same_v<T, double>;
  if (x.solve) return real ? "dtrsm_" : "ztrsm_";
  return real ? "dtrmm_" : "ztrmm_";
}

// C's columns [first, first + count) of a column-major real GEMM on the CPU BLAS.
void cpu_dgemm_columns(fortran_gemm_fn<int> f, const host_gemm& g, int64_t first, int64_t count) {
  const char ta = g.opa == op_kind::n ? 'N' : 'T', tb = g.opb == op_kind::n ? 'N' : 'T';
  const int m = to_int(g.m), n = to_int(count), k = to_int(g.k), lda = to_int(g.lda);
  const int ldb = to_int(g.ldb), ldc = to_int(g.ldc);
  const double* b = g.opb == op_kind::n ? g.b + first * g.ldb : g.b + first;
  f(&ta, &tb, &m, &n, &k, &g.alpha, g.a, &lda, b, &ldb, &g.beta, g.c + first * g.ldc, &ldc, 1, 1);
}

// The call on the CPU BLAS's routine (which exists: serve checked it first).
template <class T>
void cpu_native(const rank_k_call<T>& x) {
  const char u = uplo_char(x.uplo), t = trans_char(x.trans);
  const int n = to_int(x.n), k = to_int(x.k), lda = to_int(x.lda), ldb = to_int(x.ldb);
  const int ldc = to_int(x.ldc);
  // ZHERK's alpha and beta, ZHER2K's beta: DOUBLE PRECISION.
  const double alpha_re = std::real(x.alpha), beta_re = std::real(x.beta);
  const void* alpha = x.kind == rank_k_kind::herk ? static_cast<const void*>(&alpha_re) : &x.alpha;
  const void* beta = x.hermitian() ? static_cast<const void*>(&beta_re) : &x.beta;
  void* f = cpu_level3(routine_name(x));
  if (x.two())
    reinterpret_cast<two_operand_fn>(f)(&u, &t, &n, &k, alpha, x.a, &lda, x.b, &ldb, beta, x.c,
                                        &ldc, 1, 1);
  else
    reinterpret_cast<rank_k_fn>(f)(&u, &t, &n, &k, alpha, x.a, &lda, beta, x.c, &ldc, 1, 1);
}

template <class T>
void cpu_native(const symm_call<T>& x) {
  const char s = side_char(x.side), u = uplo_char(x.uplo);
  const int m = to_int(x.m), n = to_int(x.n), lda = to_int(x.lda), ldb = to_int(x.ldb);
  const int ldc = to_int(x.ldc);
  reinterpret_cast<two_operand_fn>(cpu_level3(routine_name(x)))(
      &s, &u, &m, &n, &x.alpha, x.a, &lda, x.b, &ldb, &x.beta, x.c, &ldc, 1, 1);
}

template <class T>
void cpu_native(const triangular_call<T>& x) {
  const char s = side_char(x.side), u = uplo_char(x.uplo), t = trans_char(x.trans);
  const char d = diag_char(x.diag);
  const int m = to_int(x.m), n = to_int(x.n), lda = to_int(x.lda), ldb = to_int(x.ldb);
  reinterpret_cast<triangular_fn>(cpu_level3(routine_name(x)))(&s, &u, &t, &d, &m, &n, &x.alpha,
                                                               x.a, &lda, x.b, &ldb, 1, 1, 1, 1);
}

// GEMMs to the GPU host path where it emulates them, the CPU BLAS otherwise; diagonal blocks on
// the CPU BLAS. Until a block splits nothing runs: the caller then forwards the whole call.
template <class T>
class host_executor final : public level3_executor<T> {
 public:
  host_executor(const char* entry, int64_t block) : entry_(entry), block_(block) {}

  void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    if constexpr (std::is_same_v<T, double>) {
      const host_gemm g{to_op(ta), to_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
      const host_offload_result r = try_host_offload(g, entry_);
      if (!r.served) {
        cpu_dgemm_columns(cpu_fortran_gemm<gemm_family::lp64, gemm_routine::dgemm>(), g, 0, n);
        return;
      }
      for (const column_range& left : r.left)
        cpu_dgemm_columns(cpu_fortran_gemm<gemm_family::lp64, gemm_routine::dgemm>(), g, left.j0, left.count);
    } else {
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
      const int im = to_int(m), in = to_int(n), ik = to_int(k);
      const int ilda = to_int(lda), ildb = to_int(ldb), ildc = to_int(ldc);
      cpu_fortran_gemm<gemm_family::lp64, gemm_routine::zgemm>()(&cta, &ctb, &im, &in, &ik, reinterpret_cast<const double*>(&alpha), ad, &ilda, bd,
                  &ildb, reinterpret_cast<const double*>(&beta), cd, &ildc, 1, 1);
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
    if (split_) cpu_native(x);
  }
  void native(const symm_call<T>& x) override {
    if (split_) cpu_native(x);
  }
  void native(const triangular_call<T>& x) override {
    if (split_) cpu_native(x);
  }

  bool split() const { return split_; }
  const char* why() const { return why_; }

 private:
  const char* entry_;
  int64_t block_;
  bool split_ = false;
  const char* why_ = "small or trivial call";
};

// m, n, k of a call's decision line: C's (or B's) shape and the depth of its products.
template <class T>
void shape(const rank_k_call<T>& x, int64_t* m, int64_t* n, int64_t* k) {
  *m = x.n, *n = x.n, *k = x.k;
}
template <class Call>
void shape(const Call& x, int64_t* m, int64_t* n, int64_t* k) {
  *m = x.m, *n = x.n, *k = x.side == side_kind::left ? x.m : x.n;
}

template <class T, class Call>
bool serve(const Call& x, const char* entry) noexcept {
  try {
    // Every routine a block may run must exist before anything is written.
    const bool have =
        (std::is_same_v<T, double> ? reinterpret_cast<void*>(cpu_fortran_gemm<gemm_family::lp64, gemm_routine::dgemm>())
                                   : reinterpret_cast<void*>(cpu_fortran_gemm<gemm_family::lp64, gemm_routine::zgemm>())) != nullptr &&
        cpu_level3(routine_name(x)) != nullptr;
    if (!have) return false;  // the forward reports the missing routine
    host_executor<T> ex(entry, settings().level3_block);
    blocked(x, ex);
    if (ex.split()) return true;
    int64_t m = 0, n = 0, k = 0;
    shape(x, &m, &n, &k);
    log_call({entry, m, n, k, outcome::native, ex.why(), 0, 0.0, 0.0, 0.0});
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

template <class Call>
bool serve_on_host(const Call& x, const char* entry) noexcept {
  return serve<std::remove_const_t<std::remove_pointer_t<decltype(x.a)>>>(x, entry);
}

template <class Call>
bool run_on_cpu_blas(const Call& x) noexcept {
  if (cpu_level3(routine_name(x)) == nullptr) return false;
  cpu_native(x);
  return true;
}

#define OZDGEMM_LEVEL3_CALL(CALL)                                         \
  template bool serve_on_host(const CALL& x, const char* entry) noexcept; \
  template bool run_on_cpu_blas(const CALL& x) noexcept;
OZDGEMM_LEVEL3_CALL(rank_k_call<double>)
OZDGEMM_LEVEL3_CALL(rank_k_call<zd>)
OZDGEMM_LEVEL3_CALL(symm_call<double>)
OZDGEMM_LEVEL3_CALL(symm_call<zd>)
OZDGEMM_LEVEL3_CALL(triangular_call<double>)
OZDGEMM_LEVEL3_CALL(triangular_call<zd>)
#undef OZDGEMM_LEVEL3_CALL

}  // namespace ozdgemm::detail
