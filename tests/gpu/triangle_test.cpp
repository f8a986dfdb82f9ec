// One triangle of C as one emulation (engine/emulate.hpp's device_gemm::part, the Level-3 hooks'
// SYRK and HERK): through the device entries with a triangle against the same entries on the
// whole square, on the same data. Every element of the triangle must hold the whole call's bits
// (the diagonal included; HERK's diagonal imaginary parts zero) and every element outside it the
// caller's C, NaN there included: at a fixed count and at the certified default, whose first call
// chooses on the host and whose second launches its speculated count with the FP64 fallback
// behind it. The data: exponents spread over a few binades, a row of op(A) holding Inf and one
// holding NaN (recomputed in FP64 per element), order 1100 in blocks of 512 rows (the last one
// partial), lower and upper, op(A) = A and A^T.
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "api/zgemm_internal.hpp"
#include "engine/complex_gemm.hpp"
#include "gpu_fixture.hpp"
#include "part_case.hpp"

namespace {

using namespace ozdgemm::detail;

constexpr int64_t kN = 1100, kK = 96;

using ozdgemm::test::part_case;

class Triangle : public GpuTest, public ::testing::WithParamInterface<part_case> {
 protected:
  ozdgemm_options_t options() const {
    ozdgemm_options_t o = ozdgemm_default_options();
    o.num_moduli = GetParam().moduli;
    return o;
  }
  // op(A) n x k (stored n x k or k x n, ld padded by 3), spread exponents, Inf in one row of
  // op(A) and NaN in another; w doubles per element.
  std::vector<double> operand(int w, unsigned seed) const {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> nd;
    std::vector<double> a(static_cast<size_t>(ld() * cols() * w));
    for (double& x : a) x = nd(g) * std::exp2(std::round(1.5 * nd(g)));
    const auto at = [&](int64_t row, int64_t l) {
      return static_cast<size_t>(GetParam().transposed ? row * ld() + l : l * ld() + row) * w;
    };
    a[at(7, 3)] = INFINITY;
    a[at(kN - 20, 50)] = NAN;
    return a;
  }
  int64_t ld() const { return (GetParam().transposed ? kK : kN) + 3; }
  int64_t cols() const { return GetParam().transposed ? kN : kK; }
  cublasOperation_t op_a() const { return GetParam().transposed ? CUBLAS_OP_T : CUBLAS_OP_N; }
  // Both calls succeeded and emulated, and have finished. A certified round's second call of the
  // shape speculates the count the first one chose (s = kChosenOnGpu): the bits compare counts.
  static bool both_emulated(const device_result& whole, const device_result& part) {
    for (const device_result* r : {&whole, &part}) {
      EXPECT_EQ(r->status, OZDGEMM_STATUS_SUCCESS);
      EXPECT_NE(r->s, 0) << (r->not_emulated != nullptr ? r->not_emulated : "");
      if (r->status != OZDGEMM_STATUS_SUCCESS || r->s == 0) return false;
    }
    return cudaDeviceSynchronize() == cudaSuccess;
  }
  bool Inside(int64_t i, int64_t j) const {
    return GetParam().part == c_part::lower ? i >= j : i <= j;
  }
  // C with NaN in every element outside the triangle, so that a read of it would show.
  std::vector<double> c_with_nan_outside(int w, unsigned seed, int64_t ldc) const {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> nd;
    std::vector<double> c(static_cast<size_t>(ldc * kN * w));
    for (int64_t j = 0; j < kN; ++j)
      for (int64_t i = 0; i < ldc; ++i)
        for (int p = 0; p < w; ++p)
          c[static_cast<size_t>(i + j * ldc) * w + p] = i < kN && !Inside(i, j) ? NAN : nd(g);
    return c;
  }
};

TEST_P(Triangle, SyrkEqualsTheWholeSquaresTriangle) {
  const int64_t ldc = kN + 1;
  const std::vector<double> ha = operand(1, 11);
  const std::vector<double> hc = c_with_nan_outside(1, 12, ldc);
  const device_buffer<double> da(ha);
  const double alpha = 0.75, beta = -0.5;
  const cublasOperation_t ta = op_a(), tb = ta == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
  for (int round = 0; round < 2; ++round) {  // certified: the host's choice, then speculated
    const device_buffer<double> whole(hc), part(hc);
    const device_result w = dgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, da.ptr, ld(), da.ptr,
                                         ld(), &beta, whole.ptr, ldc, options(), false, true);
    const device_result p =
        dgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, da.ptr, ld(), da.ptr, ld(), &beta,
                     part.ptr, ldc, options(), false, true, nullptr, {GetParam().part, false});
    ASSERT_TRUE(both_emulated(w, p));
    const std::vector<double> want = whole.to_host(), got = part.to_host();
    int64_t differ = 0, inside = 0;
    for (int64_t j = 0; j < kN; ++j)
      for (int64_t i = 0; i < kN; ++i) {
        const size_t at = static_cast<size_t>(i + j * ldc);
        const double expect = Inside(i, j) ? want[at] : hc[at];
        inside += Inside(i, j);
        if (!same_bits(got[at], expect) && ++differ <= 3)
          ADD_FAILURE() << "round " << round << " (" << i << ", " << j << "): " << got[at]
                        << " expected " << expect;
      }
    EXPECT_EQ(differ, 0) << "round " << round;
    EXPECT_EQ(inside, kN * (kN + 1) / 2);
  }
}

TEST_P(Triangle, HerkEqualsTheWholeSquaresTriangleWithARealDiagonal) {
  set_complex_form_setting(complex_form::karatsuba);
  const int64_t ldc = kN + 1;
  const std::vector<double> ha = operand(2, 21);
  const std::vector<double> hc = c_with_nan_outside(2, 22, ldc);
  const device_buffer<double> da(ha);
  const auto* a = reinterpret_cast<const cuDoubleComplex*>(da.ptr);
  const cuDoubleComplex alpha = make_cuDoubleComplex(0.75, 0.0),
                        beta = make_cuDoubleComplex(-0.5, 0.0);
  const cublasOperation_t ta = GetParam().transposed ? CUBLAS_OP_C : CUBLAS_OP_N;
  const cublasOperation_t tb = ta == CUBLAS_OP_N ? CUBLAS_OP_C : CUBLAS_OP_N;
  for (int round = 0; round < 2; ++round) {
    const device_buffer<double> whole(hc), part(hc);
    auto* cw = reinterpret_cast<cuDoubleComplex*>(whole.ptr);
    auto* cp = reinterpret_cast<cuDoubleComplex*>(part.ptr);
    const device_result w = zgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, a, ld(), a, ld(),
                                         &beta, cw, ldc, options(), false, true);
    const device_result p =
        zgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, a, ld(), a, ld(), &beta, cp, ldc,
                     options(), false, true, nullptr, {GetParam().part, true});
    ASSERT_TRUE(both_emulated(w, p));
    const std::vector<double> want = whole.to_host(), got = part.to_host();
    int64_t differ = 0;
    for (int64_t j = 0; j < kN; ++j)
      for (int64_t i = 0; i < kN; ++i)
        for (int q = 0; q < 2; ++q) {
          const size_t at = static_cast<size_t>(i + j * ldc) * 2 + q;
          double expect = Inside(i, j) ? want[at] : hc[at];
          if (i == j && q == 1) expect = 0.0;
          if (!same_bits(got[at], expect) && ++differ <= 3)
            ADD_FAILURE() << "round " << round << " (" << i << ", " << j << ") part " << q << ": "
                          << got[at] << " expected " << expect;
        }
    EXPECT_EQ(differ, 0) << "round " << round;
  }
}

// What the engine cannot take alone is declined with C untouched: nothing to multiply, a complex
// call outside the Karatsuba form.
TEST_P(Triangle, DeclinesWithCUntouched) {
  const int64_t ldc = kN + 1;
  const std::vector<double> ha = operand(2, 31);
  const std::vector<double> hc = c_with_nan_outside(2, 32, ldc);
  const device_buffer<double> da(ha), dc(hc);
  const double zero = 0.0, beta = 2.0;
  const device_result r =
      dgemm_device(handle_, op_a(), op_a() == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N, kN, kN, kK,
                   &zero, da.ptr, ld(), da.ptr, ld(), &beta, dc.ptr, ldc, options(), false, true,
                   nullptr, {GetParam().part, false});
  EXPECT_EQ(r.s, 0);
  EXPECT_STREQ(r.not_emulated, kTriangleNothingToMultiply);
  set_complex_form_setting(complex_form::four);
  const auto* a = reinterpret_cast<const cuDoubleComplex*>(da.ptr);
  const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0);
  const cublasOperation_t ta = GetParam().transposed ? CUBLAS_OP_C : CUBLAS_OP_N;
  const device_result z =
      zgemm_device(handle_, ta, ta == CUBLAS_OP_N ? CUBLAS_OP_C : CUBLAS_OP_N, kN, kN, kK, &one, a,
                   ld(), a, ld(), &one, reinterpret_cast<cuDoubleComplex*>(dc.ptr), ldc, options(),
                   false, true, nullptr, {GetParam().part, true});
  EXPECT_EQ(z.s, 0);
  EXPECT_STREQ(z.not_emulated, kTriangleNotKaratsuba);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<double> got = dc.to_host();
  int64_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i) differ += !same_bits(got[i], hc[i]);
  EXPECT_EQ(differ, 0);
}

INSTANTIATE_TEST_SUITE_P(PartsOpsCounts, Triangle,
                         ::testing::Values(part_case{c_part::lower, false, 14},
                                           part_case{c_part::upper, true, 14},
                                           part_case{c_part::lower, true, -1},
                                           part_case{c_part::upper, false, -1}),
                         ozdgemm::test::part_case_name);

}  // namespace
