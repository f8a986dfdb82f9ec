// Host BLAS Level-3 entry points other than GEMM: Fortran xSYRK, xSYR2K, xSYMM, xTRMM, xTRSM
// (d and z) and ZHERK, ZHER2K, ZHEMM with their compilers' spellings, and their cblas_ forms.
// The thin layer of blas_hooks.cpp: parse into one column-major level3 call (CBLAS row-major
// translated as reference CBLAS translates it), offer it to level3_host.hpp, and otherwise
// forward the call unchanged to the CPU BLAS, whose xerbla reports invalid arguments. Integers
// are 32-bit (LP64).
#include <complex>
#include <cstddef>

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
// equivalent instead, when valid.
template <class Call, class Forward>
void serve_or_forward(const char* entry, bool parsed, const Call& x, const char* cpu, bool cblas,
                      Forward&& forward) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  if (outermost && parsed && serve_on_host(x, entry)) return;
  if (void* f = cpu_level3(cpu, !cblas)) return forward(f);
  if (cblas && parsed && run_on_cpu_blas(x)) return;
  try {
    logger().error(!cblas || parsed
                       ? "{}: no CPU BLAS to run this call (see above); output left unchanged"
                       : "{}: invalid arguments, and the CPU BLAS has no CBLAS to report them; "
                         "output left unchanged",
                   entry);
  } catch (...) {
  }
}

// The Fortran forms: every argument by address, the CHARACTER lengths last.
template <class T>
void fortran_rank_k(const char* entry, const char* cpu, rank_k_kind kind, const char* uplo,
                    const char* trans, const int* n, const int* k, const void* alpha, const void* a,
                    const int* lda, const void* b, const int* ldb, const void* beta, void* c,
                    const int* ldc, std::size_t lu, std::size_t lt) noexcept {
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
  serve_or_forward(entry, parsed, x, cpu, false, [&](void* f) {
    if (two)
      reinterpret_cast<two_operand_fn>(f)(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                          lu, lt);
    else
      reinterpret_cast<rank_k_fn>(f)(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, lu, lt);
  });
}

template <class T>
void fortran_symm(const char* entry, const char* cpu, bool herm, const char* side, const char* uplo,
                  const int* m, const int* n, const void* alpha, const void* a, const int* lda,
                  const void* b, const int* ldb, const void* beta, void* c, const int* ldc,
                  std::size_t ls, std::size_t lu) noexcept {
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
  serve_or_forward(entry, parsed, x, cpu, false, [&](void* f) {
    reinterpret_cast<two_operand_fn>(f)(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, ls,
                                        lu);
  });
}

template <class T>
void fortran_triangular(const char* entry, const char* cpu, bool solve, const char* side,
                        const char* uplo, const char* transa, const char* diag, const int* m,
                        const int* n, const void* alpha, const void* a, const int* lda, void* b,
                        const int* ldb, std::size_t ls, std::size_t lu, std::size_t lt,
                        std::size_t ld) noexcept {
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
  serve_or_forward(entry, parsed, x, cpu, false, [&](void* f) {
    reinterpret_cast<triangular_fn>(f)(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, ls,
                                       lu, lt, ld);
  });
}

// ---------------------------------------------------------------------------------------------
// The CBLAS forms. Row-major buffers read column-major are the transposes, so a row-major call
// is the column-major call reference CBLAS makes of it: uplo (and side) flipped, m and n swapped,
// SYRK's trans flipped, HER2K's alpha conjugated.

template <class T>
bool cblas_rank_k(rank_k_kind kind, int layout, int uplo, int trans, int n, int k, T alpha,
                  const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc,
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
bool cblas_symm(bool herm, int layout, int side, int uplo, int m, int n, T alpha, const T* a,
                int lda, const T* b, int ldb, T beta, T* c, int ldc, symm_call<T>* x) {
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
bool cblas_triangular(bool solve, int layout, int side, int uplo, int transa, int diag, int m,
                      int n, T alpha, const T* a, int lda, T* b, int ldb, triangular_call<T>* x) {
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

}  // namespace
}  // namespace ozdgemm::detail

// ---------------------------------------------------------------------------------------------
// Exported entry points (cmake/ozdgemm.map).

using ozdgemm::detail::rank_k_call;
using ozdgemm::detail::rank_k_kind;
using ozdgemm::detail::symm_call;
using ozdgemm::detail::triangular_call;
using ozdgemm::detail::zd;

extern "C" {

// Fortran: the spellings of blas_hooks.cpp's DGEMM (name_, name, NAME), each with the CPU BLAS
// routine it forwards to.
#define OZDGEMM_F_RANK_K(NAME, T, KIND, CPU)                                                \
  OZDGEMM_API void NAME(const char* uplo, const char* trans, const int* n, const int* k,    \
                        const void* alpha, const void* a, const int* lda, const void* beta, \
                        void* c, const int* ldc, std::size_t lu, std::size_t lt) noexcept { \
    ozdgemm::detail::fortran_rank_k<T>(#NAME, CPU, KIND, uplo, trans, n, k, alpha, a, lda,  \
                                       nullptr, nullptr, beta, c, ldc, lu, lt);             \
  }
#define OZDGEMM_F_RANK_2K(NAME, T, KIND, CPU)                                                      \
  OZDGEMM_API void NAME(const char* uplo, const char* trans, const int* n, const int* k,           \
                        const void* alpha, const void* a, const int* lda, const void* b,           \
                        const int* ldb, const void* beta, void* c, const int* ldc, std::size_t lu, \
                        std::size_t lt) noexcept {                                                 \
    ozdgemm::detail::fortran_rank_k<T>(#NAME, CPU, KIND, uplo, trans, n, k, alpha, a, lda, b, ldb, \
                                       beta, c, ldc, lu, lt);                                      \
  }
#define OZDGEMM_F_SYMM(NAME, T, HERM, CPU)                                                         \
  OZDGEMM_API void NAME(const char* side, const char* uplo, const int* m, const int* n,            \
                        const void* alpha, const void* a, const int* lda, const void* b,           \
                        const int* ldb, const void* beta, void* c, const int* ldc, std::size_t ls, \
                        std::size_t lu) noexcept {                                                 \
    ozdgemm::detail::fortran_symm<T>(#NAME, CPU, HERM, side, uplo, m, n, alpha, a, lda, b, ldb,    \
                                     beta, c, ldc, ls, lu);                                        \
  }
#define OZDGEMM_F_TRIANGULAR(NAME, T, SOLVE, CPU)                                                 \
  OZDGEMM_API void NAME(const char* side, const char* uplo, const char* transa, const char* diag, \
                        const int* m, const int* n, const void* alpha, const void* a,             \
                        const int* lda, void* b, const int* ldb, std::size_t ls, std::size_t lu,  \
                        std::size_t lt, std::size_t ld) noexcept {                                \
    ozdgemm::detail::fortran_triangular<T>(#NAME, CPU, SOLVE, side, uplo, transa, diag, m, n,     \
                                           alpha, a, lda, b, ldb, ls, lu, lt, ld);                \
  }
#define OZDGEMM_SPELLINGS(MACRO, LOWER, UPPER, ...) \
  MACRO(LOWER##_, __VA_ARGS__, #LOWER "_")          \
  MACRO(LOWER, __VA_ARGS__, #LOWER "_")             \
  MACRO(UPPER, __VA_ARGS__, #LOWER "_")

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
#undef OZDGEMM_F_TRIANGULAR
#undef OZDGEMM_F_SYMM
#undef OZDGEMM_F_RANK_2K
#undef OZDGEMM_F_RANK_K

// CBLAS: real scalars by value, complex ones by address (ZHERK's alpha and beta, ZHER2K's beta
// are real, by value).

OZDGEMM_API void cblas_dsyrk(int layout, int uplo, int trans, int n, int k, double alpha,
                             const double* a, int lda, double beta, double* c, int ldc) noexcept {
  rank_k_call<double> x{};
  const bool parsed = ozdgemm::detail::cblas_rank_k<double>(
      rank_k_kind::syrk, layout, uplo, trans, n, k, alpha, a, lda, nullptr, 0, beta, c, ldc, &x);
  ozdgemm::detail::serve_or_forward("cblas_dsyrk", parsed, x, "cblas_dsyrk", true, [&](void* f) {
    reinterpret_cast<decltype(&cblas_dsyrk)>(f)(layout, uplo, trans, n, k, alpha, a, lda, beta, c,
                                                ldc);
  });
}

OZDGEMM_API void cblas_zsyrk(int layout, int uplo, int trans, int n, int k, const void* alpha,
                             const void* a, int lda, const void* beta, void* c, int ldc) noexcept {
  rank_k_call<zd> x{};
  const bool parsed = alpha != nullptr && beta != nullptr &&
                      ozdgemm::detail::cblas_rank_k<zd>(
                          rank_k_kind::syrk, layout, uplo, trans, n, k,
                          *static_cast<const zd*>(alpha), static_cast<const zd*>(a), lda, nullptr,
                          0, *static_cast<const zd*>(beta), static_cast<zd*>(c), ldc, &x);
  ozdgemm::detail::serve_or_forward("cblas_zsyrk", parsed, x, "cblas_zsyrk", true, [&](void* f) {
    reinterpret_cast<decltype(&cblas_zsyrk)>(f)(layout, uplo, trans, n, k, alpha, a, lda, beta, c,
                                                ldc);
  });
}

OZDGEMM_API void cblas_zherk(int layout, int uplo, int trans, int n, int k, double alpha,
                             const void* a, int lda, double beta, void* c, int ldc) noexcept {
  rank_k_call<zd> x{};
  const bool parsed = ozdgemm::detail::cblas_rank_k<zd>(
      rank_k_kind::herk, layout, uplo, trans, n, k, zd(alpha), static_cast<const zd*>(a), lda,
      nullptr, 0, zd(beta), static_cast<zd*>(c), ldc, &x);
  ozdgemm::detail::serve_or_forward("cblas_zherk", parsed, x, "cblas_zherk", true, [&](void* f) {
    reinterpret_cast<decltype(&cblas_zherk)>(f)(layout, uplo, trans, n, k, alpha, a, lda, beta, c,
                                                ldc);
  });
}

OZDGEMM_API void cblas_dsyr2k(int layout, int uplo, int trans, int n, int k, double alpha,
                              const double* a, int lda, const double* b, int ldb, double beta,
                              double* c, int ldc) noexcept {
  rank_k_call<double> x{};
  const bool parsed = ozdgemm::detail::cblas_rank_k<double>(
      rank_k_kind::syr2k, layout, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc, &x);
  ozdgemm::detail::serve_or_forward("cblas_dsyr2k", parsed, x, "cblas_dsyr2k", true, [&](void* f) {
    reinterpret_cast<decltype(&cblas_dsyr2k)>(f)(layout, uplo, trans, n, k, alpha, a, lda, b, ldb,
                                                 beta, c, ldc);
  });
}

OZDGEMM_API void cblas_zsyr2k(int layout, int uplo, int trans, int n, int k, const void* alpha,
                              const void* a, int lda, const void* b, int ldb, const void* beta,
                              void* c, int ldc) noexcept {
  rank_k_call<zd> x{};
  const bool parsed =
      alpha != nullptr && beta != nullptr &&
      ozdgemm::detail::cblas_rank_k<zd>(
          rank_k_kind::syr2k, layout, uplo, trans, n, k, *static_cast<const zd*>(alpha),
          static_cast<const zd*>(a), lda, static_cast<const zd*>(b), ldb,
          *static_cast<const zd*>(beta), static_cast<zd*>(c), ldc, &x);
  ozdgemm::detail::serve_or_forward("cblas_zsyr2k", parsed, x, "cblas_zsyr2k", true, [&](void* f) {
    reinterpret_cast<decltype(&cblas_zsyr2k)>(f)(layout, uplo, trans, n, k, alpha, a, lda, b, ldb,
                                                 beta, c, ldc);
  });
}

OZDGEMM_API void cblas_zher2k(int layout, int uplo, int trans, int n, int k, const void* alpha,
                              const void* a, int lda, const void* b, int ldb, double beta, void* c,
                              int ldc) noexcept {
  rank_k_call<zd> x{};
  const bool parsed = alpha != nullptr &&
                      ozdgemm::detail::cblas_rank_k<zd>(
                          rank_k_kind::her2k, layout, uplo, trans, n, k,
                          *static_cast<const zd*>(alpha), static_cast<const zd*>(a), lda,
                          static_cast<const zd*>(b), ldb, zd(beta), static_cast<zd*>(c), ldc, &x);
  ozdgemm::detail::serve_or_forward("cblas_zher2k", parsed, x, "cblas_zher2k", true, [&](void* f) {
    reinterpret_cast<decltype(&cblas_zher2k)>(f)(layout, uplo, trans, n, k, alpha, a, lda, b, ldb,
                                                 beta, c, ldc);
  });
}

OZDGEMM_API void cblas_dsymm(int layout, int side, int uplo, int m, int n, double alpha,
                             const double* a, int lda, const double* b, int ldb, double beta,
                             double* c, int ldc) noexcept {
  symm_call<double> x{};
  const bool parsed = ozdgemm::detail::cblas_symm<double>(false, layout, side, uplo, m, n, alpha, a,
                                                          lda, b, ldb, beta, c, ldc, &x);
  ozdgemm::detail::serve_or_forward("cblas_dsymm", parsed, x, "cblas_dsymm", true, [&](void* f) {
    reinterpret_cast<decltype(&cblas_dsymm)>(f)(layout, side, uplo, m, n, alpha, a, lda, b, ldb,
                                                beta, c, ldc);
  });
}

// ZSYMM and ZHEMM: one signature.
#define OZDGEMM_CBLAS_ZSYMM(NAME, HERM)                                                            \
  OZDGEMM_API void NAME(int layout, int side, int uplo, int m, int n, const void* alpha,           \
                        const void* a, int lda, const void* b, int ldb, const void* beta, void* c, \
                        int ldc) noexcept {                                                        \
    symm_call<zd> x{};                                                                             \
    const bool parsed = alpha != nullptr && beta != nullptr &&                                     \
                        ozdgemm::detail::cblas_symm<zd>(                                           \
                            HERM, layout, side, uplo, m, n, *static_cast<const zd*>(alpha),        \
                            static_cast<const zd*>(a), lda, static_cast<const zd*>(b), ldb,        \
                            *static_cast<const zd*>(beta), static_cast<zd*>(c), ldc, &x);          \
    ozdgemm::detail::serve_or_forward(#NAME, parsed, x, #NAME, true, [&](void* f) {                \
      reinterpret_cast<decltype(&NAME)>(f)(layout, side, uplo, m, n, alpha, a, lda, b, ldb, beta,  \
                                           c, ldc);                                                \
    });                                                                                            \
  }
OZDGEMM_CBLAS_ZSYMM(cblas_zsymm, false)
OZDGEMM_CBLAS_ZSYMM(cblas_zhemm, true)
#undef OZDGEMM_CBLAS_ZSYMM

// TRMM and TRSM: one signature per type.
#define OZDGEMM_CBLAS_DTRIANGULAR(NAME, SOLVE)                                                    \
  OZDGEMM_API void NAME(int layout, int side, int uplo, int transa, int diag, int m, int n,       \
                        double alpha, const double* a, int lda, double* b, int ldb) noexcept {    \
    triangular_call<double> x{};                                                                  \
    const bool parsed = ozdgemm::detail::cblas_triangular<double>(                                \
        SOLVE, layout, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, &x);                \
    ozdgemm::detail::serve_or_forward(#NAME, parsed, x, #NAME, true, [&](void* f) {               \
      reinterpret_cast<decltype(&NAME)>(f)(layout, side, uplo, transa, diag, m, n, alpha, a, lda, \
                                           b, ldb);                                               \
    });                                                                                           \
  }
#define OZDGEMM_CBLAS_ZTRIANGULAR(NAME, SOLVE)                                                    \
  OZDGEMM_API void NAME(int layout, int side, int uplo, int transa, int diag, int m, int n,       \
                        const void* alpha, const void* a, int lda, void* b, int ldb) noexcept {   \
    triangular_call<zd> x{};                                                                      \
    const bool parsed =                                                                           \
        alpha != nullptr &&                                                                       \
        ozdgemm::detail::cblas_triangular<zd>(                                                    \
            SOLVE, layout, side, uplo, transa, diag, m, n, *static_cast<const zd*>(alpha),        \
            static_cast<const zd*>(a), lda, static_cast<zd*>(b), ldb, &x);                        \
    ozdgemm::detail::serve_or_forward(#NAME, parsed, x, #NAME, true, [&](void* f) {               \
      reinterpret_cast<decltype(&NAME)>(f)(layout, side, uplo, transa, diag, m, n, alpha, a, lda, \
                                           b, ldb);                                               \
    });                                                                                           \
  }
OZDGEMM_CBLAS_DTRIANGULAR(cblas_dtrmm, false)
OZDGEMM_CBLAS_DTRIANGULAR(cblas_dtrsm, true)
OZDGEMM_CBLAS_ZTRIANGULAR(cblas_ztrmm, false)
OZDGEMM_CBLAS_ZTRIANGULAR(cblas_ztrsm, true)
#undef OZDGEMM_CBLAS_ZTRIANGULAR
#undef OZDGEMM_CBLAS_DTRIANGULAR

}  // extern "C"
