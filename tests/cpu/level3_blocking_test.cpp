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

#include "cpu/level3_definitions.hpp"
#include "level3/blocked.hpp"

namespace ozdgemm::test {
namespace {

using detail::level3_executor;

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
  const bool herm = kind == rank_k_kind::herk || kind == rank_k_kind::her2k ||
                    kind == rank_k_kind::herkx;
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
  // cuBLAS's SYRKX and HERKX (the device hooks only).
  check_rank_k<double>(rank_k_kind::syrkx);
  check_rank_k<zd>(rank_k_kind::syrkx);
  check_rank_k<zd>(rank_k_kind::herkx);
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
