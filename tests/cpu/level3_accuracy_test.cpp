// TRSM with emulated updates meets native TRSM's error bound (docs/level3.md, "Accuracy"). The
// blocked solve of src/level3/blocked.hpp runs its GEMM updates on the host reference of the
// emulation at the default (certified count, target native; a block no count serves runs in
// FP64) and its diagonal blocks by substitution, as a CPU BLAS solves them. For every side, uplo,
// trans and diag, on data with wide exponent ranges, the residual R = alpha B - op(A) X (X op(A)
// on the right), computed in double-double, must satisfy native substitution's bound
//   |R_ij| <= (ka + 2) u (|op(A)||X|)_ij + 2 u |alpha B_ij|        (complex: twice that)
// element by element (u = 2^-53, ka the order of A, plus the double-double rounding u |R|);
// the unblocked substitution is checked against the same bound, so the test shows both solves
// within it, not merely close to each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "cpu/level3_definitions.hpp"
#include "level3/blocked.hpp"
#include "ozdgemm/ozdgemm.h"
#include "support/dd_reference.hpp"

namespace ozdgemm::test {
namespace {

constexpr double kU = 0x1p-53;

char trans_char(trans_kind t) { return t == trans_kind::n ? 'N' : t == trans_kind::t ? 'T' : 'C'; }

// Updates on the emulation's host reference (default options), diagonal blocks by substitution.
template <class T>
class emulating_executor : public detail::level3_executor<T> {
 public:
  void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    ++gemms;
    ozdgemm_status_t st;
    if constexpr (std::is_same_v<T, double>) {
      st = ozdgemm_dgemm_reference(trans_char(ta), trans_char(tb), m, n, k, alpha, a, lda, b, ldb,
                                   beta, c, ldc, ozdgemm_default_options());
    } else {
      const auto z = [](const T* p) { return reinterpret_cast<const cuDoubleComplex*>(p); };
      st = ozdgemm_zgemm_reference(
          trans_char(ta), trans_char(tb), m, n, k, make_cuDoubleComplex(alpha.real(), alpha.imag()),
          z(a), lda, z(b), ldb, make_cuDoubleComplex(beta.real(), beta.imag()),
          reinterpret_cast<cuDoubleComplex*>(c), ldc, ozdgemm_default_options());
    }
    ASSERT_EQ(st, OZDGEMM_STATUS_SUCCESS);
  }
  bool splits(int64_t order, int64_t, int64_t, int64_t) override { return order > 12; }
  void native(const rank_k_call<T>& x) override { plain(x); }
  void native(const symm_call<T>& x) override { plain(x); }
  void native(const triangular_call<T>& x) override { plain(x); }
  int gemms = 0;
};

// The largest |R_ij| / bound_ij of solution X of `x` (x.b still holding alpha B's B).
template <class T>
double worst_residual_ratio(const triangular_call<T>& x, const std::vector<T>& b,
                            const std::vector<T>& solution) {
  const bool left = x.side == side_kind::left;
  const int64_t ka = left ? x.m : x.n;
  const std::vector<T> op = full_op(x);
  std::vector<T> r = b;  // alpha B - op(A) X, in double-double
  std::vector<double> mag(static_cast<size_t>(x.m * x.n));
  const char n = 'N';
  const T* first = left ? op.data() : solution.data();
  const T* second = left ? solution.data() : op.data();
  const int64_t ld1 = left ? ka : x.ldb, ld2 = left ? x.ldb : ka;
  if constexpr (std::is_same_v<T, double>) {
    dd_gemm(n, n, x.m, x.n, ka, -1.0, first, ld1, second, ld2, x.alpha, r.data(), x.ldb);
    abs_product(n, n, x.m, x.n, ka, first, ld1, second, ld2, mag.data(), x.m);
  } else {
    dd_zgemm(n, n, x.m, x.n, ka, T(-1), first, ld1, second, ld2, x.alpha, r.data(), x.ldb);
    abs_zproduct(n, n, x.m, x.n, ka, first, ld1, second, ld2, mag.data(), x.m);
  }
  const double c = (std::is_same_v<T, double> ? 1.0 : 2.0) * static_cast<double>(ka + 2) * kU;
  double worst = 0;
  for (int64_t j = 0; j < x.n; ++j)
    for (int64_t i = 0; i < x.m; ++i) {
      const size_t e = static_cast<size_t>(j * x.ldb + i);
      const double bound = c * mag[static_cast<size_t>(j * x.m + i)] +
                           (c / (ka + 2)) * 2 * std::abs(x.alpha * b[e]) + kU * std::abs(r[e]);
      worst = std::max(worst, std::abs(r[e]) / bound);
    }
  return worst;
}

// rows x cols entries (U - 0.5) exp(phi N(0, 1)) in each part (phi_matrix), leading dimension ld.
template <class T>
std::vector<T> phi_values(int64_t rows, int64_t cols, int64_t ld, double phi, uint64_t seed) {
  const int parts = std::is_same_v<T, double> ? 1 : 2;
  const host_matrix x = phi_matrix(rows, cols * parts, phi, seed);
  std::vector<T> v(static_cast<size_t>(ld * cols));
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      v[static_cast<size_t>(j * ld + i)] =
          value<T>(x(i, j * parts), parts == 2 ? x(i, j * parts + 1) : 0.0);
  return v;
}

// A triangular A of order ka with entries spanning exp(phi N(0,1)) and diagonal entries of at
// least the magnitude of their row, B likewise.
template <class T>
void check_trsm(side_kind side, uplo_kind uplo, trans_kind trans, diag_kind diag, double phi) {
  SCOPED_TRACE(testing::Message() << "side " << int(side) << " uplo " << int(uplo) << " trans "
                                  << int(trans) << " diag " << int(diag) << " phi " << phi);
  const bool left = side == side_kind::left;
  const int64_t ka = 100, other = 24;
  const int64_t m = left ? ka : other, n = left ? other : ka, lda = ka + 3, ldb = m + 1;
  std::vector<T> a = phi_values<T>(ka, ka, lda, phi, 91);
  for (int64_t i = 0; i < ka; ++i) {  // a dominant diagonal keeps X finite for any phi
    double row = 0;
    for (int64_t j = 0; j < ka; ++j)
      row = std::max(row, std::abs(a[static_cast<size_t>(j * lda + i)]));
    a[static_cast<size_t>(i * lda + i)] = value<T>(row + 1, 0.0);
  }
  const std::vector<T> b = phi_values<T>(m, n, ldb, phi, 92);

  const T alpha = value<T>(0.75, 0.5);
  triangular_call<T> x{true, side, uplo, trans, diag, m, n, alpha, a.data(), lda, nullptr, ldb};
  std::vector<T> native = b, emulated = b;
  x.b = native.data();
  plain(x);
  x.b = emulated.data();
  emulating_executor<T> ex;
  detail::blocked(x, ex);
  ASSERT_GT(ex.gemms, 0);
  const double native_ratio = worst_residual_ratio(x, b, native);
  const double emulated_ratio = worst_residual_ratio(x, b, emulated);
  EXPECT_LE(native_ratio, 1.0);
  EXPECT_LE(emulated_ratio, 1.0) << "native's worst ratio " << native_ratio;
}

template <class T>
void check_all_trsm(double phi) {
  for (side_kind side : {side_kind::left, side_kind::right})
    for (uplo_kind uplo : {uplo_kind::lower, uplo_kind::upper})
      for (trans_kind trans : {trans_kind::n, trans_kind::t, trans_kind::c})
        for (diag_kind diag : {diag_kind::non_unit, diag_kind::unit}) {
          if (std::is_same_v<T, double> && trans == trans_kind::c) continue;
          check_trsm<T>(side, uplo, trans, diag, phi);
        }
}

TEST(Level3Accuracy, TrsmWithEmulatedUpdatesMeetsNativeBound) {
  check_all_trsm<double>(0.5);
  check_all_trsm<double>(3.0);  // wide range: some updates certify no count and run in FP64
}

TEST(Level3Accuracy, ZtrsmWithEmulatedUpdatesMeetsNativeBound) {
  check_all_trsm<zd>(0.5);
  check_all_trsm<zd>(2.0);
}

}  // namespace
}  // namespace ozdgemm::test
