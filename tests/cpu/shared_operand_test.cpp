// Which calls read A as both factors (engine/pipeline.hpp's b_is_a) and what their layout then
// points at (engine/layout.hpp's share_a_as_b): only a real call with fast scaling whose B is the
// same vectors as its A (pointer, leading dimension and order), square, with its own A; every B
// array then is A's, B's worst ratios keep their own row. The GPU test
// (tests/gpu/shared_operand_test.cpp) holds the bits. Host arithmetic only: no GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/gemm_problem.hpp"
#include "engine/emulate.hpp"
#include "engine/layout.hpp"
#include "engine/pipeline.hpp"

namespace ozdgemm::test {
namespace {

namespace d = detail;

// C = A A^T with A n x k (ld n): op(A) = A, op(B) = A^T, the same vectors.
d::device_gemm gram(const double* a, int64_t n, int64_t k) {
  d::device_gemm call{};
  call.p.m = call.p.n = n;
  call.p.k = k;
  call.p.a = d::operand_a(d::op_kind::n, a, n);
  call.p.b = d::operand_b(d::op_kind::t, a, n);
  call.mode = d::scaling_mode::fast;
  return call;
}

TEST(SharedOperand, OnlyTheSameVectorsWithFastScalingShareA) {
  std::vector<double> a(64), other(64);
  EXPECT_TRUE(d::b_is_a(gram(a.data(), 8, 8)));
  d::device_gemm t = gram(a.data(), 8, 8);  // C = A^T A: both read A's columns
  t.p.a = d::operand_a(d::op_kind::t, a.data(), 8);
  t.p.b = d::operand_b(d::op_kind::n, a.data(), 8);
  EXPECT_TRUE(d::b_is_a(t));
  t.part = d::c_part::lower;
  EXPECT_TRUE(d::b_is_a(t));

  d::device_gemm c = gram(a.data(), 8, 8);
  c.p.b.ptr = other.data();  // an equal copy is another operand
  EXPECT_FALSE(d::b_is_a(c));
  c = gram(a.data(), 8, 8);
  c.p.b = d::operand_b(d::op_kind::n, a.data(), 8);  // A A: rows against columns
  EXPECT_FALSE(d::b_is_a(c));
  c = gram(a.data(), 8, 8);
  c.p.b.ld = 16;
  EXPECT_FALSE(d::b_is_a(c));
  c = gram(a.data(), 8, 8);
  c.p.n = 7;
  EXPECT_FALSE(d::b_is_a(c));
  c = gram(a.data(), 8, 8);
  c.mode = d::scaling_mode::accurate;  // B's accurate exponents are not A's
  EXPECT_FALSE(d::b_is_a(c));
  c = gram(a.data(), 8, 8);
  c.reuse_a = true;
  EXPECT_FALSE(d::b_is_a(c));
  c = gram(a.data(), 8, 8);
  c.mirrored_b = 4;  // a complex embedding: B* is not A'
  EXPECT_FALSE(d::b_is_a(c));
  c = gram(a.data(), 8, 8);
  c.karatsuba = d::karatsuba_halves{4, 4};
  EXPECT_FALSE(d::b_is_a(c));
}

TEST(SharedOperand, TheLayoutPointsEveryArrayOfBAtAs) {
  d::layout L = d::layout_for(reinterpret_cast<void*>(uintptr_t{1} << 20), 1000, 1000, 300, 14,
                              d::scaling_mode::fast, true, true, d::int8_gemm_backend::cublas, 0,
                              {});
  ASSERT_TRUE(L.fits);
  const unsigned long long* worst = L.worst;
  ASSERT_NE(L.res_b, L.res_a);
  d::share_a_as_b(&L);
  EXPECT_EQ(L.emax_b, L.emax_a);
  EXPECT_EQ(L.flags_b, L.flags_a);
  EXPECT_EQ(L.sum_q2_b, L.sum_q2_a);
  EXPECT_EQ(L.exp_sum_b, L.exp_sum_a);
  EXPECT_EQ(L.nnz_b, L.nnz_a);
  EXPECT_EQ(L.norm_b, L.norm_a);
  EXPECT_EQ(L.exp_b, L.exp_a);
  EXPECT_EQ(L.res_b, L.res_a);
  EXPECT_EQ(L.bands_b, L.bands_a);
  EXPECT_EQ(L.exps_all_b, L.exps_all_a);
  EXPECT_EQ(L.drop_b, L.drop_a);
  EXPECT_EQ(L.worst, worst);
  EXPECT_NE(L.norm_a, nullptr);  // certified: the arrays exist
  EXPECT_NE(L.bands_a, nullptr);
}

}  // namespace
}  // namespace ozdgemm::test
