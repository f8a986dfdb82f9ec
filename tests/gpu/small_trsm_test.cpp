// The substitution kernel at the leaves of the library's TRSM (kernels/small_trsm.cuh), in
// every side/uplo/trans/diag combination, real and complex, orders 1 to the largest: the
// residual op(A) X - alpha B (or X op(A) - alpha B) in long double within the substitution's
// componentwise bound; A's other triangle (and a unit diagonal) hold NaN, so a read of them
// shows; B's padding rows keep their bits; alpha = 0 gives zeros without reading B.
#include "small_trsm.cuh"

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"

namespace {

using ozdgemm::detail::launch_small_trsm;
using ozdgemm::detail::small_trsm_args;
using ozdgemm::detail::small_trsm_order;
using zd = std::complex<double>;
using zl = std::complex<long double>;

template <class T>
using cu_t = std::conditional_t<std::is_same_v<T, double>, double, cuDoubleComplex>;

long double abs_of(long double x) { return std::fabs(x); }
long double abs_of(const zl& x) { return std::abs(x.real()) + std::abs(x.imag()); }

struct combo {
  bool left, lower;
  char trans;
  bool unit;
  std::string name() const {
    return std::string(left ? "L" : "R") + (lower ? "L" : "U") + trans + (unit ? "U" : "N");
  }
};

template <class T>
T draw(std::mt19937_64& g, double scale) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if constexpr (std::is_same_v<T, double>)
    return scale * u(g);
  else
    return T(scale * u(g), scale * u(g));
}

// Solves one case on the GPU; the number of elements over the bound (or otherwise wrong).
template <class T>
int64_t solve_case(const combo& c, int64_t order, int64_t other, T alpha, uint64_t seed) {
  std::mt19937_64 g(seed);
  const int64_t m = c.left ? order : other, n = c.left ? other : order;
  const int64_t lda = order + 2, ldb = m + 3;
  const double nan = std::nan("");
  // A: its stored triangle well conditioned (diagonal near 2), NaN elsewhere.
  std::vector<T> a(static_cast<size_t>(lda * order), T(nan));
  for (int64_t j = 0; j < order; ++j)
    for (int64_t i = 0; i < order; ++i) {
      const bool stored = c.lower ? i >= j : i <= j;
      if (!stored || (i == j && c.unit)) continue;
      a[i + j * lda] = i == j ? T(2.0) + draw<T>(g, 0.5) : draw<T>(g, 1.0 / order);
    }
  std::vector<T> b(static_cast<size_t>(ldb * n), T(nan));  // NaN padding rows
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) b[i + j * ldb] = draw<T>(g, 1.0);
  device_buffer<T> da(a), db(b);
  cu_t<T> alpha_cu;
  std::memcpy(&alpha_cu, &alpha, sizeof alpha_cu);
  const small_trsm_args<cu_t<T>> args{c.left,
                                      c.lower,
                                      c.trans != 'N',
                                      c.trans == 'C',
                                      c.unit,
                                      m,
                                      n,
                                      alpha_cu,
                                      reinterpret_cast<const cu_t<T>*>(da.ptr),
                                      lda,
                                      reinterpret_cast<cu_t<T>*>(db.ptr),
                                      ldb};
  EXPECT_EQ(launch_small_trsm(args, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> x = db.to_host();
  int64_t bad = 0;
  // op(A) as the solve reads it: the unit diagonal is 1.
  auto op_a = [&](int64_t i, int64_t j) -> zl {
    const int64_t p = c.trans == 'N' ? i : j, q = c.trans == 'N' ? j : i;
    if (p == q && c.unit) return zl(1.0L);
    const bool stored = c.lower ? p >= q : p <= q;
    if (!stored) return zl(0.0L);
    const zl v = zl(std::real(zd(a[p + q * lda])), std::imag(zd(a[p + q * lda])));
    return c.trans == 'C' ? std::conj(v) : v;
  };
  auto el = [](const T& v) { return zl(std::real(zd(v)), std::imag(zd(v))); };
  const long double u = std::ldexp(1.0L, -53);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      zl r = -el(alpha) * el(b[i + j * ldb]);
      long double mag = 0;
      for (int64_t l = 0; l < order; ++l) {
        const zl t = c.left ? op_a(i, l) * el(x[l + j * ldb]) : el(x[i + l * ldb]) * op_a(l, j);
        r += t;
        mag += std::abs(c.left ? op_a(i, l) : op_a(l, j)) *
               std::abs(c.left ? el(x[l + j * ldb]) : el(x[i + l * ldb]));
      }
      const long double bound =
          4.0L * (order + 2) * u * mag + 2.0L * u * std::abs(el(alpha) * el(b[i + j * ldb]));
      if (!(abs_of(r) <= bound) && ++bad <= 3)
        ADD_FAILURE() << c.name() << " order " << order << " (" << i << ", " << j << "): residual "
                      << static_cast<double>(abs_of(r)) << " over " << static_cast<double>(bound);
    }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = m; i < ldb; ++i)
      if (std::memcmp(&x[i + j * ldb], &b[i + j * ldb], sizeof(T)) != 0 && ++bad <= 3)
        ADD_FAILURE() << c.name() << ": padding row " << i << " of column " << j << " written";
  return bad;
}

template <class T>
void every_combo(T alpha) {
  const int64_t top = small_trsm_order<cu_t<T>>();
  for (const bool left : {true, false})
    for (const bool lower : {true, false})
      for (const char trans : {'N', 'T', 'C'})
        for (const bool unit : {false, true})
          for (const int64_t order : {int64_t{1}, int64_t{13}, top})
            for (const int64_t other : {int64_t{1}, int64_t{45}}) {
              const combo c{left, lower, trans, unit};
              EXPECT_EQ(solve_case<T>(c, order, other, alpha, 17 + order * 31 + other), 0)
                  << c.name() << " order " << order << " other " << other;
            }
}

class SmallTrsm : public GpuTest {};

TEST_F(SmallTrsm, RealSolvesWithinTheSubstitutionBound) { every_combo<double>(0.75); }

TEST_F(SmallTrsm, ComplexSolvesWithinTheSubstitutionBound) { every_combo<zd>(zd(0.75, -0.5)); }

// Diagonals the reciprocal alone would spoil: subnormal (1 / d overflows); also large ones (a
// few binades below the largest double, so that B = d y stays finite). A diagonal triangle,
// B = d y with small integers y (exact), so X must be y to within a few ulps, on the left and
// the right, real and complex. cuBLAS's result on the real case is printed for comparison.
template <class T>
int64_t extreme_case(bool left, cublasHandle_t handle) {
  const int64_t order = small_trsm_order<cu_t<T>>(), other = 9;
  const int64_t m = left ? order : other, n = left ? other : order, ld = order + m;
  const double huge = std::ldexp(1.25, 1019), tiny = std::ldexp(1.5, -1060);
  std::vector<T> a(static_cast<size_t>(ld * order), T(0.0)), b(static_cast<size_t>(ld * n));
  std::vector<T> diag(static_cast<size_t>(order)), y(b.size());
  for (int64_t j = 0; j < order; ++j) {
    const double mag = j % 3 == 0 ? tiny : j % 3 == 1 ? huge : 0.75;
    if constexpr (std::is_same_v<T, double>)
      diag[j] = mag;
    else
      diag[j] = T(mag, j % 2 == 0 ? mag / 2 : 0.0);  // exact: halving a subnormal of 2^-1060
    a[j + j * ld] = diag[j];
  }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      const size_t at = static_cast<size_t>(i + j * ld);
      y[at] = T(static_cast<double>(1 + (i + 2 * j) % 7));
      b[at] = diag[left ? i : j] * y[at];  // exact: a small integer times d
    }
  device_buffer<T> da(a), db(b);
  const small_trsm_args<cu_t<T>> args{left,
                                      true,
                                      false,
                                      false,
                                      false,
                                      m,
                                      n,
                                      cu_t<T>{},
                                      reinterpret_cast<const cu_t<T>*>(da.ptr),
                                      ld,
                                      reinterpret_cast<cu_t<T>*>(db.ptr),
                                      ld};
  small_trsm_args<cu_t<T>> with_one = args;
  const T one(1.0);
  std::memcpy(&with_one.alpha, &one, sizeof one);
  EXPECT_EQ(launch_small_trsm(with_one, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> x = db.to_host();
  int64_t bad = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      const size_t at = static_cast<size_t>(i + j * ld);
      if (!(std::abs(x[at] - y[at]) <= std::ldexp(std::abs(y[at]), -46)) && ++bad <= 3)
        ADD_FAILURE() << (left ? "left" : "right") << " (" << i << ", " << j << "): got "
                      << std::abs(x[at]) << ", want " << std::abs(y[at]);
    }
  if constexpr (std::is_same_v<T, double>) {
    device_buffer<T> dc(b);
    const double alpha = 1.0;
    cublasDtrsm(handle, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER,
                CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, static_cast<int>(m), static_cast<int>(n), &alpha,
                da.ptr, static_cast<int>(ld), dc.ptr, static_cast<int>(ld));
    const std::vector<T> c = dc.to_host();
    int64_t off = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const size_t at = static_cast<size_t>(i + j * ld);
        off += !(std::abs(c[at] - y[at]) <= std::ldexp(std::abs(y[at]), -46));
      }
    std::printf("[ small_trsm ] extreme diagonals, %s: cuBLAS's DTRSM off in %lld of %lld\n",
                left ? "left" : "right", static_cast<long long>(off),
                static_cast<long long>(m * n));
  }
  return bad;
}

TEST_F(SmallTrsm, ExtremeDiagonalsSolveAsDivisionWould) {
  for (const bool left : {true, false}) {
    EXPECT_EQ(extreme_case<double>(left, handle_), 0) << (left ? "left" : "right");
    EXPECT_EQ(extreme_case<zd>(left, handle_), 0) << (left ? "left" : "right");
  }
}

// alpha = 0: X = 0 and B is not read (NaN in B stays out of X); the order above the largest is
// refused without a launch.
TEST_F(SmallTrsm, AlphaZeroWritesZerosAndLargeOrdersAreRefused) {
  const int64_t order = 20, n = 7, ld = order;
  const std::vector<double> a(static_cast<size_t>(ld * order), 1.0),
      b(static_cast<size_t>(ld * n), std::nan(""));
  device_buffer<double> da(a), db(b);
  small_trsm_args<double> args{true, true, false,  false, false,  order,
                               n,    0.0,  da.ptr, ld,    db.ptr, ld};
  ASSERT_EQ(launch_small_trsm(args, nullptr), cudaSuccess);
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (double v : db.to_host()) ASSERT_EQ(v, 0.0);
  args.m = small_trsm_order<double>() + 1;
  EXPECT_EQ(launch_small_trsm(args, nullptr), cudaErrorInvalidValue);
}

}  // namespace
