// Helpers shared by the CPU tests: building a gemm_problem from BLAS arguments, exact (GMP)
// views of the integers the Ozaki pipeline works with (derived independently of src/core:
// frexp/ldexp, GMP, so they can serve as the oracle), and the published GPUs and docs pages
// that the tests of the model's prediction tables read.
#pragma once

#include <gmpxx.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "core/scaling_rules.hpp"
#include "dispatch/gpu_rates.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {

inline detail::op_kind to_op(char trans) {
  return (trans == 'N' || trans == 'n') ? detail::op_kind::n : detail::op_kind::t;
}

inline detail::gemm_problem make_problem(char transa, char transb, int64_t m, int64_t n,
                                         int64_t k, const double* A, int64_t lda,
                                         const double* B, int64_t ldb, double* C,
                                         int64_t ldc) {
  return detail::gemm_problem{m, n, k, detail::operand_a(to_op(transa), A, lda),
                              detail::operand_b(to_op(transb), B, ldb), C, ldc};
}

// The GPUs of the docs' tables of predictions (docs/level3.md, docs/performance.md): one of each
// kind of the published table, and the entry of a label.
inline constexpr const char* kTableGpus[] = {
    "A100", "GeForce RTX 4090",      "L40S", "H100 SXM", "H200", "H20", "B200",
    "B300", "RTX PRO 6000 Blackwell"};
inline const detail::gpu_spec& published_gpu(const char* label) {
  const detail::published_table all = detail::published_gpus();
  for (const detail::gpu_spec* g = all.begin; g != all.end; ++g)
    if (std::string(g->label) == label) return *g;
  throw std::runtime_error(std::string("no GPU ") + label);
}

// A file of the source tree (tests that hold a docs page to the code), empty when unreadable.
inline std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(OZDGEMM_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether docs page `page` quotes `table` as it is (a table of the model's predictions, which
// the page must hold as the code computes it now); the failure message prints the table.
inline ::testing::AssertionResult page_holds(const std::string& page, const std::string& table) {
  const std::string doc = source_file(page);
  if (doc.empty()) return ::testing::AssertionFailure() << page << " not found";
  if (doc.find(table) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << page << " does not hold the model's table; it is now:\n"
                                       << table;
}

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The same doubles bit for bit (NaN payloads and the signs of zeros included).
inline bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

// op(A) op(B) of an operand pair (no transposes) into C.
inline detail::gemm_problem problem_of(const operand_pair& in, host_matrix& C) {
  return make_problem('N', 'N', in.a.rows, in.b.cols, in.a.cols, in.a.ptr(), in.a.ld, in.b.ptr(),
                      in.b.ld, C.ptr(), C.ld);
}

inline std::string mode_name(detail::scaling_mode mode) {
  return mode == detail::scaling_mode::fast ? "fast" : "accurate";
}

// |x| = mant * 2^exp2 with mant < 2^53 an integer, via frexp (independent of decode()).
inline void split_double(double x, uint64_t* mant, int* exp2) {
  int ex = 0;
  const double f = std::frexp(std::fabs(x), &ex);  // f in [0.5, 1), exact for subnormals too
  *mant = static_cast<uint64_t>(std::ldexp(f, 53));
  *exp2 = ex - 53;
}

// x * 2^e rounded exactly, for finite x: toward zero, or to nearest with ties away from zero.
inline mpz_class exact_round_mpz(double x, int e, bool nearest) {
  if (x == 0.0) return 0;
  uint64_t mant;
  int exp2;
  split_double(x, &mant, &exp2);
  mpz_class v(static_cast<unsigned long>(mant));
  const int sh = exp2 + e;
  if (sh >= 0)
    mpz_mul_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(sh));
  else if (!nearest)
    mpz_tdiv_q_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(-sh));
  else {  // floor((2 v 2^-rs + 1) / 2) = floor(v 2^-rs + 1/2) for v >= 0
    mpz_mul_2exp(v.get_mpz_t(), v.get_mpz_t(), 1);
    mpz_tdiv_q_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(-sh));
    v += 1;
    mpz_tdiv_q_2exp(v.get_mpz_t(), v.get_mpz_t(), 1);
  }
  return x < 0 ? mpz_class(-v) : v;
}

// The signed integer a scaled_int stands for.
inline mpz_class mpz_from_scaled(const detail::scaled_int& v) {
  mpz_class r = 0;
  for (int c = 3; c >= 0; --c) {
    r <<= 20;
    r += static_cast<unsigned long>(v.c[c]);
  }
  return v.negative ? mpz_class(-r) : r;
}

// Little-endian 32-bit limbs to an mpz.
inline mpz_class mpz_from_limbs(const uint32_t* limbs, int n) {
  mpz_class r = 0;
  for (int c = n - 1; c >= 0; --c) {
    r <<= 32;
    r += static_cast<unsigned long>(limbs[c]);
  }
  return r;
}

// A double holding an integer value, exactly, as an mpz.
inline mpz_class mpz_from_integral_double(double d) {
  mpz_class r;
  mpz_set_d(r.get_mpz_t(), d);  // truncates; exact for integral d
  return r;
}

// X rounded to the nearest double, ties to even, computed from X's bits (|X| < 2^1000).
inline double mpz_to_double_rne(const mpz_class& X) {
  mpz_class a = abs(X);
  const size_t bits = a == 0 ? 0 : mpz_sizeinbase(a.get_mpz_t(), 2);
  double mag;
  if (bits <= 53) {
    mag = a.get_d();  // exact
  } else {
    const mp_bitcnt_t sh = bits - 53;
    mpz_class q, rem, half = 1;
    mpz_fdiv_q_2exp(q.get_mpz_t(), a.get_mpz_t(), sh);
    mpz_fdiv_r_2exp(rem.get_mpz_t(), a.get_mpz_t(), sh);
    half <<= (sh - 1);
    if (rem > half || (rem == half && mpz_odd_p(q.get_mpz_t()))) q += 1;
    mag = std::ldexp(q.get_d(), static_cast<int>(sh));  // q <= 2^53: exact
  }
  return X < 0 ? -mag : mag;
}

// L = floor((1/2 - 2^-31) M) = floor(M (2^30 - 1) / 2^31): the largest |A'B'|_ij that the
// CRT recovers by the argument in crt.hpp.
inline mpz_class exact_crt_limit(const detail::modulus_table& tb) {
  mpz_class M = mpz_from_limbs(tb.modulus, detail::kLimbs);
  mpz_class L = M * ((1ul << 30) - 1);
  mpz_fdiv_q_2exp(L.get_mpz_t(), L.get_mpz_t(), 31);
  return L;
}

}  // namespace ozdgemm::test
