// The recursive blocking of the Level-3 routines (src/level3/blocked.hpp) against each routine's
// definition, real and complex: every uplo, trans, side and diag; orders that split unevenly and
// down to blocks of 1; k = 0; alpha = 0 (TRMM, TRSM). The executor here is plain loops, so what
// is checked is the decomposition: the result equals the routine's definition up to the
// rounding of another summation order, only the referenced triangle of C (and of A) is read or
// written, a unit diagonal is never read, and HERK's diagonal stays real.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "level3/blocked.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {
namespace {

using detail::diag_kind;
using detail::level3_executor;
using detail::rank_k_call;
using detail::rank_k_kind;
using detail::side_kind;
using detail::symm_call;
using detail::trans_kind;
using detail::triangular_call;
using detail::uplo_kind;
using zd = std::complex<double>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
T poison() {
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

double conj_if(double x, bool) { return x; }
zd conj_if(zd x, bool c) { return c ? std::conj(x) : x; }

// op(X)(i, j) of a stored column-major X.
template <class T>
T op_at(trans_kind t, const T* x, int64_t ld, int64_t i, int64_t j) {
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
      for (int64_t l = 0; l < k; ++l) s += op_at(ta, a, lda, i, l) * op_at(tb, b, ldb, l, j);
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
  plain_gemm<T>(ta, tb, x.n, x.n, x.k, x.alpha, x.a, x.lda, x.two() ? x.b : x.a,
                x.two() ? x.ldb : x.lda, T(0), p.data(), x.n);
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

template <class T>
void plain(const triangular_call<T>& x) {
  const bool left = x.side == side_kind::left;
  const int64_t ka = left ? x.m : x.n;
  const std::vector<T> s = full_structured(x.a, x.lda, ka, x.uplo, false, false, x.diag);
  std::vector<T> op(static_cast<size_t>(ka * ka));  // op(A), full
  for (int64_t j = 0; j < ka; ++j)
    for (int64_t i = 0; i < ka; ++i)
      op[static_cast<size_t>(j * ka + i)] = op_at(x.trans, s.data(), ka, i, j);
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

// Plain loops, blocks down to `block`; counts what it ran.
template <class T>
class plain_executor : public level3_executor<T> {
 public:
  explicit plain_executor(int64_t block) : block_(block) {}
  void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    ++gemms;
    plain_gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  bool splits(int64_t order, int64_t, int64_t, int64_t) override { return order > block_; }
  void native(const rank_k_call<T>& x) override { ++natives, plain(x); }
  void native(const symm_call<T>& x) override { ++natives, plain(x); }
  void native(const triangular_call<T>& x) override { ++natives, plain(x); }
  int gemms = 0, natives = 0;

 private:
  int64_t block_;
};

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

// Close enough for another summation order of O(1) data, and identical NaN pattern (a poisoned
// element read by mistake shows as a NaN).
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const bool gn = std::isnan(std::real(got[i])) || std::isnan(std::imag(got[i]));
    const bool wn = std::isnan(std::real(want[i])) || std::isnan(std::imag(want[i]));
    ASSERT_EQ(gn, wn) << "element " << i;
    if (gn) continue;
    ASSERT_LE(std::abs(got[i] - want[i]), tol * (1 + std::abs(want[i]))) << "element " << i;
    if (std::imag(want[i]) == 0) {  // HERK's diagonal: real in both
      ASSERT_EQ(std::imag(got[i]), 0.0) << "element " << i;
    }
  }
}

constexpr double kTol = 1e-13;
const int64_t kOrders[] = {1, 2, 3, 7, 16, 33};

template <class T>
void check_rank_k(rank_k_kind kind) {
  const bool complex = std::is_same_v<T, zd>;
  const bool herm = kind == rank_k_kind::herk || kind == rank_k_kind::her2k;
  for (uplo_kind uplo : {uplo_kind::lower, uplo_kind::upper})
    for (trans_kind trans : {trans_kind::n, herm || !complex ? trans_kind::c : trans_kind::t})
      for (int64_t n : kOrders)
        for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{5}})
          for (int64_t block : {int64_t{1}, int64_t{3}}) {
            SCOPED_TRACE(testing::Message() << "uplo " << int(uplo) << " trans " << int(trans)
                                            << " n " << n << " k " << k << " block " << block);
            const int64_t rows = trans == trans_kind::n ? n : k,
                          cols = trans == trans_kind::n ? k : n;
            const int64_t lda = rows + 2, ldc = n + 1;
            const std::vector<T> a = random_matrix<T>(rows, cols, lda, 1 + n);
            const std::vector<T> b = random_matrix<T>(rows, cols, lda, 2 + n);
            std::vector<T> c = random_matrix<T>(n, n, ldc, 3 + n);
            for (int64_t j = 0; j < n; ++j)  // the triangle not referenced: poisoned
              for (int64_t i = 0; i < n; ++i)
                if (uplo == uplo_kind::lower ? i < j : i > j)
                  c[static_cast<size_t>(j * ldc + i)] = poison<T>();
            const T alpha = value<T>(0.75, kind == rank_k_kind::herk ? 0.0 : 0.5);  // HERK: real
            rank_k_call<T> x{kind, uplo,     trans, n,       k,       alpha, a.data(),
                             lda,  b.data(), lda,   T(-0.5), nullptr, ldc};
            std::vector<T> want = c, got = c;
            x.c = want.data();
            plain(x);
            x.c = got.data();
            plain_executor<T> ex(block);
            detail::blocked(x, ex);
            expect_close(got, want, kTol);
            if (n > block && k > 0) {
              EXPECT_GT(ex.gemms, 0);
            }
          }
}

TEST(Level3Blocking, RankKUpdatesEqualTheirDefinition) {
  check_rank_k<double>(rank_k_kind::syrk);
  check_rank_k<double>(rank_k_kind::syr2k);
  check_rank_k<zd>(rank_k_kind::syrk);
  check_rank_k<zd>(rank_k_kind::syr2k);
  check_rank_k<zd>(rank_k_kind::herk);
  check_rank_k<zd>(rank_k_kind::her2k);
}

template <class T>
void check_symm(bool hermitian) {
  for (side_kind side : {side_kind::left, side_kind::right})
    for (uplo_kind uplo : {uplo_kind::lower, uplo_kind::upper})
      for (int64_t ka : kOrders)
        for (int64_t other : {int64_t{1}, int64_t{4}})
          for (T beta : {T(0), T(-0.5)}) {
            SCOPED_TRACE(testing::Message() << "side " << int(side) << " uplo " << int(uplo)
                                            << " order " << ka << " other " << other);
            const bool left = side == side_kind::left;
            const int64_t m = left ? ka : other, n = left ? other : ka;
            const int64_t lda = ka + 1, ldb = m + 2, ldc = m + 3;
            const std::vector<T> a =
                structured<T>(ka, lda, uplo, false, diag_kind::non_unit, 7 + ka);
            const std::vector<T> b = random_matrix<T>(m, n, ldb, 8 + ka);
            std::vector<T> c = random_matrix<T>(m, n, ldc, 9 + ka);
            if (beta == T(0)) c.assign(c.size(), poison<T>());  // beta = 0 never reads C
            const T alpha = value<T>(1.25, -0.25);
            symm_call<T> x{hermitian, side,     uplo, m,    n,       alpha, a.data(),
                           lda,       b.data(), ldb,  beta, nullptr, ldc};
            std::vector<T> want = c, got = c;
            // The expected result reads C only where beta needs it; padding stays poisoned.
            x.c = want.data();
            plain(x);
            x.c = got.data();
            plain_executor<T> ex(2);
            detail::blocked(x, ex);
            expect_close(got, want, kTol);
            if (ka > 2) {
              EXPECT_GT(ex.gemms, 0);
            }
          }
}

TEST(Level3Blocking, SymmetricProductsEqualTheirDefinition) {
  check_symm<double>(false);
  check_symm<zd>(false);
  check_symm<zd>(true);
}

template <class T>
void check_triangular(bool solve) {
  const bool complex = std::is_same_v<T, zd>;
  for (side_kind side : {side_kind::left, side_kind::right})
    for (uplo_kind uplo : {uplo_kind::lower, uplo_kind::upper})
      for (trans_kind trans : {trans_kind::n, trans_kind::t, trans_kind::c})
        for (diag_kind diag : {diag_kind::non_unit, diag_kind::unit})
          for (int64_t ka : kOrders)
            for (T alpha : {value<T>(0.75, 0.25), T(0)}) {
              if (!complex && trans == trans_kind::c) continue;
              SCOPED_TRACE(testing::Message()
                           << "side " << int(side) << " uplo " << int(uplo) << " trans "
                           << int(trans) << " diag " << int(diag) << " order " << ka);
              const bool left = side == side_kind::left;
              const int64_t m = left ? ka : 5, n = left ? 4 : ka;
              const int64_t lda = ka + 2, ldb = m + 1;
              const std::vector<T> a = structured<T>(ka, lda, uplo, true, diag, 11 + ka);
              std::vector<T> b = random_matrix<T>(m, n, ldb, 12 + ka);
              triangular_call<T> x{solve, side,  uplo,     trans, diag,    m,
                                   n,     alpha, a.data(), lda,   nullptr, ldb};
              std::vector<T> want = b, got = b;
              x.b = want.data();
              plain(x);
              x.b = got.data();
              plain_executor<T> ex(1);
              detail::blocked(x, ex);
              expect_close(got, want, solve ? 1e-12 : kTol);
              if (ka > 1 && alpha != T(0)) {
                EXPECT_GT(ex.gemms, 0);
              }
            }
}

TEST(Level3Blocking, TriangularProductsAndSolvesEqualTheirDefinition) {
  check_triangular<double>(false);
  check_triangular<double>(true);
  check_triangular<zd>(false);
  check_triangular<zd>(true);
}

}  // namespace
}  // namespace ozdgemm::test
