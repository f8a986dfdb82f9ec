// Bad input through the C API's host reference (ozdgemm_dgemm_reference), case by case
// against Debian's reference BLAS (libblas.so.3, dlopen'd here: the real dgemm_ and its
// xerbla), which is what an application gets without the library:
//   - invalid arguments: reference BLAS reports them through xerbla_ (recorded by the xerbla_
//     this test binary exports, see CMakeLists.txt) and writes nothing; the C API must return
//     OZDGEMM_STATUS_INVALID_VALUE for exactly those calls and write nothing either;
//   - valid calls with NaN/Inf anywhere (A, B, C, alpha, beta), subnormals, magnitudes near
//     DBL_MAX, zeros, long k, m = 1 / n = 1, huge leading dimensions: the class (NaN, +Inf,
//     -Inf, finite) of every element must be the class reference BLAS gives, every finite
//     element must be within the library's rigorous error bound of a double-double reference,
//     and the padding of C (rows m..ldc-1) must be untouched.
// special_values_test.cpp checks the reference's semantics against a naive loop on tailored
// inputs; this battery adds the comparison with the real library an application would
// otherwise call, the argument errors, and the shapes. It prints "N cases, M matched".
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cpu/accuracy_bound.hpp"
#include "cpu/cpu_test_util.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/host_reference.hpp"
#include "support/dd_reference.hpp"

// Reference BLAS reports invalid arguments through xerbla_ (called through its PLT, so this
// definition, exported from the test binary, takes precedence). Recorded, not printed: the
// reference one would stop the program.
namespace {
int xerbla_calls = 0;
int xerbla_info = 0;
int rejected_cases = 0;  // cases reference BLAS rejected (xerbla_ called)
}  // namespace

extern "C" __attribute__((visibility("default"))) void xerbla_(const char*, const int* info,
                                                               size_t) {
  ++xerbla_calls;
  xerbla_info = *info;
}

namespace ozdgemm::test {
namespace {

constexpr int kAuto = -77777;  // a leading dimension to be set to its minimum valid value

using blas_dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*,
                               const double*, const double*, const int*, const double*, const int*,
                               const double*, double*, const int*, size_t, size_t);

// Debian's reference libblas.so.3, loaded privately (RTLD_LOCAL), so its dgemm_ is the real one.
blas_dgemm_fn reference_blas() {
  static blas_dgemm_fn fn = [] {
    void* h = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
    return h != nullptr ? reinterpret_cast<blas_dgemm_fn>(dlsym(h, "dgemm_")) : nullptr;
  }();
  return fn;
}

// One call: the arguments, buffers sized for them, and edits made to the inputs.
struct gemm_case {
  std::string name;
  char ta = 'N', tb = 'N';
  int m = 4, n = 3, k = 5;
  int lda = kAuto, ldb = kAuto, ldc = kAuto;  // kAuto: the minimum valid value
  double alpha = 1.0, beta = 0.5;
  // Edits of op(A) (m x k), op(B) (k x n) and C (m x n) in element coordinates.
  std::function<void(struct operands&)> edit;
};

struct operands {
  const gemm_case* c;
  std::vector<double> A, B, C;
  static bool n_op(char t) { return t == 'N' || t == 'n'; }
  double& a(int i, int l) {
    return n_op(c->ta) ? A[size_t(l) * c->lda + i] : A[size_t(i) * c->lda + l];
  }
  double& b(int l, int j) {
    return n_op(c->tb) ? B[size_t(j) * c->ldb + l] : B[size_t(l) * c->ldb + j];
  }
  double& cc(int i, int j) { return C[size_t(j) * c->ldc + i]; }
};

// Deterministic values in (-1, 1) times 2^(0..7), never zero.
double value(uint64_t i, uint64_t seed) {
  uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull + seed * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
  z ^= z >> 29;
  const double u = (static_cast<double>(z >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
  return std::ldexp(u - 0.5, static_cast<int>(z % 8));
}

operands make_operands(gemm_case& c) {
  const bool na = operands::n_op(c.ta), nb = operands::n_op(c.tb);
  auto at_least = [](int v) { return v > 1 ? v : 1; };
  if (c.lda == kAuto) c.lda = at_least(na ? c.m : c.k);
  if (c.ldb == kAuto) c.ldb = at_least(nb ? c.k : c.n);
  if (c.ldc == kAuto) c.ldc = at_least(c.m);
  const auto cols = [](int v) { return v > 0 ? size_t(v) : size_t(0); };
  operands o{&c, {}, {}, {}};
  o.A.resize(std::max<size_t>(1, size_t(std::max(c.lda, 1)) * cols(na ? c.k : c.m)));
  o.B.resize(std::max<size_t>(1, size_t(std::max(c.ldb, 1)) * cols(nb ? c.n : c.k)));
  o.C.resize(std::max<size_t>(1, size_t(std::max(c.ldc, 1)) * cols(c.n)));
  for (size_t i = 0; i < o.A.size(); ++i) o.A[i] = value(i, 1);
  for (size_t i = 0; i < o.B.size(); ++i) o.B[i] = value(i, 2);
  for (size_t i = 0; i < o.C.size(); ++i) o.C[i] = value(i, 3);
  if (c.edit) c.edit(o);
  return o;
}

std::string run_case_impl(gemm_case c, bool* order_dependent);

// The class of element (i, j) of alpha op(A) op(B) + beta C evaluated without intermediate
// overflow: the dot product in long double (range to 2^16383), alpha applied to the sum.
const char* unoverflowed_class(operands& o, int i, int j, double c0) {
  const gemm_case& c = *o.c;
  long double s = 0;
  for (int l = 0; l < c.k; ++l) s += static_cast<long double>(o.a(i, l)) * o.b(l, j);
  const long double ab = c.alpha == 0.0 ? 0.0L : static_cast<long double>(c.alpha) * s;
  const long double v = c.beta == 0.0 ? ab : ab + static_cast<long double>(c.beta) * c0;
  return fp_class(static_cast<double>(v));
}

// How one case went.
struct verdict {
  std::string failure;           // empty: passed
  bool order_dependent = false;  // passed, but only by the rule below
};

// Runs one case both ways.
//
// One deliberate difference from reference BLAS is accepted, and counted apart: reference
// dgemm.f forms alpha * B(l,j) first and accumulates C(i,j) term by term, so an intermediate
// overflow (alpha = Inf, or partial sums beyond DBL_MAX with mixed signs) can produce +-Inf,
// or Inf - Inf = NaN, where the exact result is finite or +-Inf. The library returns the class
// of the exact result there. Accepted only where reference BLAS gives a non-finite value and
// the library's class is the one the same sum gives without intermediate overflow (long
// double, alpha applied last); a finite value is still checked against the error bound.
verdict run_case(gemm_case c) {
  verdict v;
  v.failure = run_case_impl(c, &v.order_dependent);
  if (!v.failure.empty()) v.order_dependent = false;
  return v;
}

std::string run_case_impl(gemm_case c, bool* order_dependent) {
  operands o = make_operands(c);
  const std::vector<double> C0 = o.C;
  std::vector<double> Cblas = C0, Coz = C0;

  xerbla_calls = 0;
  xerbla_info = 0;
  reference_blas()(&c.ta, &c.tb, &c.m, &c.n, &c.k, &c.alpha, o.A.data(), &c.lda, o.B.data(), &c.ldb,
                   &c.beta, Cblas.data(), &c.ldc, 1, 1);
  const bool blas_rejected = xerbla_calls != 0;
  const ozdgemm_status_t st =
      ozdgemm_dgemm_reference(c.ta, c.tb, c.m, c.n, c.k, c.alpha, o.A.data(), c.lda, o.B.data(),
                              c.ldb, c.beta, Coz.data(), c.ldc, ozdgemm_default_options());
  if (blas_rejected) {
    ++rejected_cases;
    if (st != OZDGEMM_STATUS_INVALID_VALUE)
      return "reference BLAS reports parameter " + std::to_string(xerbla_info) +
             ", the C API returned " + ozdgemm_status_string(st);
    if (!same_bits(Cblas, C0)) return "reference BLAS wrote C on invalid arguments";
    if (!same_bits(Coz, C0)) return "the C API wrote C on invalid arguments";
    return "";
  }
  if (st != OZDGEMM_STATUS_SUCCESS)
    return std::string("valid for reference BLAS, the C API returned ") + ozdgemm_status_string(st);
  // Padding rows untouched.
  for (int j = 0; j < c.n; ++j)
    for (int i = c.m; i < c.ldc; ++i)
      if (std::memcmp(&Coz[size_t(j) * c.ldc + i], &C0[size_t(j) * c.ldc + i], 8) != 0)
        return "padding of C written at (" + std::to_string(i) + "," + std::to_string(j) + ")";
  // The class of every element as reference BLAS gives it.
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.m; ++i) {
      const double x = Coz[size_t(j) * c.ldc + i], r = Cblas[size_t(j) * c.ldc + i];
      if (std::strcmp(fp_class(x), fp_class(r)) == 0) continue;
      if (!std::isfinite(r) &&
          std::strcmp(fp_class(x), unoverflowed_class(o, i, j, C0[size_t(j) * c.ldc + i])) == 0) {
        *order_dependent = true;
        continue;
      }
      return "(" + std::to_string(i) + "," + std::to_string(j) + "): " + fp_class(x) +
             " where reference BLAS gives " + fp_class(r);
    }
  if (c.m == 0 || c.n == 0 || c.k == 0 || c.alpha == 0.0 || !std::isfinite(c.alpha) ||
      !std::isfinite(c.beta))
    return "";  // no product to bound (classes compared above)
  // Finite elements within the rigorous bound of a double-double reference.
  std::vector<double> R = C0;
  dd_gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, o.A.data(), c.lda, o.B.data(), c.ldb, c.beta,
          R.data(), c.ldc);
  std::vector<double> Ccopy = Coz;
  const detail::gemm_problem p = make_problem(c.ta, c.tb, c.m, c.n, c.k, o.A.data(), c.lda,
                                              o.B.data(), c.ldb, Ccopy.data(), c.ldc);
  const detail::scaling_result sc =
      detail::reference_scaling(p, 14, detail::scaling_mode::accurate);
  const bound_check_result r =
      check_error_bound(p, sc, c.alpha, c.beta, C0.data(), Coz.data(), R.data(), c.ldc);
  // A class the double-double reference gets differently from reference BLAS (it overflows
  // in other places) is not this test's business: only bound failures count.
  if (!r.first_failure.empty() && r.first_failure.rfind("class", 0) != 0) return r.first_failure;
  return "";
}

// A case with these shape arguments and the struct's defaults otherwise.
gemm_case make_case(std::string name, char ta, char tb, int m, int n, int k, int lda, int ldb,
                    int ldc) {
  gemm_case c;
  c.name = std::move(name);
  c.ta = ta;
  c.tb = tb;
  c.m = m;
  c.n = n;
  c.k = k;
  c.lda = lda;
  c.ldb = ldb;
  c.ldc = ldc;
  return c;
}

std::vector<gemm_case> invalid_cases() {
  std::vector<gemm_case> v;
  auto add = [&](const char* name, char ta, char tb, int m, int n, int k, int lda, int ldb,
                 int ldc) { v.push_back(make_case(name, ta, tb, m, n, k, lda, ldb, ldc)); };
  add("transa X", 'X', 'N', 2, 2, 2, 2, 2, 2);
  add("transb Y", 'N', 'Y', 2, 2, 2, 2, 2, 2);
  add("transa NUL", '\0', 'N', 2, 2, 2, 2, 2, 2);
  add("transa 'R'", 'R', 'N', 2, 2, 2, 2, 2, 2);
  add("both ops bad", 'Z', 'Z', 2, 2, 2, 2, 2, 2);
  add("m < 0", 'N', 'N', -1, 2, 2, 2, 2, 2);
  add("n < 0", 'N', 'N', 2, -1, 2, 2, 2, 2);
  add("k < 0", 'N', 'N', 2, 2, -1, 2, 2, 2);
  add("m = INT_MIN", 'N', 'N', std::numeric_limits<int>::min(), 2, 2, 2, 2, 2);
  add("all sizes < 0", 'T', 'T', -3, -3, -3, 1, 1, 1);
  add("lda < m (N)", 'N', 'N', 3, 2, 2, 2, 2, 3);
  add("lda < k (T)", 'T', 'N', 2, 2, 3, 2, 3, 2);
  add("lda < k (C)", 'C', 'N', 2, 2, 3, 2, 3, 2);
  add("lda = 0, m = 0", 'N', 'N', 0, 2, 2, 0, 2, 1);
  add("lda = 0, k = 0 (T)", 'T', 'N', 2, 2, 0, 0, 1, 2);
  add("lda < 0", 'N', 'N', 2, 2, 2, -2, 2, 2);
  add("ldb < k (N)", 'N', 'N', 2, 2, 3, 2, 2, 2);
  add("ldb < n (T)", 'N', 'T', 2, 3, 2, 2, 2, 2);
  add("ldb = 0, n = 0 (T)", 'N', 'T', 2, 0, 2, 2, 0, 2);
  add("ldc < m", 'N', 'N', 3, 2, 2, 3, 2, 2);
  add("ldc = 0, m = 0", 'N', 'N', 0, 0, 0, 1, 1, 0);
  add("ldc < 0", 'N', 'N', 2, 2, 2, 2, 2, -5);
  add("bad op and m < 0", 'Q', 'N', -1, 2, 2, 2, 2, 2);
  add("m < 0 and ldc < m", 'N', 'N', -1, 2, 2, 1, 2, 0);
  for (gemm_case& c : v) c.name = "invalid: " + c.name;
  return v;
}

std::vector<gemm_case> value_cases() {
  std::vector<gemm_case> v;
  auto add = [&](std::string name, std::function<void(operands&)> edit, double alpha = 1.0,
                 double beta = 0.5) {
    gemm_case c;
    c.name = std::move(name);
    c.alpha = alpha;
    c.beta = beta;
    c.edit = std::move(edit);
    v.push_back(c);
  };
  // A single special value at each place it can be, with each combination of alpha/beta that
  // changes whether that place is read.
  const double specials[] = {kNaN, kInf, -kInf};
  const char* names[] = {"NaN", "+Inf", "-Inf"};
  for (int s = 0; s < 3; ++s) {
    const double x = specials[s];
    const std::string w = names[s];
    add(w + " in A", [x](operands& o) { o.a(1, 2) = x; });
    add(w + " in B", [x](operands& o) { o.b(2, 1) = x; });
    add(w + " in C, beta = 0.5", [x](operands& o) { o.cc(2, 2) = x; });
    add(
        w + " in C, beta = 1", [x](operands& o) { o.cc(2, 2) = x; }, 1.0, 1.0);
    add(
        w + " in C, beta = 0 (not read)", [x](operands& o) { o.cc(2, 2) = x; }, 1.0, 0.0);
    add(
        w + " in A, alpha = 0 (not read)", [x](operands& o) { o.a(1, 2) = x; }, 0.0, 0.5);
    add(
        w + " in B, alpha = 0 (not read)", [x](operands& o) { o.b(2, 1) = x; }, 0.0, 0.5);
    add(
        w + " everywhere in A, B, C, alpha = beta = 0",
        [x](operands& o) {
          for (double& e : o.A) e = x;
          for (double& e : o.B) e = x;
          for (double& e : o.C) e = x;
        },
        0.0, 0.0);
    add(w + " in A times 0 in B", [x](operands& o) {
      o.a(0, 3) = x;
      o.b(3, 0) = 0.0;
    });
    add(w + " in A padding (not read)", [x](operands& o) {
      for (double& e : o.A) e = x;
      for (int l = 0; l < o.c->k; ++l)
        for (int i = 0; i < o.c->m; ++i) o.a(i, l) = value(size_t(l) * 7 + i, 9);
    });
    add("alpha = " + w, nullptr, x, 0.5);
    add("beta = " + w, nullptr, 1.0, x);
    add("beta = " + w + ", alpha = 0", nullptr, 0.0, x);
    add("alpha = " + w + ", beta = 0", nullptr, x, 0.0);
  }
  add("+Inf and -Inf in one dot", [](operands& o) {
    o.a(0, 1) = kInf;
    o.a(0, 2) = -kInf;
    o.b(1, 0) = 1.0;
    o.b(2, 0) = 1.0;
  });
  add("+Inf times +Inf and -Inf times -Inf", [](operands& o) {
    o.a(1, 0) = kInf;
    o.b(0, 1) = kInf;
    o.a(2, 4) = -kInf;
    o.b(4, 2) = -kInf;
  });
  add("NaN and Inf in A and B and C", [](operands& o) {
    o.a(0, 0) = kNaN;
    o.a(3, 1) = kInf;
    o.b(2, 2) = -kInf;
    o.cc(1, 1) = kInf;
  });
  add("quiet NaN with payload and sign", [](operands& o) { o.a(2, 2) = -std::nan("0x123"); });
  // Subnormals.
  add("subnormal A", [](operands& o) {
    for (int l = 0; l < o.c->k; ++l)
      for (int i = 0; i < o.c->m; ++i) o.a(i, l) = value(size_t(l) * 5 + i, 4) * 0x1p-1060;
  });
  add("subnormal A and B (products underflow)", [](operands& o) {
    for (int l = 0; l < o.c->k; ++l) {
      for (int i = 0; i < o.c->m; ++i) o.a(i, l) = value(size_t(l) * 5 + i, 4) * 0x1p-1060;
      for (int j = 0; j < o.c->n; ++j) o.b(l, j) = value(size_t(l) * 3 + j, 5) * 0x1p-1060;
    }
  });
  add("subnormal C, beta = 0.5", [](operands& o) {
    for (double& e : o.C) e *= 0x1p-1070;
  });
  add("DBL_TRUE_MIN in A, huge B", [](operands& o) {
    o.a(0, 0) = DBL_TRUE_MIN;
    for (int j = 0; j < o.c->n; ++j) o.b(0, j) = 0x1p1000;
  });
  // Near DBL_MAX: exact results that overflow, and one that does not.
  add("row of DBL_MAX/2, exact sum +2.5 DBL_MAX -> +Inf", [](operands& o) {
    for (int l = 0; l < o.c->k; ++l) {
      o.a(0, l) = DBL_MAX / 2;
      o.b(l, 0) = 1.0;
    }
  });
  add("row of -DBL_MAX/2 -> -Inf", [](operands& o) {
    for (int l = 0; l < o.c->k; ++l) {
      o.a(0, l) = -DBL_MAX / 2;
      o.b(l, 0) = 1.0;
    }
  });
  add("DBL_MAX times 4 (single product overflows)", [](operands& o) {
    o.a(1, 0) = DBL_MAX;
    o.b(0, 1) = 4.0;
  });
  add("2^1000 times 2^1000 -> +Inf", [](operands& o) {
    o.a(2, 3) = 0x1p1000;
    o.b(3, 2) = -0x1p1000;
  });
  add("huge but finite products (2^1000 x 2^-10)", [](operands& o) {
    for (int l = 0; l < o.c->k; ++l) {
      o.a(3, l) = 0x1p1000 * value(l, 6);
      o.b(l, 1) = 0x1p-10 * value(l, 7);
    }
  });
  add(
      "huge C, beta = 4 -> overflow in beta C", [](operands& o) { o.cc(0, 0) = DBL_MAX / 2; }, 1.0,
      4.0);
  add(
      "alpha = 2^1000, A > 0, B = 2^100 -> +Inf",
      [](operands& o) {
        for (double& e : o.A) e = std::fabs(e);
        for (double& e : o.B) e = 0x1p100;
      },
      0x1p1000, 0.0);
  // Zeros.
  add("all-zero A", [](operands& o) { std::fill(o.A.begin(), o.A.end(), 0.0); });
  add("all-zero B, NaN-free C", [](operands& o) { std::fill(o.B.begin(), o.B.end(), 0.0); });
  add(
      "all-zero A, B and C",
      [](operands& o) {
        std::fill(o.A.begin(), o.A.end(), 0.0);
        std::fill(o.B.begin(), o.B.end(), -0.0);
        std::fill(o.C.begin(), o.C.end(), 0.0);
      },
      1.0, 1.0);
  add("alpha = 0, beta = 0", nullptr, 0.0, 0.0);
  add("alpha = 0, beta = 1", nullptr, 0.0, 1.0);
  add("zero row of A and zero column of B", [](operands& o) {
    for (int l = 0; l < o.c->k; ++l) o.a(2, l) = 0.0;
    for (int l = 0; l < o.c->k; ++l) o.b(l, 0) = 0.0;
  });
  return v;
}

std::vector<gemm_case> shape_cases() {
  std::vector<gemm_case> v;
  auto add = [&](std::string name, char ta, char tb, int m, int n, int k, int lda = kAuto,
                 int ldb = kAuto, int ldc = kAuto, double alpha = 1.25, double beta = -0.5) {
    gemm_case c = make_case(std::move(name), ta, tb, m, n, k, lda, ldb, ldc);
    c.alpha = alpha;
    c.beta = beta;
    v.push_back(c);
  };
  add("k = 2^18, m = 2, n = 3", 'N', 'N', 2, 3, 1 << 18);
  add("k = 2^18, m = 3, n = 2, TT", 'T', 'T', 3, 2, 1 << 18);
  add("k = 2^20, m = 2, n = 2", 'T', 'N', 2, 2, 1 << 20);
  add("k = 2^20, m = 1, n = 1, NT", 'N', 'T', 1, 1, 1 << 20);
  add("m = 1", 'N', 'N', 1, 7, 9);
  add("n = 1", 'N', 'N', 7, 1, 9);
  add("m = n = 1", 'T', 'N', 1, 1, 9);
  add("m = n = k = 1", 'N', 'N', 1, 1, 1);
  add("k = 1 (outer product)", 'N', 'T', 6, 5, 1);
  add("m = 1, n = 1, k = 0", 'N', 'N', 1, 1, 0);
  add("m = 0", 'N', 'N', 0, 3, 2);
  add("n = 0", 'N', 'N', 3, 0, 2);
  add("lowercase ops n/t", 'n', 't', 4, 3, 5);
  add("lowercase op c", 'c', 'n', 4, 3, 5);
  add("op C both", 'C', 'C', 4, 3, 5);
  add("lda far larger than rows", 'N', 'N', 3, 4, 5, 1000);
  add("ldb far larger than rows (T)", 'N', 'T', 3, 4, 5, kAuto, 777);
  add("ldc far larger than rows", 'T', 'N', 3, 4, 5, kAuto, kAuto, 5000);
  add("all leading dimensions huge", 'T', 'T', 2, 2, 2, 4099, 4097, 4103);
  for (gemm_case& c : v) c.name = "shape: " + c.name;
  return v;
}

TEST(BadInput, HostReferenceMatchesReferenceBlasCaseByCase) {
  if (reference_blas() == nullptr) GTEST_SKIP() << "libblas.so.3 not found: nothing to compare";
  std::vector<gemm_case> all = invalid_cases();
  for (auto& c : value_cases()) all.push_back(c);
  for (auto& c : shape_cases()) all.push_back(c);
  int matched = 0, order_dependent = 0;
  for (const gemm_case& c : all) {
    const verdict v = run_case(c);
    if (!v.failure.empty()) {
      ADD_FAILURE() << c.name << ": " << v.failure;
    } else if (v.order_dependent) {
      ++order_dependent;
      std::printf("  exact class where reference BLAS's order overflows: %s\n", c.name.c_str());
    } else {
      ++matched;
    }
  }
  std::printf(
      "bad input (host reference vs reference BLAS): %zu cases, %d matched exactly, %d "
      "matched the exact result where reference BLAS's order overflows, %zu failed\n",
      all.size(), matched, order_dependent, all.size() - matched - order_dependent);
  std::printf("  of which %d rejected by reference BLAS (xerbla_) and by the C API\n",
              rejected_cases);
  EXPECT_EQ(rejected_cases, static_cast<int>(invalid_cases().size()));
  EXPECT_EQ(matched + order_dependent, static_cast<int>(all.size()));
  // Most cases must be plain matches: the exception above stays an exception.
  EXPECT_LE(order_dependent, 8);
}

}  // namespace
}  // namespace ozdgemm::test
