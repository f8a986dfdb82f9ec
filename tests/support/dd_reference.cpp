#include "support/dd_reference.hpp"

#include <cmath>
#include <stdexcept>

namespace ozdgemm::test {
namespace {

bool is_n(char t) {
  switch (t) {
    case 'N':
    case 'n':
      return true;
    case 'T':
    case 't':
    case 'C':
    case 'c':
      return false;
    default:
      throw std::invalid_argument("trans must be N, T or C");
  }
}

struct dd {
  double hi, lo;
};

// s + e == a + b exactly (Knuth's TwoSum, no precondition on magnitudes).
dd two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

// s + e == a + b exactly, given |a| >= |b| or a == 0.
dd fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// p + e == a * b exactly (barring underflow of e).
dd two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// Double-double addition with both error terms kept (the "accurate" variant): relative
// error O(2^-104) of |x| + |y|.
dd dd_add(dd x, dd y) {
  dd s = two_sum(x.hi, y.hi);
  const dd t = two_sum(x.lo, y.lo);
  s.lo += t.hi;
  s = fast_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return fast_two_sum(s.hi, s.lo);
}

dd dd_mul_d(dd x, double a) {
  dd p = two_prod(x.hi, a);
  p.lo = std::fma(x.lo, a, p.lo);
  return fast_two_sum(p.hi, p.lo);
}

void check_args(int64_t m, int64_t n, int64_t k) {
  if (m < 0 || n < 0 || k < 0) throw std::invalid_argument("negative GEMM size");
}

}  // namespace

double op_at(char trans, const double* x, int64_t ld, int64_t i, int64_t l) {
  return is_n(trans) ? x[l * ld + i] : x[i * ld + l];
}

void naive_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
                const double* A, int64_t lda, const double* B, int64_t ldb, double beta,
                double* C, int64_t ldc) {
  check_args(m, n, k);
  is_n(transa);
  is_n(transb);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double* c = C + j * ldc + i;
      double s = 0.0;
      if (alpha != 0.0)
        for (int64_t l = 0; l < k; ++l) {
          const double p = op_at(transa, A, lda, i, l) * op_at(transb, B, ldb, l, j);
          s = s + p;
        }
      const double ab = alpha == 0.0 ? 0.0 : alpha * s;
      *c = beta == 0.0 ? ab : ab + beta * *c;
    }
}

void dd_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
             const double* A, int64_t lda, const double* B, int64_t ldb, double beta,
             double* C, int64_t ldc) {
  check_args(m, n, k);
  is_n(transa);
  is_n(transb);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double* c = C + j * ldc + i;
      dd acc{0.0, 0.0};
      if (alpha != 0.0) {
        for (int64_t l = 0; l < k; ++l)
          acc = dd_add(acc, two_prod(op_at(transa, A, lda, i, l), op_at(transb, B, ldb, l, j)));
        acc = dd_mul_d(acc, alpha);
      }
      if (beta != 0.0) acc = dd_add(acc, two_prod(beta, *c));
      const double r = acc.hi + acc.lo;
      if (std::isfinite(r)) {
        *c = r;
      } else {
        double naive = *c;
        naive_gemm(transa, transb, 1, 1, k, alpha, A + (is_n(transa) ? i : i * lda), lda,
                   B + (is_n(transb) ? j * ldb : j), ldb, beta, &naive, 1);
        *c = naive;
      }
    }
}

void abs_product(char transa, char transb, int64_t m, int64_t n, int64_t k, const double* A,
                 int64_t lda, const double* B, int64_t ldb, double* out, int64_t ldo) {
  check_args(m, n, k);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double s = 0.0;
      for (int64_t l = 0; l < k; ++l)
        s += std::fabs(op_at(transa, A, lda, i, l)) * std::fabs(op_at(transb, B, ldb, l, j));
      out[j * ldo + i] = s;
    }
}

zdouble zop_at(char trans, const zdouble* x, int64_t ld, int64_t i, int64_t l) {
  if (is_n(trans)) return x[l * ld + i];
  const zdouble v = x[i * ld + l];
  return trans == 'C' || trans == 'c' ? std::conj(v) : v;
}

namespace {

// x y written out (no std::complex operator*, whose Annex G rules differ from cuBLAS's).
zdouble zmul(zdouble x, zdouble y) {
  return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

// x y in double-double from double-double parts of x and a double y.
void dd_zmul(dd xr, dd xi, zdouble y, dd* re, dd* im) {
  *re = dd_add(dd_mul_d(xr, y.real()), dd_mul_d(xi, -y.imag()));
  *im = dd_add(dd_mul_d(xr, y.imag()), dd_mul_d(xi, y.real()));
}

}  // namespace

void naive_zgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, zdouble alpha,
                 const zdouble* A, int64_t lda, const zdouble* B, int64_t ldb, zdouble beta,
                 zdouble* C, int64_t ldc) {
  check_args(m, n, k);
  is_n(transa);
  is_n(transb);
  const bool alpha_zero = alpha == zdouble(0.0, 0.0), beta_zero = beta == zdouble(0.0, 0.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      zdouble* c = C + j * ldc + i;
      zdouble s(0.0, 0.0);
      if (!alpha_zero)
        for (int64_t l = 0; l < k; ++l) {
          const zdouble p = zmul(zop_at(transa, A, lda, i, l), zop_at(transb, B, ldb, l, j));
          s = zdouble(s.real() + p.real(), s.imag() + p.imag());
        }
      const zdouble ab = alpha_zero ? zdouble(0.0, 0.0) : zmul(alpha, s);
      if (beta_zero) {
        *c = ab;
      } else {
        const zdouble bc = zmul(beta, *c);
        *c = zdouble(ab.real() + bc.real(), ab.imag() + bc.imag());
      }
    }
}

void dd_zgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, zdouble alpha,
              const zdouble* A, int64_t lda, const zdouble* B, int64_t ldb, zdouble beta,
              zdouble* C, int64_t ldc) {
  check_args(m, n, k);
  is_n(transa);
  is_n(transb);
  const bool alpha_zero = alpha == zdouble(0.0, 0.0), beta_zero = beta == zdouble(0.0, 0.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      zdouble* c = C + j * ldc + i;
      dd re{0.0, 0.0}, im{0.0, 0.0};
      if (!alpha_zero) {
        for (int64_t l = 0; l < k; ++l) {
          const zdouble a = zop_at(transa, A, lda, i, l), b = zop_at(transb, B, ldb, l, j);
          re = dd_add(dd_add(re, two_prod(a.real(), b.real())), two_prod(-a.imag(), b.imag()));
          im = dd_add(dd_add(im, two_prod(a.real(), b.imag())), two_prod(a.imag(), b.real()));
        }
        dd_zmul(re, im, alpha, &re, &im);
      }
      if (!beta_zero) {
        const zdouble c0 = *c;
        re = dd_add(dd_add(re, two_prod(beta.real(), c0.real())), two_prod(-beta.imag(), c0.imag()));
        im = dd_add(dd_add(im, two_prod(beta.real(), c0.imag())), two_prod(beta.imag(), c0.real()));
      }
      double r_re = re.hi + re.lo, r_im = im.hi + im.lo;
      if (!std::isfinite(r_re) || !std::isfinite(r_im)) {
        zdouble naive = *c;
        naive_zgemm(transa, transb, 1, 1, k, alpha, A + (is_n(transa) ? i : i * lda), lda,
                    B + (is_n(transb) ? j * ldb : j), ldb, beta, &naive, 1);
        if (!std::isfinite(r_re)) r_re = naive.real();
        if (!std::isfinite(r_im)) r_im = naive.imag();
      }
      *c = zdouble(r_re, r_im);
    }
}

void abs_zproduct(char transa, char transb, int64_t m, int64_t n, int64_t k, const zdouble* A,
                  int64_t lda, const zdouble* B, int64_t ldb, double* out, int64_t ldo) {
  check_args(m, n, k);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double s = 0.0;
      for (int64_t l = 0; l < k; ++l)
        s += std::abs(zop_at(transa, A, lda, i, l)) * std::abs(zop_at(transb, B, ldb, l, j));
      out[j * ldo + i] = s;
    }
}

}  // namespace ozdgemm::test
