// The batched host references (ozdgemm_{d,z}gemm_{strided_,}batched_reference): every matrix's
// result equals the single call's on that matrix bit for bit, over every op pair, padded leading
// dimensions, gaps between matrices, broadcast (stride 0) and negative strides, pointer arrays
// that repeat an operand, fixed s and the certified choice (one matrix of the batch needs
// another count than the rest, one no count serves, one holds Inf and NaN); nothing outside the
// C_i is written; alpha = 0, beta = 0, k = 0, batch 0; invalid arguments write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "ozdgemm/ozdgemm.h"
#include "cpu/cpu_test_util.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {
namespace {

// Written in every element no C_i covers: any change of it is a write outside the batch.
constexpr double kSentinel = -1234.5;

ozdgemm_options_t fixed(int s) { return ozdgemm_options_t{s, OZDGEMM_SCALING_FAST, 0}; }
ozdgemm_options_t certified() { return ozdgemm_default_options(); }

// One element type: T is double or cuDoubleComplex, `parts` doubles each.
template <class T>
struct kind;
template <>
struct kind<double> {
  static constexpr int parts = 1;
  static double scalar(double re, double) { return re; }
  static ozdgemm_status_t single(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
                                 const double* a, int64_t lda, const double* b, int64_t ldb,
                                 double beta, double* c, int64_t ldc, ozdgemm_options_t o) {
    return ozdgemm_dgemm_reference(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, o);
  }
  static constexpr auto strided = ozdgemm_dgemm_strided_batched_reference;
  static constexpr auto arrays = ozdgemm_dgemm_batched_reference;
};
template <>
struct kind<cuDoubleComplex> {
  static constexpr int parts = 2;
  static cuDoubleComplex scalar(double re, double im) { return make_cuDoubleComplex(re, im); }
  static constexpr auto single = ozdgemm_zgemm_reference;
  static constexpr auto strided = ozdgemm_zgemm_strided_batched_reference;
  static constexpr auto arrays = ozdgemm_zgemm_batched_reference;
};

// A batch in one buffer per operand: matrix i at offset base + i * stride elements (stride may
// be 0 or negative), column-major with leading dimension ld; every element outside the
// matrices holds kSentinel (A and B: NaN, so reading outside a matrix shows in C).
struct batch_buffer {
  int64_t rows, cols, ld, stride, count, base;
  std::vector<double> data;  // `parts` doubles per element

  batch_buffer(int64_t r, int64_t c, int64_t l, int64_t s, int64_t n, int parts, double pad)
      : rows(r), cols(c), ld(l), stride(s), count(n) {
    const int64_t extent = (c - 1) * l + r;
    const int64_t span = s == 0 ? extent : (n - 1) * (s < 0 ? -s : s) + extent;
    base = s < 0 ? (n - 1) * -s : 0;
    data.assign(static_cast<size_t>(span * parts), pad);
  }
  int64_t offset(int64_t i, int64_t r, int64_t c) const { return base + i * stride + c * ld + r; }
};

// Fills matrix i of `x` from `seed`; matrix 1 spans a wide exponent range (phi = 4, where the
// certified choice runs another count or none), the others are narrow (phi = 0.5).
void fill(batch_buffer& x, int parts, uint64_t seed) {
  const int64_t distinct = x.stride == 0 ? 1 : x.count;
  for (int64_t i = 0; i < distinct; ++i) {
    const host_matrix m = phi_matrix(x.rows, x.cols * parts, i == 1 ? 4.0 : 0.5, seed + i);
    for (int64_t c = 0; c < x.cols; ++c)
      for (int64_t r = 0; r < x.rows; ++r)
        for (int p = 0; p < parts; ++p)
          x.data[static_cast<size_t>(x.offset(i, r, c) * parts + p)] = m(r, c * parts + p);
  }
}

template <class T>
T* at(batch_buffer& x, int64_t i) {
  return reinterpret_cast<T*>(x.data.data()) + x.offset(i, 0, 0);
}

// The batch of `transa`, `transb` with the given strides (in elements), run as one batched call
// (strided or pointer arrays) and as single calls; C compared bit for bit, sentinels included.
template <class T>
void expect_batch_equals_singles(char ta, char tb, int64_t sa, int64_t sb, bool arrays,
                                 ozdgemm_options_t opts, double alpha_re = 0.75,
                                 double beta_re = -0.5, bool special = false) {
  using K = kind<T>;
  const int64_t m = 7, n = 5, k = 9, count = 4;
  const int64_t ra = ta == 'N' ? m : k, ca = ta == 'N' ? k : m;
  const int64_t rb = tb == 'N' ? k : n, cb = tb == 'N' ? n : k;
  const int64_t lda = ra + 2, ldb = rb + 1, ldc = m + 3;
  const auto stride_of = [&](int64_t s, int64_t extent) { return s == 1 ? extent + 5 : s; };
  batch_buffer a(ra, ca, lda, stride_of(sa, (ca - 1) * lda + ra), count, K::parts, kNaN);
  batch_buffer b(rb, cb, ldb, stride_of(sb, (cb - 1) * ldb + rb), count, K::parts, kNaN);
  batch_buffer c(m, n, ldc, (n - 1) * ldc + m + 3, count, K::parts, kSentinel);
  fill(a, K::parts, 11);
  fill(b, K::parts, 23);
  fill(c, K::parts, 37);
  if (special) {  // matrix 2: an Inf in A and a NaN in B, as native: only their rows/columns
    a.data[static_cast<size_t>(a.offset(a.stride == 0 ? 0 : 2, 1, 1) * K::parts)] = kInf;
    b.data[static_cast<size_t>(b.offset(b.stride == 0 ? 0 : 2, 2, 0) * K::parts)] = kNaN;
  }
  const T alpha = K::scalar(alpha_re, 0.25), beta = K::scalar(beta_re, -0.125);

  batch_buffer want = c;
  for (int64_t i = 0; i < count; ++i)
    ASSERT_EQ(K::single(ta, tb, m, n, k, alpha, at<T>(a, i), lda, at<T>(b, i), ldb, beta,
                        at<T>(want, i), ldc, opts),
              OZDGEMM_STATUS_SUCCESS);

  batch_buffer got = c;
  ozdgemm_status_t st;
  if (arrays) {
    std::vector<const T*> pa, pb;
    std::vector<T*> pc;
    for (int64_t i = 0; i < count; ++i) {
      pa.push_back(at<T>(a, i));
      pb.push_back(at<T>(b, i));
      pc.push_back(at<T>(got, i));
    }
    st = K::arrays(ta, tb, m, n, k, alpha, pa.data(), lda, pb.data(), ldb, beta, pc.data(), ldc,
                   count, opts);
  } else {
    st = K::strided(ta, tb, m, n, k, alpha, at<T>(a, 0), lda, a.stride, at<T>(b, 0), ldb,
                    b.stride, beta, at<T>(got, 0), ldc, got.stride, count, opts);
  }
  ASSERT_EQ(st, OZDGEMM_STATUS_SUCCESS);
  EXPECT_TRUE(same_bits(got.data, want.data));
  // Not a comparison of two unchanged buffers: every C_i was written.
  for (int64_t i = 0; i < count; ++i)
    EXPECT_NE(std::memcmp(at<T>(got, i), at<T>(c, i), sizeof(T)), 0) << "C_" << i;
}

using op_case = std::tuple<char, char>;

std::string op_name(const testing::TestParamInfo<op_case>& info) {
  return std::string{std::get<0>(info.param), std::get<1>(info.param)};
}

class DgemmBatchedReference : public testing::TestWithParam<op_case> {};

TEST_P(DgemmBatchedReference, StridedEqualsSingleCallsFixedAndCertified) {
  const auto [ta, tb] = GetParam();
  for (ozdgemm_options_t o : {fixed(9), certified()}) {
    SCOPED_TRACE(o.num_moduli);
    expect_batch_equals_singles<double>(ta, tb, 1, 1, false, o);
    expect_batch_equals_singles<double>(ta, tb, 0, 1, false, o);   // A broadcast
    expect_batch_equals_singles<double>(ta, tb, 1, 0, false, o);   // B broadcast
    expect_batch_equals_singles<double>(ta, tb, 1, -1, false, o);  // B backwards
  }
}

TEST_P(DgemmBatchedReference, PointerArraysEqualSingleCalls) {
  const auto [ta, tb] = GetParam();
  expect_batch_equals_singles<double>(ta, tb, 1, 1, true, certified());
  expect_batch_equals_singles<double>(ta, tb, 0, 1, true, fixed(12));  // A repeated
}

INSTANTIATE_TEST_SUITE_P(Ops, DgemmBatchedReference,
                         testing::Combine(testing::Values('N', 'T'), testing::Values('N', 'T')),
                         op_name);

class ZgemmBatchedReference : public testing::TestWithParam<op_case> {};

TEST_P(ZgemmBatchedReference, StridedAndArraysEqualSingleCalls) {
  const auto [ta, tb] = GetParam();
  for (ozdgemm_options_t o : {fixed(10), certified()}) {
    SCOPED_TRACE(o.num_moduli);
    expect_batch_equals_singles<cuDoubleComplex>(ta, tb, 1, 1, false, o);
    expect_batch_equals_singles<cuDoubleComplex>(ta, tb, 1, 0, false, o);
    expect_batch_equals_singles<cuDoubleComplex>(ta, tb, 1, 1, true, o);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ZgemmBatchedReference,
                         testing::Combine(testing::Values('N', 'T', 'C'),
                                          testing::Values('N', 'T', 'C')),
                         op_name);

TEST(BatchedReference, SpecialValuesStayInTheirMatrix) {
  expect_batch_equals_singles<double>('N', 'T', 1, 1, false, certified(), 0.75, -0.5, true);
  expect_batch_equals_singles<cuDoubleComplex>('T', 'N', 1, 1, false, fixed(8), 0.75, -0.5, true);
}

TEST(BatchedReference, AlphaZeroAndBetaZero) {
  // alpha = 0 reads neither A nor B (the NaN padding would show), beta = 0 never reads C.
  expect_batch_equals_singles<double>('N', 'N', 1, 1, false, certified(), 0.0, 0.5);
  expect_batch_equals_singles<double>('T', 'T', 1, 1, false, fixed(7), 1.0, 0.0);
  expect_batch_equals_singles<cuDoubleComplex>('C', 'N', 1, 1, true, certified(), 0.0, 2.0);
}

// A call that must write nothing: C keeps its bits.
template <class Call>
void expect_nothing_written(ozdgemm_status_t want, Call&& call) {
  std::vector<double> c(64, kSentinel);
  const std::vector<double> before = c;
  EXPECT_EQ(call(c.data()), want);
  EXPECT_TRUE(same_bits(c, before));
}

TEST(BatchedReference, EmptyBatchesAndInvalidArgumentsWriteNothing) {
  std::vector<double> a(64, 1.0), b(64, 1.0);
  const ozdgemm_options_t o = certified();
  const auto strided = [&](int64_t count, int64_t lda, int64_t stride_c, char ta = 'N') {
    return [&, count, lda, stride_c, ta](double* c) {
      return ozdgemm_dgemm_strided_batched_reference(ta, 'N', 2, 2, 2, 1.0, a.data(), lda, 4,
                                                     b.data(), 2, 4, 1.0, c, 2, stride_c, count, o);
    };
  };
  expect_nothing_written(OZDGEMM_STATUS_SUCCESS, strided(0, 2, 4));
  expect_nothing_written(OZDGEMM_STATUS_INVALID_VALUE, strided(-1, 2, 4));
  expect_nothing_written(OZDGEMM_STATUS_INVALID_VALUE, strided(2, 1, 4));       // lda < m
  expect_nothing_written(OZDGEMM_STATUS_INVALID_VALUE, strided(2, 2, 4, 'X'));  // bad op
  // C_1's byte offset overflows: no memory a caller can own, refused before C_0 is written.
  expect_nothing_written(OZDGEMM_STATUS_INVALID_VALUE,
                         strided(3, 2, std::numeric_limits<int64_t>::max() / 4));
  // k = 0 is C = beta C, also batched.
  std::vector<double> c(8, 3.0);
  ASSERT_EQ(ozdgemm_dgemm_strided_batched_reference('N', 'N', 2, 2, 0, 1.0, nullptr, 2, 0, nullptr,
                                                    1, 0, 2.0, c.data(), 2, 4, 2, o),
            OZDGEMM_STATUS_SUCCESS);
  for (double x : c) EXPECT_EQ(x, 6.0);

  const double* pa[2] = {a.data(), a.data()};
  const double* pb[2] = {b.data(), b.data()};
  expect_nothing_written(OZDGEMM_STATUS_INVALID_VALUE, [&](double* c0) {
    double* pc[2] = {c0, c0 + 4};
    return ozdgemm_dgemm_batched_reference('N', 'N', 2, 2, 2, 1.0, pa, 2, nullptr, 2, 1.0, pc, 2,
                                           2, o);
  });
  expect_nothing_written(OZDGEMM_STATUS_INVALID_VALUE, [&](double* c0) {
    double* pc[2] = {c0, c0 + 4};
    return ozdgemm_dgemm_batched_reference('N', 'N', 2, 2, 2, 1.0, pa, 2, pb, 2, 1.0, pc, 2, -3, o);
  });
  expect_nothing_written(OZDGEMM_STATUS_INVALID_VALUE, [&](double* c0) {
    auto* z = reinterpret_cast<cuDoubleComplex*>(c0);
    const auto* za = reinterpret_cast<const cuDoubleComplex*>(a.data());
    return ozdgemm_zgemm_strided_batched_reference(
        'N', 'N', 2, 2, 2, make_cuDoubleComplex(1, 0), za, 2, 4, za, 2, 4,
        make_cuDoubleComplex(1, 0), z, 2, 4, 2, ozdgemm_options_t{21, OZDGEMM_SCALING_FAST, 0});
  });
}

}  // namespace
}  // namespace ozdgemm::test
