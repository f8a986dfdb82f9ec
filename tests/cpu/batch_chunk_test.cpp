// The batched engine's workspace and chunking (engine/batched_emulate.hpp), host code: a chunk's
// workspace is the sum of its arrays (checked against a count made here from the layout's
// description), grows with the matrices, shrinks for a broadcast operand, overflows into false
// rather than a wrapped size, and batch_chunk returns the largest chunk that fits the budget.
// The GPU test BatchedEngine checks the bits.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/gemm_problem.hpp"
#include "engine/batched_complex.hpp"
#include "engine/batched_emulate.hpp"

namespace ozdgemm::test {
namespace {

using detail::batch_dims;
using detail::int8_gemm_backend;

size_t batch_bytes(const batch_dims& d, int64_t count) {
  size_t b = 0;
  EXPECT_TRUE(detail::batched_emulation_workspace_bytes(d, count, &b));
  return b;
}

// The arrays the header lists, each rounded up to 256 bytes (an upper bound of the carved
// total: alignment never adds more than 255 bytes per array).
size_t expected_upper(const batch_dims& d, int64_t count) {
  const auto up = [](int64_t x) { return static_cast<size_t>((x + 255) / 256 * 256); };
  const int64_t mp = detail::round_up(d.m, 16), np = detail::round_up(d.n, 16),
                kp = detail::round_up(d.k, 16);
  const int64_t qa = d.broadcast_a ? 1 : count, qb = d.broadcast_b ? 1 : count;
  size_t total = 0;
  for (int64_t q_vec : {qa * d.m, qb * d.n})
    total += up(4 * q_vec) + up(4 * q_vec) + up(8 * q_vec) + up(4 * q_vec);  // emax flags q2 exp
  total += up(qa * d.s * mp * kp) + up(qb * d.s * np * kp) + up(4 * count * d.s * mp * np);
  return total;
}

TEST(BatchChunk, WorkspaceIsTheSumOfItsArrays) {
  for (const int64_t count : {1, 2, 7, 64})
    for (const int s : {8, 14, 20})
      for (const bool ba : {false, true}) {
        const batch_dims d{40, 33, 100, s, ba, false, int8_gemm_backend::cublas};
        const size_t got = batch_bytes(d, count);
        EXPECT_LE(got, expected_upper(d, count));
        // Products alone: count s m_pad n_pad INT32.
        EXPECT_GE(got, static_cast<size_t>(4 * count * s * 48 * 48));
      }
}

TEST(BatchChunk, GrowsWithTheBatchAndShrinksForABroadcastOperand) {
  const batch_dims d{64, 64, 512, 14, false, false, int8_gemm_backend::lt};
  batch_dims bcast_a = d, bcast_b = d;
  bcast_a.broadcast_a = true;
  bcast_b.broadcast_b = true;
  size_t prev = 0;
  for (int64_t q = 1; q <= 64; q *= 2) {
    const size_t b = batch_bytes(d, q);
    EXPECT_GT(b, prev) << q;
    prev = b;
    if (q > 1) {
      EXPECT_LT(batch_bytes(bcast_a, q), b);
      EXPECT_LT(batch_bytes(bcast_b, q), b);
    } else {
      EXPECT_EQ(batch_bytes(bcast_a, q), b);  // one matrix: nothing shared
    }
  }
  // The lt backend adds its workspace (capped at 64 MiB) last.
  batch_dims cublas = d;
  cublas.gemm = int8_gemm_backend::cublas;
  EXPECT_GT(batch_bytes(d, 8), batch_bytes(cublas, 8));
  EXPECT_LE(batch_bytes(d, 8) - batch_bytes(cublas, 8), (size_t{64} << 20) + 256);
}

// Accurate scaling keeps every matrix's exponents and planes (a broadcast operand's exponents
// depend on the other operand), adds its row maxima and column headroom, and its bound GEMM's
// output shares the products' bytes (the larger of the two).
TEST(BatchChunk, AccurateScalingKeepsEveryMatrix) {
  batch_dims fast{40, 33, 100, 14, true, false, int8_gemm_backend::cublas};
  batch_dims accurate = fast;
  accurate.mode = detail::scaling_mode::accurate;
  batch_dims accurate_strided = accurate;
  accurate_strided.broadcast_a = false;
  EXPECT_EQ(batch_bytes(accurate, 9), batch_bytes(accurate_strided, 9));
  EXPECT_GT(batch_bytes(accurate, 9), batch_bytes(fast, 9));
  // s = 2 planes and k = 16: U (nblk = 1 block of m_pad n_pad INT32) is as large as the products
  // of s = 1; with s >= 2 the products are larger, so U adds nothing.
  batch_dims acc2{
      40, 33, 16, 2, false, false, int8_gemm_backend::cublas, detail::scaling_mode::accurate};
  batch_dims fast2 = acc2;
  fast2.mode = detail::scaling_mode::fast;
  const size_t a = batch_bytes(acc2, 5), f = batch_bytes(fast2, 5);
  // Row maxima (8 m) and headroom (4 n) in, norms (8 m + 8 n) out, per matrix, each array
  // rounded to 256 bytes: within a few hundred bytes per matrix, far below a plane of U.
  EXPECT_LE(a > f ? a - f : f - a, size_t{5 * (8 * 40 + 8 * 33)} + 1024);
  EXPECT_LT(a > f ? a - f : f - a, size_t{5 * 4 * 48 * 48});
}

TEST(BatchChunk, OverflowIsFalseNotAWrappedSize) {
  size_t b = 1;
  const batch_dims huge{detail::kMaxDim, detail::kMaxDim, detail::kMaxDim,          20,
                        false,           false,           int8_gemm_backend::cublas};
  EXPECT_FALSE(detail::batched_emulation_workspace_bytes(huge, 1, &b));
  EXPECT_EQ(b, 0u);
  const batch_dims wide{1 << 21, 1 << 21, 16, 20, false, false, int8_gemm_backend::cublas};
  EXPECT_FALSE(detail::batched_emulation_workspace_bytes(wide, 65535, &b));
  const batch_dims ok{16, 16, 16, 20, false, false, int8_gemm_backend::cublas};
  EXPECT_FALSE(detail::batched_emulation_workspace_bytes(ok, 0, &b));
  EXPECT_FALSE(detail::batched_emulation_workspace_bytes(ok, -3, &b));
  batch_dims bad_s = ok;
  bad_s.s = 21;
  EXPECT_FALSE(detail::batched_emulation_workspace_bytes(bad_s, 1, &b));
  bad_s.s = 1;
  EXPECT_FALSE(detail::batched_emulation_workspace_bytes(bad_s, 1, &b));
  EXPECT_EQ(detail::batch_chunk(huge, 10, std::numeric_limits<size_t>::max()), 0);
  EXPECT_EQ(detail::batch_chunk(wide, 65535, std::numeric_limits<size_t>::max()),
            detail::batch_chunk(wide, 100000, std::numeric_limits<size_t>::max()));
}

TEST(BatchChunk, LargestChunkThatFitsTheBudget) {
  const batch_dims d{100, 80, 300, 14, false, true, int8_gemm_backend::lt};
  const size_t one = batch_bytes(d, 1);
  EXPECT_EQ(detail::batch_chunk(d, 500, one - 1), 0) << "not even one matrix fits";
  EXPECT_EQ(detail::batch_chunk(d, 500, one), 1);
  EXPECT_EQ(detail::batch_chunk(d, 500, std::numeric_limits<size_t>::max()), 500);
  EXPECT_EQ(detail::batch_chunk(d, 0, std::numeric_limits<size_t>::max()), 0);
  EXPECT_EQ(detail::batch_chunk(d, 100000, std::numeric_limits<size_t>::max()),
            detail::kMaxBatchChunk);
  for (const int64_t want : {2, 3, 17, 99, 250}) {
    const size_t budget = batch_bytes(d, want) + 100;  // less than one more matrix adds
    const int64_t q = detail::batch_chunk(d, 500, budget);
    EXPECT_EQ(q, want);
    EXPECT_LE(batch_bytes(d, q), budget);
    EXPECT_GT(batch_bytes(d, q + 1), budget);
  }
}

TEST(BatchChunk, ScopeOfTheEngine) {
  using detail::moduli_setting;
  using detail::scaling_mode;
  const auto lt = int8_gemm_backend::lt;
  EXPECT_EQ(
      detail::batch_engine_refusal(64, 64, 64, moduli_setting::fixed(14), scaling_mode::fast, lt),
      nullptr);
  EXPECT_NE(
      detail::batch_engine_refusal(64, 64, 64, moduli_setting::automatic(), scaling_mode::fast, lt),
      nullptr);
  EXPECT_NE(
      detail::batch_engine_refusal(64, 64, 64, moduli_setting::certified(), scaling_mode::fast, lt),
      nullptr);
  EXPECT_EQ(detail::batch_engine_refusal(64, 64, 64, moduli_setting::fixed(14),
                                         scaling_mode::accurate, lt),
            nullptr);
  EXPECT_NE(
      detail::batch_engine_refusal(64, 64, 0, moduli_setting::fixed(14), scaling_mode::fast, lt),
      nullptr);
  // A matrix whose single call runs in blocks of rows of C (rule_row_block) stays per matrix.
  EXPECT_NE(detail::batch_engine_refusal(32768, 32768, 256, moduli_setting::fixed(20),
                                         scaling_mode::fast, lt),
            nullptr);
}

}  // namespace
}  // namespace ozdgemm::test

namespace ozdgemm::test {
namespace {

// One matrix's INT32 products against half the L2 cache: 512^2 at s = 14 (14 MiB) fits an
// H100's 50 MiB, 1024^2 (56 MiB) does not; the padded sizes count; no cache, no batch.
TEST(BatchChunk, ProductsFitHalfTheCache) {
  const size_t h100 = size_t{50} << 20;
  batch_dims d{512, 512, 512, 14, false, false, int8_gemm_backend::cublas};
  EXPECT_TRUE(detail::products_fit_cache(d, h100));
  d.m = d.n = 1024;
  EXPECT_FALSE(detail::products_fit_cache(d, h100));
  d.m = d.n = 672;  // 24.1 MiB
  EXPECT_TRUE(detail::products_fit_cache(d, h100));
  d.m = 657;  // padded to 672
  EXPECT_TRUE(detail::products_fit_cache(d, h100));
  d.m = d.n = 673;  // padded to 688: 25.3 MiB
  EXPECT_FALSE(detail::products_fit_cache(d, h100));
  EXPECT_FALSE(detail::products_fit_cache(
      batch_dims{16, 16, 16, 14, false, false, int8_gemm_backend::cublas}, 0));
}

}  // namespace
}  // namespace ozdgemm::test

namespace ozdgemm::test {
namespace {

// A complex batch's workspace (engine/batched_complex.hpp): the batched engine's for the
// embedding (m x 2n' x 2k'), then A' (m 2k'), B* (2k' 2n') and T (m 2n') doubles per matrix (one
// A' for a broadcast A with fast scaling); it grows with the matrices, chunks as the real batch
// does, and refuses what the embedding's shape refuses.
TEST(BatchChunk, ComplexBatchesAddTheirPacksToTheEmbeddingsWorkspace) {
  const batch_dims d{40, 33, 100, 14, false, false, int8_gemm_backend::cublas};
  const batch_dims e = detail::embedded_dims(d);
  EXPECT_EQ(e.m, 40);
  EXPECT_EQ(e.n, 2 * 48);
  EXPECT_EQ(e.k, 2 * 112);
  for (const int64_t q : {1, 3, 16}) {
    size_t complex_bytes = 0;
    ASSERT_TRUE(detail::batched_complex_workspace_bytes(d, q, &complex_bytes));
    const size_t engine = batch_bytes(e, q);
    const size_t packs = static_cast<size_t>(8 * q * (40 * 224 + 224 * 96 + 40 * 96));
    EXPECT_GE(complex_bytes, engine + packs);
    EXPECT_LE(complex_bytes, engine + packs + 3 * 256);
  }
  batch_dims bcast = d;
  bcast.broadcast_a = true;
  size_t strided = 0, shared = 0;
  ASSERT_TRUE(detail::batched_complex_workspace_bytes(d, 8, &strided));
  ASSERT_TRUE(detail::batched_complex_workspace_bytes(bcast, 8, &shared));
  EXPECT_LT(shared, strided);
  // The largest chunk that fits: 5 matrices' workspace holds 5, not 6.
  size_t five = 0;
  ASSERT_TRUE(detail::batched_complex_workspace_bytes(d, 5, &five));
  EXPECT_EQ(detail::complex_batch_chunk(d, 100, five), 5);
  EXPECT_EQ(detail::complex_batch_chunk(d, 3, five), 3);
  EXPECT_EQ(detail::complex_batch_chunk(d, 100, 1000), 0);
  size_t b = 1;
  const batch_dims huge{1,     detail::kMaxDim, detail::kMaxDim,          14,
                        false, false,           int8_gemm_backend::cublas};
  EXPECT_FALSE(detail::batched_complex_workspace_bytes(huge, 1, &b));
  EXPECT_EQ(b, 0u);
  const auto fixed = detail::moduli_setting::fixed(14);
  EXPECT_EQ(detail::complex_batch_engine_refusal(40, 33, 100, fixed, detail::scaling_mode::fast,
                                                 int8_gemm_backend::cublas),
            nullptr);
  EXPECT_NE(
      detail::complex_batch_engine_refusal(40, 33, 100, detail::moduli_setting::certified(),
                                           detail::scaling_mode::fast, int8_gemm_backend::cublas),
      nullptr);
  EXPECT_NE(detail::complex_batch_engine_refusal(40, 0, 100, fixed, detail::scaling_mode::fast,
                                                 int8_gemm_backend::cublas),
            nullptr);
}

}  // namespace
}  // namespace ozdgemm::test
