// The host path multiplies wide calls as tiles of C's columns, computing A's scaling and
// residues on the first tile only (device_gemm::reuse_a). With fast scaling that must give the
// bits of one call over all columns, for every op, with beta != 0, and with NaN/Inf rows of A
// (whose flags are part of what is reused).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "engine/emulate.hpp"
#include "gpu_fixture.hpp"

namespace {

using namespace ozdgemm::detail;

struct tiled_case {
  op_kind opa, opb;
  int64_t m, n, k, width;
  double beta;
  bool special;  // Inf and NaN in A
};

// The suite of this file: GpuTest (skips without a device, one cuBLAS handle per test).
class ColumnTiles : public GpuTest {};

TEST_F(ColumnTiles, ReusingAMatchOneCallBitwise) {
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  const int s = 14;
  std::mt19937_64 g(11);
  std::normal_distribution<double> nd;
  const tiled_case cases[] = {
      {op_kind::n, op_kind::n, 257, 300, 190, 64, 0.0, false},
      {op_kind::t, op_kind::n, 130, 97, 333, 40, 0.5, false},
      {op_kind::n, op_kind::t, 64, 250, 77, 100, -1.0, true},
      {op_kind::t, op_kind::t, 33, 129, 1000, 16, 2.0, false},
      {op_kind::n, op_kind::n, 9, 40, 131056 + 40, 17, 1.0, false},  // two k-blocks
  };
  for (const tiled_case& tc : cases) {
    const int64_t rows_a = tc.opa == op_kind::n ? tc.m : tc.k;
    const int64_t rows_b = tc.opb == op_kind::n ? tc.k : tc.n;
    std::vector<double> ha(tc.m * tc.k), hb(tc.k * tc.n), hc(tc.m * tc.n);
    for (double& x : ha) x = nd(g) * std::exp(2.0 * nd(g));
    for (double& x : hb) x = nd(g) * std::exp(nd(g));
    for (double& x : hc) x = nd(g);
    if (tc.special) {
      ha[3] = std::numeric_limits<double>::infinity();
      ha[ha.size() / 2] = std::numeric_limits<double>::quiet_NaN();
    }
    device_buffer<double> a(ha), b(hb), whole(hc), tiled(hc);
    const size_t bytes =
        emulation_workspace_bytes(tc.m, tc.n, tc.k, moduli_setting::fixed(s), scaling_mode::fast);
    device_buffer<char> ws(bytes);
    ASSERT_NE(ws.ptr, nullptr);

    auto call = [&](int64_t j0, int64_t width, double* c, bool reuse_a) {
      const double* b_tile = tc.opb == op_kind::n ? b.ptr + j0 * rows_b : b.ptr + j0;
      const gemm_problem p{tc.m, width, tc.k, operand_a(tc.opa, a.ptr, rows_a),
                           operand_b(tc.opb, b_tile, rows_b), c + j0 * tc.m, tc.m};
      device_gemm d{p,
                    scalar_arg{nullptr, 1.5},
                    scalar_arg{nullptr, tc.beta},
                    moduli_setting::fixed(s),
                    scaling_mode::fast,
                    nullptr,
                    handle_,
                    nullptr};
      d.reuse_a = reuse_a;
      enqueue_emulation(d, ws.ptr);
    };
    call(0, tc.n, whole.ptr, false);
    // The workspace now holds the whole call's A: start tiling from a cleared workspace so a
    // tile that wrongly skipped A's passes cannot pass by luck.
    ASSERT_CUDA(cudaMemset(ws.ptr, 0x5a, bytes));
    for (int64_t j0 = 0; j0 < tc.n; j0 += tc.width)
      call(j0, std::min(tc.width, tc.n - j0), tiled.ptr, j0 > 0);
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<double> w = whole.to_host(), t = tiled.to_host();
    int64_t differ = 0, finite = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      differ += std::memcmp(&w[i], &t[i], sizeof(double)) != 0;
      finite += std::isfinite(w[i]) && w[i] != 0.0;
    }
    EXPECT_EQ(differ, 0) << tc.m << "x" << tc.n << "x" << tc.k << " tiles of " << tc.width;
    EXPECT_GT(finite, tc.m * tc.n / 2) << "the comparison must be over real results";
  }
}

TEST_F(ColumnTiles, ReuseOfAIsRefusedWithAccurateScaling) {
  device_buffer<double> a(16 * 16), b(16 * 16), c(16 * 16);
  device_buffer<char> ws(
      emulation_workspace_bytes(16, 16, 16, moduli_setting::fixed(8), scaling_mode::accurate));
  const gemm_problem p{16, 16, 16, operand_a(op_kind::n, a.ptr, 16),
                       operand_b(op_kind::n, b.ptr, 16), c.ptr, 16};
  device_gemm d{p,
                scalar_arg{nullptr, 1.0},
                scalar_arg{nullptr, 0.0},
                moduli_setting::fixed(8),
                scaling_mode::accurate,
                nullptr,
                handle_,
                nullptr};
  d.reuse_a = true;
  EXPECT_THROW(enqueue_emulation(d, ws.ptr), std::invalid_argument);
}

}  // namespace
