// One Level-3 BLAS call other than GEMM (SYRK, HERK, SYR2K, HER2K, SYMM, HEMM, TRMM, TRSM),
// stripped of its calling convention, with reference BLAS's argument rules. T is double or
// std::complex<double>; matrices are column-major.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>

namespace ozdgemm::detail {

enum class uplo_kind { upper, lower };
enum class side_kind { left, right };
enum class diag_kind { non_unit, unit };
// op(X): X, X^T, X^H. For real data c is t.
enum class trans_kind { n, t, c };

inline double conj_of(double x) { return x; }
inline std::complex<double> conj_of(std::complex<double> x) { return std::conj(x); }

// SYRK:  C = alpha op(A) op(A)^T + beta C          HERK:  ^H, alpha and beta real
// SYR2K: C = alpha op(A) op(B)^T + alpha op(B) op(A)^T + beta C
// HER2K: C = alpha op(A) op(B)^H + conj(alpha) op(B) op(A)^H + beta C, beta real
// SYRKX: C = alpha op(A) op(B)^T + beta C          HERKX: ^H, beta real (cuBLAS's extensions,
//        for a product the caller knows to be symmetric or Hermitian)
// op(A), op(B) are n x k (trans n) or the transposes of k x n matrices; only the `uplo`
// triangle of the n x n C is referenced.
enum class rank_k_kind { syrk, herk, syr2k, her2k, syrkx, herkx };

template <class T>
struct rank_k_call {
  rank_k_kind kind;
  uplo_kind uplo;
  trans_kind trans;
  int64_t n, k;
  T alpha;
  const T* a;
  int64_t lda;
  const T* b;  // SYR2K, HER2K, SYRKX, HERKX only
  int64_t ldb;
  T beta;
  T* c;
  int64_t ldc;

  bool hermitian() const {
    return kind == rank_k_kind::herk || kind == rank_k_kind::her2k || kind == rank_k_kind::herkx;
  }
  // Two products (SYR2K, HER2K).
  bool two() const { return kind == rank_k_kind::syr2k || kind == rank_k_kind::her2k; }
  // Reads B (SYR2K, HER2K, SYRKX, HERKX).
  bool has_b() const { return two() || kind == rank_k_kind::syrkx || kind == rank_k_kind::herkx; }
};

// SYMM (HEMM): C = alpha A B + beta C (side left) or alpha B A + beta C (right), A symmetric
// (Hermitian) of order m (left) or n (right), only its `uplo` triangle referenced.
template <class T>
struct symm_call {
  bool hermitian;
  side_kind side;
  uplo_kind uplo;
  int64_t m, n;
  T alpha;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T beta;
  T* c;
  int64_t ldc;
};

// TRMM: B = alpha op(A) B (left) or alpha B op(A) (right); TRSM: solves op(A) X = alpha B
// (left) or X op(A) = alpha B (right), X overwriting B. A triangular of order m (left) or n
// (right), its diagonal taken as 1 when `diag` is unit.
template <class T>
struct triangular_call {
  bool solve;  // TRSM; else TRMM
  side_kind side;
  uplo_kind uplo;
  trans_kind trans;
  diag_kind diag;
  int64_t m, n;
  T alpha;
  const T* a;
  int64_t lda;
  T* b;
  int64_t ldb;
};

// Reference BLAS's checks (the INFO it would report is the CPU BLAS's business: an invalid call
// is forwarded to it unchanged). `complex`: ZSYRK/ZSYR2K take N or T, ZHERK/ZHER2K N or C.
template <class T>
bool valid(const rank_k_call<T>& x, bool complex) {
  if (complex && x.trans == (x.hermitian() ? trans_kind::t : trans_kind::c)) return false;
  const int64_t rows = x.trans == trans_kind::n ? x.n : x.k;
  return x.n >= 0 && x.k >= 0 && x.lda >= std::max<int64_t>(1, rows) &&
         (!x.has_b() || x.ldb >= std::max<int64_t>(1, rows)) && x.ldc >= std::max<int64_t>(1, x.n);
}

template <class T>
bool valid(const symm_call<T>& x) {
  const int64_t ka = x.side == side_kind::left ? x.m : x.n;
  return x.m >= 0 && x.n >= 0 && x.lda >= std::max<int64_t>(1, ka) &&
         x.ldb >= std::max<int64_t>(1, x.m) && x.ldc >= std::max<int64_t>(1, x.m);
}

template <class T>
bool valid(const triangular_call<T>& x) {
  const int64_t ka = x.side == side_kind::left ? x.m : x.n;
  return x.m >= 0 && x.n >= 0 && x.lda >= std::max<int64_t>(1, ka) &&
         x.ldb >= std::max<int64_t>(1, x.m);
}

}  // namespace ozdgemm::detail
