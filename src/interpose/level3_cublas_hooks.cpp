// Intercepted cuBLAS Level-3 entry points other than GEMM: SYRK, SYR2K, SYRKX, SYMM, TRMM, TRSM
// (D and Z), HERK, HER2K, HERKX, HEMM, each with its _64 form. The thin layer of
// cublas_hooks.cpp: parse into one column-major level3 call and offer it to level3_device.hpp;
// otherwise (invalid arguments, scalars in device memory, a call that does not split) forward
// it unchanged to the real cuBLAS, which gives its own status. No exception leaves these
// functions.
#include <cublas_v2.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "api/dgemm_internal.hpp"
#include "common/cublas_api.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/process_state.hpp"
#include "interpose/cublas_next.hpp"
#include "interpose/level3_device.hpp"
#include "interpose/real_symbol.hpp"
#include "level3/level3_call.hpp"
#include "ozdgemm/export.h"

namespace ozdgemm::detail {
namespace {

using zd = std::complex<double>;
using cz = cuDoubleComplex;
// cuBLAS's enums as the level3 call's; false for a value cuBLAS rejects (the call is forwarded).
// Real routines read CUBLAS_OP_C as CUBLAS_OP_T.
bool parse(cublasFillMode_t v, uplo_kind* u) {
  if (v != CUBLAS_FILL_MODE_LOWER && v != CUBLAS_FILL_MODE_UPPER) return false;
  *u = v == CUBLAS_FILL_MODE_LOWER ? uplo_kind::lower : uplo_kind::upper;
  return true;
}
bool parse(cublasSideMode_t v, side_kind* s) {
  if (v != CUBLAS_SIDE_LEFT && v != CUBLAS_SIDE_RIGHT) return false;
  *s = v == CUBLAS_SIDE_LEFT ? side_kind::left : side_kind::right;
  return true;
}
bool parse(cublasDiagType_t v, diag_kind* d) {
  if (v != CUBLAS_DIAG_UNIT && v != CUBLAS_DIAG_NON_UNIT) return false;
  *d = v == CUBLAS_DIAG_UNIT ? diag_kind::unit : diag_kind::non_unit;
  return true;
}
bool parse(cublasOperation_t v, bool complex, trans_kind* t) {
  switch (v) {
    case CUBLAS_OP_N:
      *t = trans_kind::n;
      return true;
    case CUBLAS_OP_T:
      *t = trans_kind::t;
      return true;
    case CUBLAS_OP_C:
      *t = complex ? trans_kind::c : trans_kind::t;
      return true;
    default:
      return false;
  }
}

// A scalar argument as the level3 call's element type T.
template <class T>
T value(const double* p) {
  return T(*p);
}
template <class T>
T value(const cz* p) {
  return T(p->x, p->y);
}

template <class T>
const T* in(const void* p) {
  return static_cast<const T*>(p);
}
template <class T>
T* out(void* p) {
  return static_cast<T*>(p);
}

// Why the call's scalars cannot be read on the host (they are in device memory, or the handle is
// unusable), or nullptr.
const char* host_scalars(cublasHandle_t handle, const void* alpha, const void* beta) {
  if (!cuda_usable_in_this_process()) return cuda_unusable_reason();
  if (handle == nullptr || alpha == nullptr || beta == nullptr) return "null handle or scalar";
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  if (cublas_get_pointer_mode(handle, &mode) != CUBLAS_STATUS_SUCCESS) return "unreadable handle";
  return mode == CUBLAS_POINTER_MODE_HOST ? nullptr : "scalars in device memory";
}

// Serves the call or runs `native`: make() parses the arguments into the call (false for
// arguments cuBLAS rejects), read() then takes its scalars from host memory, serve(&status)
// offers it to level3_device.hpp. One decision line for a valid call that is forwarded before
// it reaches the blocking.
template <class Make, class Read, class Serve, class Native>
cublasStatus_t serve_level3(const char* entry, cublasHandle_t handle, const void* alpha,
                            const void* beta, int64_t m, int64_t n, int64_t k, Make&& make,
                            Read&& read, Serve&& serve, Native&& native) noexcept {
  if (inside_interception() || in_native_fallback()) return native();
  try {
    bool done = false;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (make()) {
      // The scalars are read only once the pointer mode says they are in host memory.
      const char* why = host_scalars(handle, alpha, beta);
      if (why == nullptr) {
        read();
        done = serve(&st);
      } else {
        log_call({entry, m, n, k, outcome::native, why, 0, 0.0, 0.0, 0.0});
      }
    }
    return done ? st : native();
  } catch (...) {
    return native();  // nothing enqueued: serve_on_device does not throw
  }
}

// SYRK, HERK, SYR2K, HER2K, SYRKX, HERKX. SA, SB: the types of alpha and beta (double where
// the routine takes a real scalar).
template <class T, class SA, class SB, class Native>
cublasStatus_t rank_k(const char* entry, rank_k_kind kind, cublasHandle_t h,
                      cublasFillMode_t uplo, cublasOperation_t trans, int64_t n, int64_t k,
                      const SA* alpha, const void* a, int64_t lda, const void* b, int64_t ldb,
                      const SB* beta, void* c, int64_t ldc, Native&& native) noexcept {
  constexpr bool complex = !std::is_same_v<T, double>;
  rank_k_call<T> x{kind, uplo_kind::lower, trans_kind::n, n, k, T(0), in<T>(a), lda,
                   in<T>(b), ldb, T(0), out<T>(c), ldc};
  auto make = [&] {
    return parse(uplo, &x.uplo) && parse(trans, complex, &x.trans) && valid(x, complex);
  };
  auto read = [&] { x.alpha = value<T>(alpha), x.beta = value<T>(beta); };
  auto serve = [&](cublasStatus_t* st) { return serve_on_device(x, h, entry, st); };
  return serve_level3(entry, h, alpha, beta, n, n, k, make, read, serve, native);
}

// SYMM, HEMM.
template <class T, class Native>
cublasStatus_t symm(const char* entry, bool hermitian, cublasHandle_t h, cublasSideMode_t side,
                    cublasFillMode_t uplo, int64_t m, int64_t n, const void* alpha, const void* a,
                    int64_t lda, const void* b, int64_t ldb, const void* beta, void* c,
                    int64_t ldc, Native&& native) noexcept {
  using S = std::conditional_t<std::is_same_v<T, double>, double, cz>;
  symm_call<T> x{hermitian, side_kind::left, uplo_kind::lower, m, n, T(0), in<T>(a), lda,
                 in<T>(b),  ldb,             T(0),             out<T>(c), ldc};
  auto make = [&] { return parse(side, &x.side) && parse(uplo, &x.uplo) && valid(x); };
  auto read = [&] { x.alpha = value<T>(in<S>(alpha)), x.beta = value<T>(in<S>(beta)); };
  auto serve = [&](cublasStatus_t* st) { return serve_on_device(x, h, entry, st); };
  const int64_t ka = side == CUBLAS_SIDE_LEFT ? m : n;
  return serve_level3(entry, h, alpha, beta, m, n, ka, make, read, serve, native);
}

// TRMM (c: cuBLAS's output C; B in place of C is the in-place form) and TRSM (c null).
template <class T, class Native>
cublasStatus_t triangular(const char* entry, cublasHandle_t h, cublasSideMode_t side,
                          cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
                          int64_t m, int64_t n, const void* alpha, const void* a, int64_t lda,
                          void* b, int64_t ldb, void* c, int64_t ldc, Native&& native) noexcept {
  using S = std::conditional_t<std::is_same_v<T, double>, double, cz>;
  constexpr bool complex = !std::is_same_v<T, double>;
  const bool solve = c == nullptr;
  // TRMM runs in place on C, from B.
  triangular_call<T> x{solve,     side_kind::left, uplo_kind::lower, trans_kind::n,
                       diag_kind::non_unit, m, n, T(0), in<T>(a), lda,
                       out<T>(solve ? b : c), solve ? ldb : ldc};
  auto make = [&] {
    if (!parse(side, &x.side) || !parse(uplo, &x.uplo) || !parse(trans, complex, &x.trans) ||
        !parse(diag, &x.diag) || !valid(x))
      return false;
    if (!solve) {
      // cuBLAS's rules for C; B and C the same matrix or apart (any other overlap: cuBLAS's).
      if (ldb < std::max<int64_t>(1, m) || ldc < std::max<int64_t>(1, m)) return false;
      const auto* b0 = static_cast<const char*>(b);
      const auto* c0 = static_cast<const char*>(c);
      const auto bytes = [&](int64_t ld) { return static_cast<size_t>(ld * n) * sizeof(T); };
      if (b == c ? ldb != ldc : (b0 < c0 + bytes(ldc) && c0 < b0 + bytes(ldb))) return false;
    }
    return true;
  };
  auto read = [&] { x.alpha = value<T>(in<S>(alpha)); };
  auto serve = [&](cublasStatus_t* st) {
    return solve ? serve_on_device(x, h, entry, st)
                 : serve_trmm_on_device(x, in<T>(b), ldb, h, entry, st);
  };
  const int64_t ka = side == CUBLAS_SIDE_LEFT ? m : n;
  return serve_level3(entry, h, alpha, alpha, m, n, ka, make, read, serve, native);
}

}  // namespace
}  // namespace ozdgemm::detail

using namespace ozdgemm::detail;

extern "C" {

// ---- SYRK, HERK: (handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc)
#define OZDGEMM_FORWARD next(h, uplo, trans, n, k, alpha, A, lda, beta, C, ldc)
#define OZDGEMM_RANK_K(NAME, INT, T, S, ELEM, KIND)                                              \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasFillMode_t uplo,                       \
                                  cublasOperation_t trans, INT n, INT k, const S* alpha,         \
                                  const ELEM* A, INT lda, const S* beta, ELEM* C, INT ldc)       \
      noexcept {                                                                                 \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasFillMode_t, cublasOperation_t, INT, INT, const S*, \
                 const ELEM*, INT, const S*, ELEM*, INT);                                        \
    return rank_k<T>(#NAME, KIND, h, uplo, trans, n, k, alpha, A, lda, nullptr, 0, beta, C, ldc, \
                     native);                                                                    \
  }
OZDGEMM_RANK_K(cublasDsyrk_v2, int, double, double, double, rank_k_kind::syrk)
OZDGEMM_RANK_K(cublasDsyrk_v2_64, int64_t, double, double, double, rank_k_kind::syrk)
OZDGEMM_RANK_K(cublasZsyrk_v2, int, zd, cz, cz, rank_k_kind::syrk)
OZDGEMM_RANK_K(cublasZsyrk_v2_64, int64_t, zd, cz, cz, rank_k_kind::syrk)
OZDGEMM_RANK_K(cublasZherk_v2, int, zd, double, cz, rank_k_kind::herk)
OZDGEMM_RANK_K(cublasZherk_v2_64, int64_t, zd, double, cz, rank_k_kind::herk)
#undef OZDGEMM_RANK_K
#undef OZDGEMM_FORWARD

// ---- SYR2K, HER2K, SYRKX, HERKX: (handle, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C,
// ldc); SB: beta's type (double for the Hermitian ones).
#define OZDGEMM_FORWARD next(h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
#define OZDGEMM_RANK_2K(NAME, INT, T, SB, ELEM, KIND)                                             \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasFillMode_t uplo,                        \
                                  cublasOperation_t trans, INT n, INT k, const ELEM* alpha,       \
                                  const ELEM* A, INT lda, const ELEM* B, INT ldb, const SB* beta, \
                                  ELEM* C, INT ldc) noexcept {                                    \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasFillMode_t, cublasOperation_t, INT, INT,            \
                 const ELEM*, const ELEM*, INT, const ELEM*, INT, const SB*, ELEM*, INT);         \
    return rank_k<T>(#NAME, KIND, h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc,      \
                     native);                                                                     \
  }
OZDGEMM_RANK_2K(cublasDsyr2k_v2, int, double, double, double, rank_k_kind::syr2k)
OZDGEMM_RANK_2K(cublasDsyr2k_v2_64, int64_t, double, double, double, rank_k_kind::syr2k)
OZDGEMM_RANK_2K(cublasZsyr2k_v2, int, zd, cz, cz, rank_k_kind::syr2k)
OZDGEMM_RANK_2K(cublasZsyr2k_v2_64, int64_t, zd, cz, cz, rank_k_kind::syr2k)
OZDGEMM_RANK_2K(cublasZher2k_v2, int, zd, double, cz, rank_k_kind::her2k)
OZDGEMM_RANK_2K(cublasZher2k_v2_64, int64_t, zd, double, cz, rank_k_kind::her2k)
OZDGEMM_RANK_2K(cublasDsyrkx, int, double, double, double, rank_k_kind::syrkx)
OZDGEMM_RANK_2K(cublasDsyrkx_64, int64_t, double, double, double, rank_k_kind::syrkx)
OZDGEMM_RANK_2K(cublasZsyrkx, int, zd, cz, cz, rank_k_kind::syrkx)
OZDGEMM_RANK_2K(cublasZsyrkx_64, int64_t, zd, cz, cz, rank_k_kind::syrkx)
OZDGEMM_RANK_2K(cublasZherkx, int, zd, double, cz, rank_k_kind::herkx)
OZDGEMM_RANK_2K(cublasZherkx_64, int64_t, zd, double, cz, rank_k_kind::herkx)
#undef OZDGEMM_RANK_2K
#undef OZDGEMM_FORWARD

// ---- SYMM, HEMM: (handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)
#define OZDGEMM_FORWARD next(h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)
#define OZDGEMM_SYMM(NAME, INT, T, ELEM, HERMITIAN)                                              \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, \
                                  INT m, INT n, const ELEM* alpha, const ELEM* A, INT lda,       \
                                  const ELEM* B, INT ldb, const ELEM* beta, ELEM* C, INT ldc)    \
      noexcept {                                                                                 \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasSideMode_t, cublasFillMode_t, INT, INT,            \
                 const ELEM*, const ELEM*, INT, const ELEM*, INT, const ELEM*, ELEM*, INT);      \
    return symm<T>(#NAME, HERMITIAN, h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc,   \
                   native);                                                                      \
  }
OZDGEMM_SYMM(cublasDsymm_v2, int, double, double, false)
OZDGEMM_SYMM(cublasDsymm_v2_64, int64_t, double, double, false)
OZDGEMM_SYMM(cublasZsymm_v2, int, zd, cz, false)
OZDGEMM_SYMM(cublasZsymm_v2_64, int64_t, zd, cz, false)
OZDGEMM_SYMM(cublasZhemm_v2, int, zd, cz, true)
OZDGEMM_SYMM(cublasZhemm_v2_64, int64_t, zd, cz, true)
#undef OZDGEMM_SYMM
#undef OZDGEMM_FORWARD

// ---- TRMM: (handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, ldc)
#define OZDGEMM_FORWARD next(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, ldc)
#define OZDGEMM_TRMM(NAME, INT, T, ELEM)                                                        \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, \
                                  cublasOperation_t trans, cublasDiagType_t diag, INT m, INT n,  \
                                  const ELEM* alpha, const ELEM* A, INT lda, const ELEM* B,      \
                                  INT ldb, ELEM* C, INT ldc) noexcept {                          \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t,   \
                 cublasDiagType_t, INT, INT, const ELEM*, const ELEM*, INT, const ELEM*, INT,    \
                 ELEM*, INT);                                                                    \
    return triangular<T>(#NAME, h, side, uplo, trans, diag, m, n, alpha, A, lda,                 \
                         const_cast<ELEM*>(B), ldb, C, ldc, native);                             \
  }
OZDGEMM_TRMM(cublasDtrmm_v2, int, double, double)
OZDGEMM_TRMM(cublasDtrmm_v2_64, int64_t, double, double)
OZDGEMM_TRMM(cublasZtrmm_v2, int, zd, cz)
OZDGEMM_TRMM(cublasZtrmm_v2_64, int64_t, zd, cz)
#undef OZDGEMM_TRMM
#undef OZDGEMM_FORWARD

// ---- TRSM: (handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb)
#define OZDGEMM_FORWARD next(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb)
#define OZDGEMM_TRSM(NAME, INT, T, ELEM)                                                        \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, \
                                  cublasOperation_t trans, cublasDiagType_t diag, INT m, INT n,  \
                                  const ELEM* alpha, const ELEM* A, INT lda, ELEM* B, INT ldb)   \
      noexcept {                                                                                 \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t,   \
                 cublasDiagType_t, INT, INT, const ELEM*, const ELEM*, INT, ELEM*, INT);         \
    return triangular<T>(#NAME, h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb,         \
                         nullptr, 0, native);                                                    \
  }
OZDGEMM_TRSM(cublasDtrsm_v2, int, double, double)
OZDGEMM_TRSM(cublasDtrsm_v2_64, int64_t, double, double)
OZDGEMM_TRSM(cublasZtrsm_v2, int, zd, cz)
OZDGEMM_TRSM(cublasZtrsm_v2_64, int64_t, zd, cz)
#undef OZDGEMM_TRSM
#undef OZDGEMM_FORWARD

}  // extern "C"

