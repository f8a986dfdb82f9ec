// Host BLAS Level-3 entry points other than GEMM: Fortran xSYRK, xSYR2K, xSYMM, xTRMM, xTRSM
// (d and z) and ZHERK, ZHER2K, ZHEMM, and their cblas_ forms, under the names of every family
// of cpu_blas.hpp (LP64 with its compilers' spellings, ILP64, scipy-openblas LP64 and ILP64).
// The thin layer of blas_hooks.cpp: parse into one column-major level3 call (CBLAS row-major
// translated as reference CBLAS translates it), offer it to level3_host.hpp, and otherwise
// forward the call unchanged (the caller's integers untouched) to the CPU BLAS's definition of
// the same name, whose xerbla reports invalid arguments.
#include <complex>
#include <cstddef>
#include <cstdint>

#include "common/logging.hpp"
#include "interpose/cpu_blas.hpp"
#include "interpose/level3_host.hpp"
#include "interpose/real_symbol.hpp"
#include "level3/level3_call.hpp"
#include "ozdgemm/export.h"

namespace ozdgemm::detail {
namespace {

using zd = std::complex<double>;

// ---------------------------------------------------------------------------------------------
// Fortran CHARACTER arguments, as LSAME reads them (first character, any case), and the CBLAS
// enums (cblas.h's values; C enums travel as int).

char upper(const char* c) { return *c >= 'a' && *c <= 'z' ? static_cast<char>(*c - 32) : *c; }

bool parse(const char* c, uplo_kind* u) {
  if (upper(c) != 'U' && upper(c) != 'L') return false;
  *u = upper(c) == 'L' ? uplo_kind::lower : uplo_kind::upper;
  return true;
}
bool parse(const char* c, side_kind* s) {
  if (upper(c) != 'L' && upper(c) != 'R') return false;
  *s = upper(c) == 'L' ? side_kind::left : side_kind::right;
  return true;
}
bool parse(const char* c, diag_kind* d) {
  if (upper(c) != 'U' && upper(c) != 'N') return false;
  *d = upper(c) == 'U' ? diag_kind::unit : diag_kind::non_unit;
  return true;
}
bool parse(const char* c, trans_kind* t) {
  switch (upper(c)) {
    case 'N':
      *t = trans_kind::n;
      return true;
    case 'T':
      *t = trans_kind::t;
      return true;
    case 'C':
      *t = trans_kind::c;
      return true;
    default:
      return false;
  }
}

constexpr int kCblasRowMajor = 101, kCblasColMajor = 102;

bool parse(int v, uplo_kind* u) {
  if (v != 121 && v != 122) return false;  // CblasUpper, CblasLower
  *u = v == 122 ? uplo_kind::lower : uplo_kind::upper;
  return true;
}
bool parse(int v, side_kind* s) {
  if (v != 141 && v != 142) return false;  // CblasLeft, CblasRight
  *s = v == 141 ? side_kind::left : side_kind::right;
  return true;
}
bool parse(int v, diag_kind* d) {
  if (v != 131 && v != 132) return false;  // CblasNonUnit, CblasUnit
  *d = v == 132 ? diag_kind::unit : diag_kind::non_unit;
  return true;
}
bool parse(int v, trans_kind* t) {
  if (v < 111 || v > 113) return false;  // CblasNoTrans, CblasTrans, CblasConjTrans
  *t = v == 111 ? trans_kind::n : v == 112 ? trans_kind::t : trans_kind::c;
  return true;
}

uplo_kind flip(uplo_kind u) { return u == uplo_kind::lower ? uplo_kind::upper : uplo_kind::lower; }
side_kind flip(side_kind s) { return s == side_kind::left ? side_kind::right : side_kind::left; }

bool hermitian(rank_k_kind k) { return k == rank_k_kind::herk || k == rank_k_kind::her2k; }

template <class T>
T at(const void* p) {
  return *static_cast<const T*>(p);
}

template <class T>
constexpr bool kComplex = std::is_same_v<T, zd>;

// ---------------------------------------------------------------------------------------------
// Serving: the outermost intercepted call on this thread is offered to the GPU; a call made
// while one is running (reference CBLAS's cblas_dsyrk calls dsyrk_, which resolves back here)
// goes straight to the CPU BLAS, as does every call the GPU does not take.
//
// `forward(f)` runs the caller's call on the CPU BLAS's routine f, which is `cpu` (logged when
// missing). A CBLAS call (`cblas`) whose CPU BLAS has no CBLAS runs its column-major Fortran
// equivalent of family F instead, when valid.
template <gemm_family F, class Call, class Forward>
void serve_or_forward(const char* entry, bool parsed, const Call& x, const char* cpu, bool cblas,
                      Forward&& forward) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  if (outermost && parsed && serve_on_host<F>(x, entry)) return;
  if (void* f = cpu_routine(cpu, !cblas)) return forward(f);
  if (cblas && parsed && run_on_cpu_blas<F>(x)) return;
  try {
    logger().error(!cblas || parsed
                       ? "{}: no CPU BLAS to run this call (see above); output left unchanged"
                       : "{}: invalid arguments, and the CPU BLAS has no CBLAS to report them; "
                         "output left unchanged",
                   entry);
  } catch (...) {
  }
}

// The Fortran forms: every argument by address, INTEGERs of F's width, the CHARACTER lengths
// last.
template <gemm_family F, class T>
void fortran_rank_k(const char* entry, const char* cpu, rank_k_kind kind, const char* uplo,
                    const char* trans, const blas_int<F>* n, const blas_int<F>* k,
                    const void* alpha, const void* a, const blas_int<F>* lda, const void* b,
                    const blas_int<F>* ldb, const void* beta, void* c, const blas_int<F>* ldc,
                    std::size_t lu, std::size_t lt) noexcept {
  using integer = blas_int<F>;
  rank_k_call<T> x{};
  const bool two = kind == rank_k_kind::syr2k || kind == rank_k_kind::her2k;
  bool parsed = uplo != nullptr && trans != nullptr && n != nullptr && k != nullptr &&
                alpha != nullptr && lda != nullptr && beta != nullptr && ldc != nullptr &&
                (!two || ldb != nullptr) && parse(uplo, &x.uplo) && parse(trans, &x.trans);
  if (parsed) {
    x.kind = kind;
    x.n = *n, x.k = *k;
    x.alpha = kind == rank_k_kind::herk ? T(at<double>(alpha)) : at<T>(alpha);
    x.beta = hermitian(kind) ? T(at<double>(beta)) : at<T>(beta);
    x.a = static_cast<const T*>(a), x.lda = *lda;
    x.b = static_cast<const T*>(b), x.ldb = two ? *ldb : 0;
    x.c = static_cast<T*>(c), x.ldc = *ldc;
    parsed = valid(x, kComplex<T>);
  }
  serve_or_forward<F>(entry, parsed, x, cpu, false, [&](void* f) {
    if (two)
      reinterpret_cast<two_operand_fn<integer>>(f)(uplo, trans, n, k, alpha, a, lda, b, ldb, beta,
                                                   c, ldc, lu, lt);
    else
      reinterpret_cast<rank_k_fn<integer>>(f)(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, lu,
                                              lt);
  });
}

template <gemm_family F, class T>
void fortran_symm(const char* entry, const char* cpu, bool herm, const char* side, const char* uplo,
                  const blas_int<F>* m, const blas_int<F>* n, const void* alpha, const void* a,
                  const blas_int<F>* lda, const void* b, const blas_int<F>* ldb, const void* beta,
                  void* c, const blas_int<F>* ldc, std::size_t ls, std::size_t lu) noexcept {
  symm_call<T> x{};
  bool parsed = side != nullptr && uplo != nullptr && m != nullptr && n != nullptr &&
                alpha != nullptr && lda != nullptr && ldb != nullptr && beta != nullptr &&
                ldc != nullptr && parse(side, &x.side) && parse(uplo, &x.uplo);
  if (parsed) {
    x = symm_call<T>{herm,
                     x.side,
                     x.uplo,
                     *m,
                     *n,
                     at<T>(alpha),
                     static_cast<const T*>(a),
                     *lda,
                     static_cast<const T*>(b),
                     *ldb,
                     at<T>(beta),
                     static_cast<T*>(c),
                     *ldc};
    parsed = valid(x);
  }
  serve_or_forward<F>(entry, parsed, x, cpu, false, [&](void* f) {
    reinterpret_cast<two_operand_fn<blas_int<F>>>(f)(side, uplo, m, n, alpha, a, lda, b, ldb, beta,
                                                     c, ldc, ls, lu);
  });
}

template <gemm_family F, class T>
void fortran_triangular(const char* entry, const char* cpu, bool solve, const char* side,
                        const char* uplo, const char* transa, const char* diag,
                        const blas_int<F>* m, const blas_int<F>* n, const void* alpha,
                        const void* a, const blas_int<F>* lda, void* b, const blas_int<F>* ldb,
                        std::size_t ls, std::size_t lu, std::size_t lt, std::size_t ld) noexcept {
  triangular_call<T> x{};
  bool parsed = side != nullptr && uplo != nullptr && transa != nullptr && diag != nullptr &&
                m != nullptr && n != nullptr && alpha != nullptr && lda != nullptr &&
                ldb != nullptr && parse(side, &x.side) && parse(uplo, &x.uplo) &&
                parse(transa, &x.trans) && parse(diag, &x.diag);
  if (parsed) {
    x = triangular_call<T>{solve,
                           x.side,
                           x.uplo,
                           x.trans,
                           x.diag,
                           *m,
                           *n,
                           at<T>(alpha),
                           static_cast<const T*>(a),
                           *lda,
                           static_cast<T*>(b),
                           *ldb};
    parsed = valid(x);
  }
  serve_or_forward<F>(entry, parsed, x, cpu, false, [&](void* f) {
    reinterpret_cast<triangular_fn<blas_int<F>>>(f)(side, uplo, transa, diag, m, n, alpha, a, lda,
                                                    b, ldb, ls, lu, lt, ld);
  });
}

// ---------------------------------------------------------------------------------------------
// The CBLAS forms. Row-major buffers read column-major are the transposes, so a row-major call
// is the column-major call reference CBLAS makes of it: uplo (and side) flipped, m and n swapped,
// SYRK's trans flipped, HER2K's alpha conjugated.
//
// A scalar arrives as `double` (real routines; ZHERK's alpha and beta, ZHER2K's beta) or by
// address (the other complex ones); `value` reads it as T, false when its address is null.
template <class T>
bool value(double v, T* out) {
  *out = T(v);
  return true;
}
template <class T>
bool value(const void* p, T* out) {
  if (p == nullptr) return false;
  *out = at<T>(p);
  return true;
}

template <class T>
bool cblas_rank_k(rank_k_kind kind, int layout, int uplo, int trans, int64_t n, int64_t k, T alpha,
                  const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc,
                  rank_k_call<T>* x) {
  uplo_kind u;
  trans_kind t;
  if (!parse(uplo, &u) || !parse(trans, &t)) return false;
  const trans_kind other = hermitian(kind) ? trans_kind::c : trans_kind::t;
  // ZSYRK takes N or T, ZHERK N or C (valid() checks the translated flag; check the caller's).
  if (kComplex<T> && t != trans_kind::n && t != other) return false;
  if (layout == kCblasRowMajor) {
    u = flip(u);
    t = t == trans_kind::n ? other : trans_kind::n;
    if (kind == rank_k_kind::her2k) alpha = conj_of(alpha);
  } else if (layout != kCblasColMajor) {
    return false;
  }
  *x = rank_k_call<T>{kind, u, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
  return valid(*x, kComplex<T>);
}

template <class T>
bool cblas_symm(bool herm, int layout, int side, int uplo, int64_t m, int64_t n, T alpha,
                const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc,
                symm_call<T>* x) {
  side_kind s;
  uplo_kind u;
  if (!parse(side, &s) || !parse(uplo, &u)) return false;
  if (layout == kCblasRowMajor)
    *x = symm_call<T>{herm, flip(s), flip(u), n, m, alpha, a, lda, b, ldb, beta, c, ldc};
  else if (layout == kCblasColMajor)
    *x = symm_call<T>{herm, s, u, m, n, alpha, a, lda, b, ldb, beta, c, ldc};
  else
    return false;
  return valid(*x);
}

template <class T>
bool cblas_triangular(bool solve, int layout, int side, int uplo, int transa, int diag, int64_t m,
                      int64_t n, T alpha, const T* a, int64_t lda, T* b, int64_t ldb,
                      triangular_call<T>* x) {
  side_kind s;
  uplo_kind u;
  trans_kind t;
  diag_kind d;
  if (!parse(side, &s) || !parse(uplo, &u) || !parse(transa, &t) || !parse(diag, &d)) return false;
  if (layout == kCblasRowMajor)
    *x = triangular_call<T>{solve, flip(s), flip(u), t, d, n, m, alpha, a, lda, b, ldb};
  else if (layout == kCblasColMajor)
    *x = triangular_call<T>{solve, s, u, t, d, m, n, alpha, a, lda, b, ldb};
  else
    return false;
  return valid(*x);
}

// One CBLAS entry of each shape, family F: the sizes of its width, the scalars as the routine
// takes them (Alpha, Beta: double or const void*), forwarded unchanged to the CPU BLAS's
// definition of the name `entry`.
template <gemm_family F, class T, class Alpha, class Beta>
void cblas_rank_k_entry(const char* entry, rank_k_kind kind, int layout, int uplo, int trans,
                        blas_int<F> n, blas_int<F> k, Alpha alpha, const void* a, blas_int<F> lda,
                        const void* b, blas_int<F> ldb, Beta beta, void* c,
                        blas_int<F> ldc) noexcept {
  using integer = blas_int<F>;
  rank_k_call<T> x{};
  T al{}, be{};
  const bool two = kind == rank_k_kind::syr2k || kind == rank_k_kind::her2k;
  const bool parsed =
      value(alpha, &al) && value(beta, &be) &&
      cblas_rank_k<T>(kind, layout, uplo, trans, n, k, al, static_cast<const T*>(a), lda,
                      static_cast<const T*>(b), ldb, be, static_cast<T*>(c), ldc, &x);
  serve_or_forward<F>(entry, parsed, x, entry, true, [&](void* f) {
    if (two)
      reinterpret_cast<void (*)(int, int, int, integer, integer, Alpha, const void*, integer,
                                const void*, integer, Beta, void*, integer)>(f)(
          layout, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else
      reinterpret_cast<void (*)(int, int, int, integer, integer, Alpha, const void*, integer, Beta,
                                void*, integer)>(f)(layout, uplo, trans, n, k, alpha, a, lda, beta,
                                                    c, ldc);
  });
}

template <gemm_family F, class T, class Scalar>
void cblas_symm_entry(const char* entry, bool herm, int layout, int side, int uplo, blas_int<F> m,
                      blas_int<F> n, Scalar alpha, const void* a, blas_int<F> lda, const void* b,
                      blas_int<F> ldb, Scalar beta, void* c, blas_int<F> ldc) noexcept {
  using integer = blas_int<F>;
  symm_call<T> x{};
  T al{}, be{};
  const bool parsed =
      value(alpha, &al) && value(beta, &be) &&
      cblas_symm<T>(herm, layout, side, uplo, m, n, al, static_cast<const T*>(a), lda,
                    static_cast<const T*>(b), ldb, be, static_cast<T*>(c), ldc, &x);
  serve_or_forward<F>(entry, parsed, x, entry, true, [&](void* f) {
    reinterpret_cast<void (*)(int, int, int, integer, integer, Scalar, const void*, integer,
                              const void*, integer, Scalar, void*, integer)>(f)(
        layout, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

template <gemm_family F, class T, class Scalar>
void cblas_triangular_entry(const char* entry, bool solve, int layout, int side, int uplo,
                            int transa, int diag, blas_int<F> m, blas_int<F> n, Scalar alpha,
                            const void* a, blas_int<F> lda, void* b, blas_int<F> ldb) noexcept {
  using integer = blas_int<F>;
  triangular_call<T> x{};
  T al{};
  const bool parsed =
      value(alpha, &al) &&
      cblas_triangular<T>(solve, layout, side, uplo, transa, diag, m, n, al,
                          static_cast<const T*>(a), lda, static_cast<T*>(b), ldb, &x);
  serve_or_forward<F>(entry, parsed, x, entry, true, [&](void* f) {
    reinterpret_cast<void (*)(int, int, int, int, int, integer, integer, Scalar, const void*,
                              integer, void*, integer)>(f)(layout, side, uplo, transa, diag, m, n,
                                                           alpha, a, lda, b, ldb);
  });
}

}  // namespace
}  // namespace ozdgemm::detail

// ---------------------------------------------------------------------------------------------
// Exported entry points (cmake/ozdgemm.map), by family.

using ozdgemm::detail::blas_int;
using ozdgemm::detail::gemm_family;
using ozdgemm::detail::rank_k_kind;
using ozdgemm::detail::zd;

extern "C" {

// Fortran, each name with the CPU BLAS routine it forwards to (its own; LP64's other spellings
// forward to name_).
#define OZDGEMM_F_RANK_K(NAME, FAMILY, T, KIND, CPU)                                               \
  OZDGEMM_API void NAME(const char* uplo, const char* trans, const blas_int<FAMILY>* n,            \
                        const blas_int<FAMILY>* k, const void* alpha, const void* a,               \
                        const blas_int<FAMILY>* lda, const void* beta, void* c,                    \
                        const blas_int<FAMILY>* ldc, std::size_t lu, std::size_t lt) noexcept {    \
    ozdgemm::detail::fortran_rank_k<FAMILY, T>(#NAME, CPU, KIND, uplo, trans, n, k, alpha, a, lda, \
                                               nullptr, nullptr, beta, c, ldc, lu, lt);            \
  }
#define OZDGEMM_F_RANK_2K(NAME, FAMILY, T, KIND, CPU)                                              \
  OZDGEMM_API void NAME(const char* uplo, const char* trans, const blas_int<FAMILY>* n,            \
                        const blas_int<FAMILY>* k, const void* alpha, const void* a,               \
                        const blas_int<FAMILY>* lda, const void* b, const blas_int<FAMILY>* ldb,   \
                        const void* beta, void* c, const blas_int<FAMILY>* ldc, std::size_t lu,    \
                        std::size_t lt) noexcept {                                                 \
    ozdgemm::detail::fortran_rank_k<FAMILY, T>(#NAME, CPU, KIND, uplo, trans, n, k, alpha, a, lda, \
                                               b, ldb, beta, c, ldc, lu, lt);                      \
  }
#define OZDGEMM_F_SYMM(NAME, FAMILY, T, HERM, CPU)                                                 \
  OZDGEMM_API void NAME(const char* side, const char* uplo, const blas_int<FAMILY>* m,             \
                        const blas_int<FAMILY>* n, const void* alpha, const void* a,               \
                        const blas_int<FAMILY>* lda, const void* b, const blas_int<FAMILY>* ldb,   \
                        const void* beta, void* c, const blas_int<FAMILY>* ldc, std::size_t ls,    \
                        std::size_t lu) noexcept {                                                 \
    ozdgemm::detail::fortran_symm<FAMILY, T>(#NAME, CPU, HERM, side, uplo, m, n, alpha, a, lda, b, \
                                             ldb, beta, c, ldc, ls, lu);                           \
  }
#define OZDGEMM_F_TRIANGULAR(NAME, FAMILY, T, SOLVE, CPU)                                          \
  OZDGEMM_API void NAME(const char* side, const char* uplo, const char* transa, const char* diag,  \
                        const blas_int<FAMILY>* m, const blas_int<FAMILY>* n, const void* alpha,   \
                        const void* a, const blas_int<FAMILY>* lda, void* b,                       \
                        const blas_int<FAMILY>* ldb, std::size_t ls, std::size_t lu,               \
                        std::size_t lt, std::size_t ld) noexcept {                                 \
    ozdgemm::detail::fortran_triangular<FAMILY, T>(#NAME, CPU, SOLVE, side, uplo, transa, diag, m, \
                                                   n, alpha, a, lda, b, ldb, ls, lu, lt, ld);      \
  }

// CBLAS: real scalars by value, complex ones by address (ZHERK's alpha and beta, ZHER2K's beta
// are real, by value); the enums as int, sizes of the family's width.
#define OZDGEMM_C_RANK_K(NAME, FAMILY, T, KIND, ALPHA, BETA)                                      \
  OZDGEMM_API void NAME(int layout, int uplo, int trans, blas_int<FAMILY> n, blas_int<FAMILY> k,  \
                        ALPHA alpha, const void* a, blas_int<FAMILY> lda, BETA beta, void* c,     \
                        blas_int<FAMILY> ldc) noexcept {                                          \
    ozdgemm::detail::cblas_rank_k_entry<FAMILY, T>(#NAME, KIND, layout, uplo, trans, n, k, alpha, \
                                                   a, lda, nullptr, 0, beta, c, ldc);             \
  }
#define OZDGEMM_C_RANK_2K(NAME, FAMILY, T, KIND, ALPHA, BETA)                                      \
  OZDGEMM_API void NAME(int layout, int uplo, int trans, blas_int<FAMILY> n, blas_int<FAMILY> k,   \
                        ALPHA alpha, const void* a, blas_int<FAMILY> lda, const void* b,           \
                        blas_int<FAMILY> ldb, BETA beta, void* c, blas_int<FAMILY> ldc) noexcept { \
    ozdgemm::detail::cblas_rank_k_entry<FAMILY, T>(#NAME, KIND, layout, uplo, trans, n, k, alpha,  \
                                                   a, lda, b, ldb, beta, c, ldc);                  \
  }
#define OZDGEMM_C_SYMM(NAME, FAMILY, T, HERM, SCALAR)                                             \
  OZDGEMM_API void NAME(int layout, int side, int uplo, blas_int<FAMILY> m, blas_int<FAMILY> n,   \
                        SCALAR alpha, const void* a, blas_int<FAMILY> lda, const void* b,         \
                        blas_int<FAMILY> ldb, SCALAR beta, void* c,                               \
                        blas_int<FAMILY> ldc) noexcept {                                          \
    ozdgemm::detail::cblas_symm_entry<FAMILY, T>(#NAME, HERM, layout, side, uplo, m, n, alpha, a, \
                                                 lda, b, ldb, beta, c, ldc);                      \
  }
#define OZDGEMM_C_TRIANGULAR(NAME, FAMILY, T, SOLVE, SCALAR)                                      \
  OZDGEMM_API void NAME(int layout, int side, int uplo, int transa, int diag, blas_int<FAMILY> m, \
                        blas_int<FAMILY> n, SCALAR alpha, const void* a, blas_int<FAMILY> lda,    \
                        void* b, blas_int<FAMILY> ldb) noexcept {                                 \
    ozdgemm::detail::cblas_triangular_entry<FAMILY, T>(#NAME, SOLVE, layout, side, uplo, transa,  \
                                                       diag, m, n, alpha, a, lda, b, ldb);        \
  }

// The thirteen routines of one family: its Fortran names F_..., forwarded to themselves, and its
// CBLAS names C_... .
#define OZDGEMM_LEVEL3_NAMES(FAMILY, F_DSYRK, F_ZSYRK, F_ZHERK, F_DSYR2K, F_ZSYR2K, F_ZHER2K,  \
                             F_DSYMM, F_ZSYMM, F_ZHEMM, F_DTRMM, F_ZTRMM, F_DTRSM, F_ZTRSM,    \
                             C_DSYRK, C_ZSYRK, C_ZHERK, C_DSYR2K, C_ZSYR2K, C_ZHER2K, C_DSYMM, \
                             C_ZSYMM, C_ZHEMM, C_DTRMM, C_ZTRMM, C_DTRSM, C_ZTRSM)             \
  OZDGEMM_F_RANK_K(F_DSYRK, FAMILY, double, rank_k_kind::syrk, #F_DSYRK)                       \
  OZDGEMM_F_RANK_K(F_ZSYRK, FAMILY, zd, rank_k_kind::syrk, #F_ZSYRK)                           \
  OZDGEMM_F_RANK_K(F_ZHERK, FAMILY, zd, rank_k_kind::herk, #F_ZHERK)                           \
  OZDGEMM_F_RANK_2K(F_DSYR2K, FAMILY, double, rank_k_kind::syr2k, #F_DSYR2K)                   \
  OZDGEMM_F_RANK_2K(F_ZSYR2K, FAMILY, zd, rank_k_kind::syr2k, #F_ZSYR2K)                       \
  OZDGEMM_F_RANK_2K(F_ZHER2K, FAMILY, zd, rank_k_kind::her2k, #F_ZHER2K)                       \
  OZDGEMM_F_SYMM(F_DSYMM, FAMILY, double, false, #F_DSYMM)                                     \
  OZDGEMM_F_SYMM(F_ZSYMM, FAMILY, zd, false, #F_ZSYMM)                                         \
  OZDGEMM_F_SYMM(F_ZHEMM, FAMILY, zd, true, #F_ZHEMM)                                          \
  OZDGEMM_F_TRIANGULAR(F_DTRMM, FAMILY, double, false, #F_DTRMM)                               \
  OZDGEMM_F_TRIANGULAR(F_ZTRMM, FAMILY, zd, false, #F_ZTRMM)                                   \
  OZDGEMM_F_TRIANGULAR(F_DTRSM, FAMILY, double, true, #F_DTRSM)                                \
  OZDGEMM_F_TRIANGULAR(F_ZTRSM, FAMILY, zd, true, #F_ZTRSM)                                    \
  OZDGEMM_C_RANK_K(C_DSYRK, FAMILY, double, rank_k_kind::syrk, double, double)                 \
  OZDGEMM_C_RANK_K(C_ZSYRK, FAMILY, zd, rank_k_kind::syrk, const void*, const void*)           \
  OZDGEMM_C_RANK_K(C_ZHERK, FAMILY, zd, rank_k_kind::herk, double, double)                     \
  OZDGEMM_C_RANK_2K(C_DSYR2K, FAMILY, double, rank_k_kind::syr2k, double, double)              \
  OZDGEMM_C_RANK_2K(C_ZSYR2K, FAMILY, zd, rank_k_kind::syr2k, const void*, const void*)        \
  OZDGEMM_C_RANK_2K(C_ZHER2K, FAMILY, zd, rank_k_kind::her2k, const void*, double)             \
  OZDGEMM_C_SYMM(C_DSYMM, FAMILY, double, false, double)                                       \
  OZDGEMM_C_SYMM(C_ZSYMM, FAMILY, zd, false, const void*)                                      \
  OZDGEMM_C_SYMM(C_ZHEMM, FAMILY, zd, true, const void*)                                       \
  OZDGEMM_C_TRIANGULAR(C_DTRMM, FAMILY, double, false, double)                                 \
  OZDGEMM_C_TRIANGULAR(C_ZTRMM, FAMILY, zd, false, const void*)                                \
  OZDGEMM_C_TRIANGULAR(C_DTRSM, FAMILY, double, true, double)                                  \
  OZDGEMM_C_TRIANGULAR(C_ZTRSM, FAMILY, zd, true, const void*)

// LP64, the names of libblas.so.3 (Fortran name_; the spellings name and NAME of blas_hooks.cpp's
// DGEMM follow).
OZDGEMM_LEVEL3_NAMES(gemm_family::lp64, dsyrk_, zsyrk_, zherk_, dsyr2k_, zsyr2k_, zher2k_, dsymm_,
                     zsymm_, zhemm_, dtrmm_, ztrmm_, dtrsm_, ztrsm_, cblas_dsyrk, cblas_zsyrk,
                     cblas_zherk, cblas_dsyr2k, cblas_zsyr2k, cblas_zher2k, cblas_dsymm,
                     cblas_zsymm, cblas_zhemm, cblas_dtrmm, cblas_ztrmm, cblas_dtrsm, cblas_ztrsm)
// ILP64: the 64_ suffix of reference BLAS's and OpenBLAS's 64-bit builds.
OZDGEMM_LEVEL3_NAMES(gemm_family::ilp64, dsyrk_64_, zsyrk_64_, zherk_64_, dsyr2k_64_, zsyr2k_64_,
                     zher2k_64_, dsymm_64_, zsymm_64_, zhemm_64_, dtrmm_64_, ztrmm_64_, dtrsm_64_,
                     ztrsm_64_, cblas_dsyrk64_, cblas_zsyrk64_, cblas_zherk64_, cblas_dsyr2k64_,
                     cblas_zsyr2k64_, cblas_zher2k64_, cblas_dsymm64_, cblas_zsymm64_,
                     cblas_zhemm64_, cblas_dtrmm64_, cblas_ztrmm64_, cblas_dtrsm64_, cblas_ztrsm64_)
// scipy-openblas: LP64 (scipy's wheels) and ILP64 (numpy's: `a @ a.T` is scipy_cblas_dsyrk64_).
OZDGEMM_LEVEL3_NAMES(gemm_family::scipy_lp64, scipy_dsyrk_, scipy_zsyrk_, scipy_zherk_,
                     scipy_dsyr2k_, scipy_zsyr2k_, scipy_zher2k_, scipy_dsymm_, scipy_zsymm_,
                     scipy_zhemm_, scipy_dtrmm_, scipy_ztrmm_, scipy_dtrsm_, scipy_ztrsm_,
                     scipy_cblas_dsyrk, scipy_cblas_zsyrk, scipy_cblas_zherk, scipy_cblas_dsyr2k,
                     scipy_cblas_zsyr2k, scipy_cblas_zher2k, scipy_cblas_dsymm, scipy_cblas_zsymm,
                     scipy_cblas_zhemm, scipy_cblas_dtrmm, scipy_cblas_ztrmm, scipy_cblas_dtrsm,
                     scipy_cblas_ztrsm)
OZDGEMM_LEVEL3_NAMES(gemm_family::scipy_ilp64, scipy_dsyrk_64_, scipy_zsyrk_64_, scipy_zherk_64_,
                     scipy_dsyr2k_64_, scipy_zsyr2k_64_, scipy_zher2k_64_, scipy_dsymm_64_,
                     scipy_zsymm_64_, scipy_zhemm_64_, scipy_dtrmm_64_, scipy_ztrmm_64_,
                     scipy_dtrsm_64_, scipy_ztrsm_64_, scipy_cblas_dsyrk64_, scipy_cblas_zsyrk64_,
                     scipy_cblas_zherk64_, scipy_cblas_dsyr2k64_, scipy_cblas_zsyr2k64_,
                     scipy_cblas_zher2k64_, scipy_cblas_dsymm64_, scipy_cblas_zsymm64_,
                     scipy_cblas_zhemm64_, scipy_cblas_dtrmm64_, scipy_cblas_ztrmm64_,
                     scipy_cblas_dtrsm64_, scipy_cblas_ztrsm64_)

// LP64's other Fortran spellings (xlf without -qextname; upper case), forwarded to name_.
#define OZDGEMM_SPELLINGS(MACRO, LOWER, UPPER, ...)        \
  MACRO(LOWER, gemm_family::lp64, __VA_ARGS__, #LOWER "_") \
  MACRO(UPPER, gemm_family::lp64, __VA_ARGS__, #LOWER "_")
OZDGEMM_SPELLINGS(OZDGEMM_F_RANK_K, dsyrk, DSYRK, double, rank_k_kind::syrk)
OZDGEMM_SPELLINGS(OZDGEMM_F_RANK_K, zsyrk, ZSYRK, zd, rank_k_kind::syrk)
OZDGEMM_SPELLINGS(OZDGEMM_F_RANK_K, zherk, ZHERK, zd, rank_k_kind::herk)
OZDGEMM_SPELLINGS(OZDGEMM_F_RANK_2K, dsyr2k, DSYR2K, double, rank_k_kind::syr2k)
OZDGEMM_SPELLINGS(OZDGEMM_F_RANK_2K, zsyr2k, ZSYR2K, zd, rank_k_kind::syr2k)
OZDGEMM_SPELLINGS(OZDGEMM_F_RANK_2K, zher2k, ZHER2K, zd, rank_k_kind::her2k)
OZDGEMM_SPELLINGS(OZDGEMM_F_SYMM, dsymm, DSYMM, double, false)
OZDGEMM_SPELLINGS(OZDGEMM_F_SYMM, zsymm, ZSYMM, zd, false)
OZDGEMM_SPELLINGS(OZDGEMM_F_SYMM, zhemm, ZHEMM, zd, true)
OZDGEMM_SPELLINGS(OZDGEMM_F_TRIANGULAR, dtrmm, DTRMM, double, false)
OZDGEMM_SPELLINGS(OZDGEMM_F_TRIANGULAR, ztrmm, ZTRMM, zd, false)
OZDGEMM_SPELLINGS(OZDGEMM_F_TRIANGULAR, dtrsm, DTRSM, double, true)
OZDGEMM_SPELLINGS(OZDGEMM_F_TRIANGULAR, ztrsm, ZTRSM, zd, true)
#undef OZDGEMM_SPELLINGS
#undef OZDGEMM_LEVEL3_NAMES
#undef OZDGEMM_C_TRIANGULAR
#undef OZDGEMM_C_SYMM
#undef OZDGEMM_C_RANK_2K
#undef OZDGEMM_C_RANK_K
#undef OZDGEMM_F_TRIANGULAR
#undef OZDGEMM_F_SYMM
#undef OZDGEMM_F_RANK_2K
#undef OZDGEMM_F_RANK_K

}  // extern "C"
