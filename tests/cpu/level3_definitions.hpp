// Each Level-3 routine by its definition, on plain loops (the expected results of the Level-3
// tests, and the native routines of their executors), with the test matrices they use.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "level3/level3_call.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {

using detail::diag_kind;
using detail::rank_k_call;
using detail::rank_k_kind;
using detail::side_kind;
using detail::symm_call;
using detail::trans_kind;
using detail::triangular_call;
using detail::uplo_kind;
using zd = std::complex<double>;

template <class T>
T poison() {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  return T(kNaN);
}

// re + i im (double: re).
template <class T>
T value(double re, double im) {
  if constexpr (std::is_same_v<T, double>)
    return re;
  else
    return T(re, im);
}

inline double conj_if(double x, bool) { return x; }
inline zd conj_if(zd x, bool c) { return c ? std::conj(x) : x; }

// op(X)(i, j) of a stored column-major X.
template <class T>
T op_element(trans_kind t, const T* x, int64_t ld, int64_t i, int64_t j) {
  if (t == trans_kind::n) return x[j * ld + i];
  return conj_if(x[i * ld + j], t == trans_kind::c);
}

// C = alpha op(A) op(B) + beta C by definition, beta == 0 not reading C.
template <class T>
void plain_gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      T s = 0;
      for (int64_t l = 0; l < k; ++l)
        s += op_element(ta, a, lda, i, l) * op_element(tb, b, ldb, l, j);
      T& cij = c[j * ldc + i];
      cij = alpha * s + (beta == T(0) ? T(0) : beta * cij);
    }
}

// The symmetric (Hermitian) or triangular matrix A of order n stored in `uplo`, as a full
// matrix: the other triangle mirrored (symm) or zero (triangular), a unit diagonal as 1.
template <class T>
std::vector<T> full_structured(const T* a, int64_t lda, int64_t n, uplo_kind uplo, bool symmetric,
                               bool hermitian, diag_kind diag) {
  std::vector<T> f(static_cast<size_t>(n * n), T(0));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const bool stored = uplo == uplo_kind::lower ? i >= j : i <= j;
      T v = 0;
      if (stored)
        v = a[j * lda + i];
      else if (symmetric)
        v = conj_if(a[i * lda + j], hermitian);
      if (i == j && hermitian) v = std::real(v);
      if (i == j && diag == diag_kind::unit) v = 1;
      f[static_cast<size_t>(j * n + i)] = v;
    }
  return f;
}

// The definition of each routine (the executor's native routines, and the expected results).
template <class T>
void plain(const rank_k_call<T>& x) {
  const trans_kind t = x.hermitian() ? trans_kind::c : trans_kind::t;
  const trans_kind ta = x.trans == trans_kind::n ? trans_kind::n : t;
  const trans_kind tb = x.trans == trans_kind::n ? t : trans_kind::n;
  std::vector<T> p(static_cast<size_t>(x.n * x.n));
  plain_gemm<T>(ta, tb, x.n, x.n, x.k, x.alpha, x.a, x.lda, x.has_b() ? x.b : x.a,
                x.has_b() ? x.ldb : x.lda, T(0), p.data(), x.n);
  if (x.two()) {
    const T alpha2 = x.hermitian() ? detail::conj_of(x.alpha) : x.alpha;
    plain_gemm<T>(ta, tb, x.n, x.n, x.k, alpha2, x.b, x.ldb, x.a, x.lda, T(1), p.data(), x.n);
  }
  for (int64_t j = 0; j < x.n; ++j)
    for (int64_t i = x.uplo == uplo_kind::lower ? j : 0;
         i <= (x.uplo == uplo_kind::lower ? x.n - 1 : j); ++i) {
      T& c = x.c[j * x.ldc + i];
      c = p[static_cast<size_t>(j * x.n + i)] + (x.beta == T(0) ? T(0) : x.beta * c);
      if (i == j && x.hermitian()) c = std::real(c);
    }
}

template <class T>
void plain(const symm_call<T>& x) {
  const bool left = x.side == side_kind::left;
  const int64_t ka = left ? x.m : x.n;
  const std::vector<T> a =
      full_structured(x.a, x.lda, ka, x.uplo, true, x.hermitian, diag_kind::non_unit);
  if (left)
    plain_gemm<T>(trans_kind::n, trans_kind::n, x.m, x.n, x.m, x.alpha, a.data(), ka, x.b, x.ldb,
                  x.beta, x.c, x.ldc);
  else
    plain_gemm<T>(trans_kind::n, trans_kind::n, x.m, x.n, x.n, x.alpha, x.b, x.ldb, a.data(), ka,
                  x.beta, x.c, x.ldc);
}

// op(A) of a TRMM/TRSM call as a full ka x ka matrix (leading dimension ka).
template <class T>
std::vector<T> full_op(const triangular_call<T>& x) {
  const int64_t ka = x.side == side_kind::left ? x.m : x.n;
  const std::vector<T> s = full_structured(x.a, x.lda, ka, x.uplo, false, false, x.diag);
  std::vector<T> op(static_cast<size_t>(ka * ka));
  for (int64_t j = 0; j < ka; ++j)
    for (int64_t i = 0; i < ka; ++i)
      op[static_cast<size_t>(j * ka + i)] = op_element(x.trans, s.data(), ka, i, j);
  return op;
}

template <class T>
void plain(const triangular_call<T>& x) {
  const bool left = x.side == side_kind::left;
  const int64_t ka = left ? x.m : x.n;
  const std::vector<T> op = full_op(x);
  const auto t = [&](int64_t i, int64_t j) { return op[static_cast<size_t>(j * ka + i)]; };
  const auto b = [&](int64_t i, int64_t j) -> T& { return x.b[j * x.ldb + i]; };
  if (!x.solve) {
    std::vector<T> r(static_cast<size_t>(x.m * x.n), T(0));
    for (int64_t j = 0; j < x.n; ++j)
      for (int64_t i = 0; i < x.m; ++i) {
        T sum = 0;
        for (int64_t l = 0; l < ka; ++l) sum += left ? t(i, l) * b(l, j) : b(i, l) * t(l, j);
        r[static_cast<size_t>(j * x.m + i)] = x.alpha * sum;
      }
    for (int64_t j = 0; j < x.n; ++j)
      for (int64_t i = 0; i < x.m; ++i) b(i, j) = r[static_cast<size_t>(j * x.m + i)];
    return;
  }
  const bool lower_op = (x.uplo == uplo_kind::lower) == (x.trans == trans_kind::n);
  for (int64_t j = 0; j < x.n; ++j)
    for (int64_t i = 0; i < x.m; ++i) b(i, j) = x.alpha * b(i, j);
  if (left) {  // op(A) X = B, column by column, by substitution
    for (int64_t j = 0; j < x.n; ++j)
      for (int64_t q = 0; q < ka; ++q) {
        const int64_t i = lower_op ? q : ka - 1 - q;
        T sum = b(i, j);
        for (int64_t l = 0; l < ka; ++l)
          if (lower_op ? l < i : l > i) sum -= t(i, l) * b(l, j);
        b(i, j) = sum / t(i, i);
      }
  } else {  // X op(A) = B, row by row
    for (int64_t i = 0; i < x.m; ++i)
      for (int64_t q = 0; q < ka; ++q) {
        const int64_t j = lower_op ? ka - 1 - q : q;
        T sum = b(i, j);
        for (int64_t l = 0; l < ka; ++l)
          if (lower_op ? l > j : l < j) sum -= b(i, l) * t(l, j);
        b(i, j) = sum / t(j, j);
      }
  }
}

template <class T>
std::vector<T> random_matrix(int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  rng r(seed);
  std::vector<T> x(static_cast<size_t>(ld * std::max<int64_t>(cols, 1)), poison<T>());
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const double re = r.uniform() - 0.5, im = r.uniform() - 0.5;
      x[static_cast<size_t>(j * ld + i)] = value<T>(re, im);
    }
  return x;
}

// A stored in `uplo` only: the other triangle (and, unit, the diagonal) poisoned; a triangular
// A gets a diagonal of magnitude >= 2 so the solves are well conditioned.
template <class T>
std::vector<T> structured(int64_t n, int64_t ld, uplo_kind uplo, bool triangular, diag_kind diag,
                          uint64_t seed) {
  std::vector<T> a = random_matrix<T>(n, n, ld, seed);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      T& v = a[static_cast<size_t>(j * ld + i)];
      if (i == j) {
        if (diag == diag_kind::unit)
          v = poison<T>();
        else if (triangular)
          v = v + T(v == v && std::real(v) < 0 ? -2.0 : 2.0);
      } else if (uplo == uplo_kind::lower ? i < j : i > j) {
        v = poison<T>();
      } else if (triangular) {
        v = v / T(static_cast<double>(n));  // keeps op(A) well conditioned
      }
    }
  return a;
}

}  // namespace ozdgemm::test
