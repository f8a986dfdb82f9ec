// The GEMM and CRT steps run per block of rows of C when the products of all of C would take
// the workspace past the workspace bound (engine/emulate.cpp, rule_row_block). Blocks must change
// nothing: here they are forced small (a few blocks of 32-48 rows, the last one partial) and
// every element is compared bit for bit with the host reference, for both scaling modes,
// both ways of issuing the modulus GEMMs, two k-blocks, alpha/beta, both layouts of op(A),
// a row of op(A) holding NaN and Inf (recomputed in FP64 from the block's own rows), and the
// automatic and certified moduli counts (the certified one also chosen on the GPU).
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/emulate.hpp"
#include "engine/gpu_choice.hpp"
#include "gpu_fixture.hpp"
#include "reference/auto_reference.hpp"
#include "reference/host_reference.hpp"

namespace {

using namespace ozdgemm::detail;

struct block_case {
  int64_t m, n, k;
  op_kind opa;
  moduli_setting moduli;
  scaling_mode mode;
  gemm_batching batching;
  double alpha, beta;
  int64_t row_block;
  bool on_gpu = false;  // certified, chosen on the GPU (engine/gpu_choice.hpp)
};

class RowBlocks : public GpuTest, public ::testing::WithParamInterface<block_case> {};

TEST_P(RowBlocks, EqualTheHostReferenceBitwise) {
  const block_case tc = GetParam();
  const int64_t m = tc.m, n = tc.n, k = tc.k;
  // The C API's codes of the moduli setting (OZDGEMM_MODULI_AUTO 0, _CERTIFIED -1) seed the data.
  const int code = tc.moduli.is_fixed() ? tc.moduli.count() : tc.moduli.is_certified() ? -1 : 0;
  std::mt19937_64 g(77 + m + n + k + code);
  std::normal_distribution<double> nd;
  // op(A) m x k stored as A (m x k, lda = m) or A^T (k x m, lda = k); op(B) = B (k x n).
  const bool ta = tc.opa == op_kind::t;
  const int64_t lda = ta ? k : m;
  std::vector<double> ha(m * k), hb(k * n), hc(m * n);
  for (double& x : ha) x = nd(g) * std::exp(2.0 * nd(g));
  for (double& x : hb) x = nd(g);
  for (double& x : hc) x = nd(g);
  const int64_t bad_row = m - 5;  // in the last block
  ha[ta ? bad_row * lda + 3 : 3 * lda + bad_row] = NAN;
  ha[ta ? 40 * lda + 1 : 1 * lda + 40] = INFINITY;  // row 40: block 0 or 1

  // Host reference (for auto, its own choice of s, which the device must repeat).
  std::vector<double> ref = hc;
  const gemm_problem hp{
      m,          n, k, operand_a(tc.opa, ha.data(), lda), operand_b(op_kind::n, hb.data(), k),
      ref.data(), m};
  int s = tc.moduli.count();
  if (tc.moduli.chooses_per_call()) {
    const moduli_choice c =
        reference_dgemm_auto(hp, tc.alpha, tc.beta, tc.mode, {}, tc.moduli.is_certified());
    ASSERT_NE(c.s, 0) << c.why;
    s = c.s;
  } else {
    reference_dgemm(hp, tc.alpha, tc.beta, s, tc.mode);
  }

  device_buffer<double> a(ha), b(hb), c(hc);
  device_buffer<char> ws(emulation_workspace_bytes(m, n, k, tc.moduli, tc.mode,
                                                   int8_gemm_backend::setting, tc.row_block));
  const gemm_problem p{m,     n, k, operand_a(tc.opa, a.ptr, lda), operand_b(op_kind::n, b.ptr, k),
                       c.ptr, m};
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  device_gemm call{p,
                   scalar_arg{nullptr, tc.alpha},
                   scalar_arg{nullptr, tc.beta},
                   tc.moduli,
                   tc.mode,
                   nullptr,
                   handle_,
                   nullptr,
                   tc.batching};
  call.row_block = tc.row_block;
  stage_events ev{};
  call.events = &ev;  // null events: only the block count is reported
  gpu_choice_graphs graphs;
  if (tc.on_gpu) call.graphs = &graphs;
  EXPECT_EQ(enqueue_emulation(call, ws.ptr), tc.on_gpu ? kChosenOnGpu : s);
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(ev.blocks, (round_up(m, kPad) + tc.row_block - 1) / tc.row_block);
  EXPECT_GE(ev.blocks, 3) << "the case must exercise several blocks";
  const std::vector<double> got = c.to_host();
  int64_t bad = 0, finite = 0;
  for (int64_t x = 0; x < m * n; ++x) {
    finite += std::isfinite(got[x]) ? 1 : 0;
    if (!same_bits(got[x], ref[x]) && ++bad <= 5)
      ADD_FAILURE() << "C(" << x % m << "," << x / m << "): gpu " << got[x] << " host " << ref[x];
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(finite, m * n / 2) << "the comparison must be over real results";
  EXPECT_FALSE(std::isfinite(got[bad_row])) << "the NaN row is recomputed in FP64";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RowBlocks,
    ::testing::Values(block_case{130, 70, 300, op_kind::n, moduli_setting::fixed(14),
                                 scaling_mode::fast, gemm_batching::batched, 1.0, 0.0, 48},
                      block_case{130, 70, 300, op_kind::t, moduli_setting::fixed(14),
                                 scaling_mode::accurate, gemm_batching::looped, -1.5, 0.25, 32},
                      block_case{100, 33, 300, op_kind::n, moduli_setting::fixed(9),
                                 scaling_mode::accurate, gemm_batching::batched, 0.75, 1.0, 32},
                      block_case{120, 20, 131056 + 77, op_kind::t, moduli_setting::fixed(14),
                                 scaling_mode::fast, gemm_batching::looped, 1.0, 0.5,
                                 48},  // two k-blocks, folds per row block
                      block_case{96, 40, 200, op_kind::n, moduli_setting::automatic(),
                                 scaling_mode::fast, gemm_batching::batched, 1.0, 0.0, 32},
                      block_case{96, 40, 200, op_kind::t, moduli_setting::automatic(),
                                 scaling_mode::accurate, gemm_batching::looped, 1.0, 0.0, 32},
                      // The certified count: its band GEMMs and bound per block of rows, rows
                      // with NaN / Inf left out, and two k-blocks.
                      block_case{96, 40, 200, op_kind::n, moduli_setting::certified(),
                                 scaling_mode::fast, gemm_batching::batched, 1.0, 0.0, 32},
                      block_case{96, 40, 200, op_kind::t, moduli_setting::certified(),
                                 scaling_mode::accurate, gemm_batching::looped, -1.0, 0.5, 32},
                      block_case{120, 20, 131056 + 77, op_kind::t, moduli_setting::certified(),
                                 scaling_mode::fast, gemm_batching::looped, 1.0, 0.5, 48},
                      // The same, chosen on the GPU: a SWITCH of GEMMs per block of rows.
                      block_case{96, 40, 200, op_kind::n, moduli_setting::certified(),
                                 scaling_mode::fast, gemm_batching::batched, 1.0, 0.0, 32, true},
                      block_case{96, 40, 200, op_kind::t, moduli_setting::certified(),
                                 scaling_mode::accurate, gemm_batching::looped, -1.0, 0.5, 32,
                                 true},
                      block_case{120, 20, 131056 + 77, op_kind::t, moduli_setting::certified(),
                                 scaling_mode::fast, gemm_batching::looped, 1.0, 0.5, 48, true}),
    [](const ::testing::TestParamInfo<block_case>& i) { return "case" + std::to_string(i.index); });

}  // namespace
