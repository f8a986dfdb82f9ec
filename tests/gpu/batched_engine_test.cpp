// The batched engine (engine/batched_emulate.hpp) against the single call: every C_i of a batch
// run as one emulation must equal enqueue_emulation on matrix i with the same fixed s and fast
// scaling, bit for bit, since each vector gets the single call's scan, exponent and residue
// arithmetic and each element the single call's CRT. The batches mix random matrices with
// adversarial ones (wide exponents, a row of huge values, a zero matrix, NaN and Inf in one
// matrix, subnormals), pad every leading dimension and stride, broadcast A or B (stride 0), and
// cover all op pairs, alpha = 0 (device pointer mode: A and B are not read), beta = 0 (NaN in C
// must not leak), beta != 0 and device pointer scalars. The C API's strided batch
// (ozdgemm_dgemm_strided_batched) must equal ozdgemm_dgemm per matrix, served by the batched
// engine, whether the batch runs as one chunk or as several under a small workspace cap.
#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "api/dgemm_internal.hpp"
#include "engine/batched_emulate.hpp"
#include "engine/emulate.hpp"
#include "engine/handle_context.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"

namespace {

using namespace ozdgemm::detail;

struct batch_case {
  int s;
  op_kind oa, ob;
  int64_t m, n, k, count;
  bool broadcast_a, broadcast_b;
  double alpha, beta;
  bool device_scalars;
  scaling_mode mode = scaling_mode::fast;
};

std::string describe(const batch_case& c) {
  const auto num = [](double x) {
    std::string s = std::to_string(static_cast<int>(x * 100));
    for (char& ch : s)
      if (ch == '-') ch = 'm';
    return s;
  };
  return "s" + std::to_string(c.s) + "_" + (c.oa == op_kind::n ? "N" : "T") +
         (c.ob == op_kind::n ? "N" : "T") + "_" + std::to_string(c.m) + "x" + std::to_string(c.n) +
         "x" + std::to_string(c.k) + "_q" + std::to_string(c.count) +
         (c.broadcast_a ? "_bcastA" : "") + (c.broadcast_b ? "_bcastB" : "") + "_a" + num(c.alpha) +
         "_b" + num(c.beta) + (c.device_scalars ? "_dev" : "") +
         (c.mode == scaling_mode::accurate ? "_accurate" : "");
}
std::string case_name(const ::testing::TestParamInfo<batch_case>& info) {
  return describe(info.param);
}
void PrintTo(const batch_case& c, std::ostream* os) { *os << describe(c); }

// Matrix i of a batch gets one of these (by i mod kKinds), so every batch mixes them.
constexpr int kKinds = 6;
void fill_matrix(int kind, std::mt19937_64& g, std::vector<double>& x, int64_t base, int64_t rows,
                 int64_t cols, int64_t ld) {
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t r = 0; r < rows; ++r) {
      double v = 0.0;
      switch (kind) {
        case 0:
          v = nd(g);
          break;  // random
        case 1:
          v = u(g) * std::exp(4.0 * nd(g));
          break;  // wide exponents
        case 2:
          v = r == rows / 2 ? std::ldexp(nd(g), 900) : nd(g);
          break;  // a huge row
        case 3:
          v = 0.0;
          break;  // zero matrix
        case 4:
          v = nd(g);
          break;  // NaN/Inf added below
        case 5:
          v = std::ldexp(nd(g), -1060);
          break;  // subnormals
      }
      x[base + j * ld + r] = v;
    }
  if (kind == 4) {
    x[base + 0] = NAN;
    x[base + (cols - 1) * ld + rows - 1] = INFINITY;
  }
}

// A strided operand of `count` matrices rows x cols (ld = rows + 3, stride = ld cols + 5, or 0
// for a broadcast: one matrix).
struct host_operand {
  int64_t rows, cols, ld, stride, count;
  std::vector<double> data;
  host_operand(int64_t r, int64_t c, int64_t q, bool broadcast, std::mt19937_64& g, int seed_kind)
      : rows(r), cols(c), ld(r + 3), stride(broadcast ? 0 : (r + 3) * c + 5), count(q) {
    const int64_t stored = broadcast ? 1 : q;
    data.assign(static_cast<size_t>(stored * (ld * cols + 5)), -7.0);
    for (int64_t i = 0; i < stored; ++i)
      fill_matrix((seed_kind + static_cast<int>(i)) % kKinds, g, data, i * (ld * cols + 5), rows,
                  cols, ld);
  }
};

class BatchedEngine : public GpuTest, public ::testing::WithParamInterface<batch_case> {};

TEST_P(BatchedEngine, EqualsTheSingleCallBitwise) {
  const batch_case tc = GetParam();
  const int64_t m = tc.m, n = tc.n, k = tc.k, q = tc.count;
  std::mt19937_64 g(1234 + tc.s + m * 7 + n * 11 + k + q);
  const bool ta = tc.oa == op_kind::t, tb = tc.ob == op_kind::t;
  host_operand ha(ta ? k : m, ta ? m : k, q, tc.broadcast_a, g, 0);
  host_operand hb(tb ? n : k, tb ? k : n, q, tc.broadcast_b, g, 2);
  const int64_t ldc = m + 2, stride_c = ldc * n + 9;
  std::vector<double> hc(static_cast<size_t>(q * stride_c));
  std::normal_distribution<double> nd;
  for (double& x : hc) x = nd(g);
  if (q > 1) hc[static_cast<size_t>(stride_c + 1)] = NAN;  // C_1(1, 0): beta = 0 must not read it

  device_buffer<double> a(ha.data), b(hb.data), c_batch(hc), c_single(hc);
  device_buffer<double> scalars(std::vector<double>{tc.alpha, tc.beta});
  ASSERT_NE(a.ptr, nullptr);
  ASSERT_NE(c_batch.ptr, nullptr);
  const scalar_arg alpha =
      tc.device_scalars ? scalar_arg{scalars.ptr, 0.0} : scalar_arg{nullptr, tc.alpha};
  const scalar_arg beta =
      tc.device_scalars ? scalar_arg{scalars.ptr + 1, 0.0} : scalar_arg{nullptr, tc.beta};
  const moduli_setting moduli = moduli_setting::fixed(tc.s);
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  const auto problem = [&](int64_t i, double* c) {
    return gemm_problem{m,
                        n,
                        k,
                        operand_a(tc.oa, a.ptr + i * ha.stride, ha.ld),
                        operand_b(tc.ob, b.ptr + i * hb.stride, hb.ld),
                        c + i * stride_c,
                        ldc};
  };

  // The single calls.
  device_buffer<char> ws1(emulation_workspace_bytes(m, n, k, moduli, tc.mode));
  for (int64_t i = 0; i < q; ++i) {
    device_gemm one{
        problem(i, c_single.ptr), alpha, beta, moduli, tc.mode, nullptr, handle_, nullptr};
    ASSERT_EQ(enqueue_emulation(one, ws1.ptr), tc.s);
  }
  // The batch.
  const batch_dims dims{m,
                        n,
                        k,
                        tc.s,
                        q > 1 && tc.broadcast_a,
                        q > 1 && tc.broadcast_b,
                        resolve_int8_gemm(int8_gemm_backend::setting),
                        tc.mode};
  size_t bytes = 0;
  ASSERT_TRUE(batched_emulation_workspace_bytes(dims, q, &bytes));
  device_buffer<char> wsb(bytes);
  ASSERT_NE(wsb.ptr, nullptr);
  device_gemm first{
      problem(0, c_batch.ptr), alpha, beta, moduli, tc.mode, nullptr, handle_, nullptr};
  const device_gemm_batch batch{first, q, ha.stride, hb.stride, stride_c};
  ASSERT_EQ(enqueue_batched_emulation(batch, wsb.ptr), tc.s);
  ASSERT_CUDA(cudaDeviceSynchronize());

  const std::vector<double> got = c_batch.to_host(), want = c_single.to_host();
  int64_t bad = 0, finite = 0;
  for (size_t x = 0; x < got.size(); ++x) {
    finite += std::isfinite(got[x]) ? 1 : 0;
    if (!same_bits(got[x], want[x]) && ++bad <= 5)
      ADD_FAILURE() << "C_" << x / stride_c << " offset " << x % stride_c << ": batch " << got[x]
                    << " single " << want[x];
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(finite, static_cast<int64_t>(got.size()) / 2) << "the comparison must be over values";
  if (tc.beta == 0.0 && q > 1) {
    EXPECT_FALSE(std::isnan(got[stride_c + 1])) << "beta = 0 read C";
  }
}

std::vector<batch_case> cases() {
  std::vector<batch_case> v;
  for (int s : {8, 14, 20})
    for (op_kind oa : {op_kind::n, op_kind::t})
      for (op_kind ob : {op_kind::n, op_kind::t})
        v.push_back({s, oa, ob, 37, 29, 70, 7, false, false, 1.0, 0.0, false});
  // Broadcast operands, scalars, shapes around the padding and the tile sizes.
  v.push_back({14, op_kind::n, op_kind::n, 40, 33, 100, 6, true, false, -1.5, 0.25, false});
  v.push_back({14, op_kind::t, op_kind::n, 40, 33, 100, 6, false, true, 0.75, 1.0, false});
  v.push_back({20, op_kind::n, op_kind::t, 33, 40, 129, 5, true, false, 1.0, 0.0, true});
  v.push_back({8, op_kind::t, op_kind::t, 33, 40, 129, 5, false, true, 2.0, -0.5, true});
  v.push_back({14, op_kind::n, op_kind::n, 48, 16, 64, 13, false, false, 0.0, 0.5, true});
  v.push_back({14, op_kind::t, op_kind::n, 48, 16, 64, 13, false, false, 0.0, 0.0, true});
  v.push_back({14, op_kind::n, op_kind::t, 16, 64, 300, 1, false, false, 1.0, 0.0, false});
  // Enough matrices and size that the per-modulus GEMM issue and larger grids are used.
  v.push_back({14, op_kind::n, op_kind::n, 130, 70, 260, 25, false, false, 1.0, 0.5, false});
  // Accurate scaling: its bound GEMMs and exponents per matrix (a broadcast operand's exponents
  // depend on the other operand, so they are per matrix too).
  const scaling_mode acc = scaling_mode::accurate;
  for (int s : {8, 14, 20}) {
    v.push_back({s, op_kind::n, op_kind::t, 37, 29, 70, 7, false, false, 1.0, 0.0, false, acc});
    v.push_back({s, op_kind::t, op_kind::n, 37, 29, 70, 7, false, false, -1.0, 0.5, false, acc});
  }
  v.push_back({14, op_kind::n, op_kind::n, 40, 33, 100, 6, true, false, -1.5, 0.25, false, acc});
  v.push_back({14, op_kind::t, op_kind::t, 40, 33, 100, 6, false, true, 0.75, 1.0, true, acc});
  v.push_back({14, op_kind::n, op_kind::n, 48, 16, 64, 13, false, false, 0.0, 0.0, true, acc});
  v.push_back({20, op_kind::n, op_kind::n, 130, 70, 260, 25, false, false, 1.0, 0.5, false, acc});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, BatchedEngine, ::testing::ValuesIn(cases()), case_name);

// Both ways of issuing the GEMMs (one call over all products, one per modulus) and both
// backends give the single call's bits.
class BatchedEngineIssue : public GpuTest,
                           public ::testing::WithParamInterface<std::tuple<int, int>> {};

TEST_P(BatchedEngineIssue, EqualsTheSingleCallBitwise) {
  const gemm_batching batching =
      std::get<0>(GetParam()) == 0 ? gemm_batching::batched : gemm_batching::looped;
  const int8_gemm_backend backend =
      std::get<1>(GetParam()) == 0 ? int8_gemm_backend::cublas : int8_gemm_backend::lt;
  const int64_t m = 64, n = 48, k = 200, q = 9;
  const int s = 14;
  std::mt19937_64 g(99);
  std::normal_distribution<double> nd;
  for (const scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate}) {
    for (const bool bcast_a : {false, true}) {
      std::vector<double> ha((bcast_a ? 1 : q) * m * k), hb(q * k * n), hc(q * m * n, 0.0);
      for (double& x : ha) x = nd(g) * std::exp(nd(g));
      for (double& x : hb) x = nd(g);
      device_buffer<double> a(ha), b(hb), cb(hc), cs(hc);
      ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
      const moduli_setting moduli = moduli_setting::fixed(s);
      device_buffer<char> ws1(emulation_workspace_bytes(m, n, k, moduli, mode, backend));
      for (int64_t i = 0; i < q; ++i) {
        const gemm_problem p{m,
                             n,
                             k,
                             operand_a(op_kind::n, a.ptr + (bcast_a ? 0 : i * m * k), m),
                             operand_b(op_kind::n, b.ptr + i * k * n, k),
                             cs.ptr + i * m * n,
                             m};
        device_gemm one{p,       {nullptr, 1.0}, {nullptr, 0.0}, moduli,  mode,
                        nullptr, handle_,        nullptr,        batching};
        one.int8_gemm = backend;
        ASSERT_EQ(enqueue_emulation(one, ws1.ptr), s);
      }
      size_t bytes = 0;
      ASSERT_TRUE(batched_emulation_workspace_bytes({m, n, k, s, bcast_a, false, backend, mode}, q,
                                                    &bytes));
      device_buffer<char> wsb(bytes);
      const gemm_problem p0{
          m, n, k, operand_a(op_kind::n, a.ptr, m), operand_b(op_kind::n, b.ptr, k), cb.ptr, m};
      device_gemm first{p0,      {nullptr, 1.0}, {nullptr, 0.0}, moduli,  mode,
                        nullptr, handle_,        nullptr,        batching};
      first.int8_gemm = backend;
      ASSERT_EQ(enqueue_batched_emulation({first, q, bcast_a ? 0 : m * k, k * n, m * n}, wsb.ptr),
                s);
      ASSERT_CUDA(cudaDeviceSynchronize());
      const std::vector<double> got = cb.to_host(), want = cs.to_host();
      int64_t bad = 0;
      for (size_t x = 0; x < got.size(); ++x) bad += same_bits(got[x], want[x]) ? 0 : 1;
      EXPECT_EQ(bad, 0) << (bcast_a ? "broadcast A" : "strided A")
                        << (mode == scaling_mode::accurate ? ", accurate" : ", fast");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ways, BatchedEngineIssue,
                         ::testing::Combine(::testing::Values(0, 1), ::testing::Values(0, 1)));

// The C API: a fixed count with fast scaling goes to the batched engine, in one chunk or in
// several under a small cap, and every C_i equals ozdgemm_dgemm on matrix i.
class BatchedEngineApi : public GpuTest {
 protected:
  void TearDown() override {
    set_workspace_cap(0);
    GpuTest::TearDown();
  }
};

TEST_F(BatchedEngineApi, ChunksEqualOneChunkAndTheSingleCalls) {
  const int64_t m = 50, n = 40, k = 90, q = 23, lda = 53, ldb = 91, ldc = 51;
  const int64_t sa = lda * k + 3, sb = ldb * n + 1, sc = ldc * n + 2;
  std::mt19937_64 g(5);
  std::normal_distribution<double> nd;
  std::vector<double> ha(q * sa), hb(q * sb), hc(q * sc);
  for (double& x : ha) x = nd(g) * std::exp(2.0 * nd(g));
  for (double& x : hb) x = nd(g);
  for (double& x : hc) x = nd(g);
  device_buffer<double> a(ha), b(hb), c_one(hc), c_chunks(hc), c_single(hc);
  const double alpha = 1.25, beta = -0.5;
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = 14;
  o.scaling = OZDGEMM_SCALING_FAST;
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  for (int64_t i = 0; i < q; ++i)
    ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr + i * sa, lda,
                            b.ptr + i * sb, ldb, &beta, c_single.ptr + i * sc, ldc, o),
              OZDGEMM_STATUS_SUCCESS);
  const strided_batch_result whole =
      dgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr, lda, sa,
                                 b.ptr, ldb, sb, &beta, c_one.ptr, ldc, sc, q, o);
  EXPECT_EQ(whole.done, q) << (whole.declined != nullptr ? whole.declined : "");
  EXPECT_EQ(whole.per_chunk, q);
  EXPECT_EQ(whole.s, 14);
  // A cap that holds 5 matrices' workspace: 5 chunks, the last of 3.
  const batch_dims dims{m, n, k, 14, false, false, resolve_int8_gemm(int8_gemm_backend::setting)};
  size_t five = 0;
  ASSERT_TRUE(batched_emulation_workspace_bytes(dims, 5, &five));
  release_contexts(handle_);  // a fresh workspace, grown under the cap
  set_workspace_cap(five);
  const strided_batch_result parts =
      dgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr, lda, sa,
                                 b.ptr, ldb, sb, &beta, c_chunks.ptr, ldc, sc, q, o);
  EXPECT_EQ(parts.done, q) << (parts.declined != nullptr ? parts.declined : "");
  EXPECT_EQ(parts.per_chunk, 5);
  set_workspace_cap(0);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<double> one = c_one.to_host(), chunks = c_chunks.to_host(),
                            single = c_single.to_host();
  int64_t bad_chunks = 0, bad_single = 0;
  for (size_t x = 0; x < one.size(); ++x) {
    bad_chunks += same_bits(one[x], chunks[x]) ? 0 : 1;
    bad_single += same_bits(one[x], single[x]) ? 0 : 1;
  }
  EXPECT_EQ(bad_chunks, 0);
  EXPECT_EQ(bad_single, 0);

  // The public entry gives the same bits; alpha = 0 (host) and automatic counts run per matrix.
  device_buffer<double> c_api(hc);
  ASSERT_EQ(ozdgemm_dgemm_strided_batched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr,
                                          lda, sa, b.ptr, ldb, sb, &beta, c_api.ptr, ldc, sc, q, o),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<double> api = c_api.to_host();
  int64_t bad_api = 0;
  for (size_t x = 0; x < one.size(); ++x) bad_api += same_bits(one[x], api[x]) ? 0 : 1;
  EXPECT_EQ(bad_api, 0);
  const double zero = 0.0;
  EXPECT_EQ(dgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &zero, a.ptr,
                                       lda, sa, b.ptr, ldb, sb, &beta, c_api.ptr, ldc, sc, q, o)
                .done,
            0);
  ozdgemm_options_t automatic = o;
  automatic.num_moduli = OZDGEMM_MODULI_AUTO;
  EXPECT_EQ(
      dgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr, lda, sa,
                                 b.ptr, ldb, sb, &beta, c_api.ptr, ldc, sc, q, automatic)
          .done,
      0);
  // Overlapping C matrices run in order, matrix by matrix.
  EXPECT_EQ(dgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr,
                                       lda, sa, b.ptr, ldb, sb, &beta, c_api.ptr, ldc, 0, q, o)
                .done,
            0);
  ASSERT_CUDA(cudaDeviceSynchronize());
}

// Accurate scaling through the C API, A broadcast (stride 0): the engine serves it, and each C_i
// equals ozdgemm_dgemm on matrix i.
TEST_F(BatchedEngineApi, AccurateScalingEqualsTheSingleCalls) {
  const int64_t m = 33, n = 47, k = 150, q = 11;
  std::mt19937_64 g(8);
  std::normal_distribution<double> nd;
  std::vector<double> ha(m * k), hb(q * k * n), hc(q * m * n);
  for (double& x : ha) x = nd(g) * std::exp(3.0 * nd(g));
  for (double& x : hb) x = nd(g) * std::exp(nd(g));
  for (double& x : hc) x = nd(g);
  device_buffer<double> a(ha), b(hb), c_batch(hc), c_single(hc);
  const double alpha = -0.5, beta = 2.0;
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = 12;
  o.scaling = OZDGEMM_SCALING_ACCURATE;
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  for (int64_t i = 0; i < q; ++i)
    ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr, m,
                            b.ptr + i * k * n, k, &beta, c_single.ptr + i * m * n, m, o),
              OZDGEMM_STATUS_SUCCESS);
  const strided_batch_result r =
      dgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr, m, 0,
                                 b.ptr, k, k * n, &beta, c_batch.ptr, m, m * n, q, o);
  EXPECT_EQ(r.done, q) << (r.declined != nullptr ? r.declined : "");
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<double> got = c_batch.to_host(), want = c_single.to_host();
  int64_t bad = 0;
  for (size_t x = 0; x < got.size(); ++x) bad += same_bits(got[x], want[x]) ? 0 : 1;
  EXPECT_EQ(bad, 0);
}

}  // namespace
