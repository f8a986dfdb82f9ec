// Complex batches through the batched engine (engine/batched_complex.hpp) against the single
// complex call: every C_i of a strided batch run as one emulation must equal ozdgemm_zgemm on
// matrix i with the same fixed s and scaling, bit for bit, since each matrix is embedded as the
// single call embeds it and the batched engine gives the embedding the single real call's bits.
// The batches mix random matrices with adversarial ones (wide exponents, a huge row, a zero
// matrix, NaN and Inf, subnormals), pad every leading dimension and stride, broadcast A or B
// (stride 0), and cover ops N, T and C on either side, alpha = 0 (device pointer mode: A and B
// are not read), beta = 0 (NaN in C must not leak), device scalars, accurate scaling, and a
// batch cut into chunks by a small workspace cap.
#include "engine/batched_complex.hpp"

#include <cuComplex.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "api/zgemm_internal.hpp"
#include "engine/handle_context.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"

namespace {

using namespace ozdgemm::detail;

struct complex_case {
  int s;
  cublasOperation_t ta, tb;
  int64_t m, n, k, count;
  bool broadcast_a, broadcast_b;
  cuDoubleComplex alpha, beta;
  bool device_scalars;
  ozdgemm_scaling_t scaling = OZDGEMM_SCALING_FAST;
};

const char* op_name(cublasOperation_t t) {
  return t == CUBLAS_OP_N ? "N" : t == CUBLAS_OP_T ? "T" : "C";
}
std::string describe(const complex_case& c) {
  const auto num = [](double x) {
    std::string s = std::to_string(static_cast<int>(x * 100));
    for (char& ch : s)
      if (ch == '-') ch = 'm';
    return s;
  };
  return "s" + std::to_string(c.s) + "_" + op_name(c.ta) + op_name(c.tb) + "_" +
         std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + "_q" +
         std::to_string(c.count) + (c.broadcast_a ? "_bcastA" : "") +
         (c.broadcast_b ? "_bcastB" : "") + "_a" + num(c.alpha.x) + "i" + num(c.alpha.y) + "_b" +
         num(c.beta.x) + (c.device_scalars ? "_dev" : "") +
         (c.scaling == OZDGEMM_SCALING_ACCURATE ? "_accurate" : "");
}
std::string case_name(const ::testing::TestParamInfo<complex_case>& info) {
  return describe(info.param);
}
void PrintTo(const complex_case& c, std::ostream* os) { *os << describe(c); }

// Matrix i of a batch is of kind i mod 6 (both parts of every entry drawn alike).
void fill_matrix(int kind, std::mt19937_64& g, std::vector<cuDoubleComplex>& x, int64_t base,
                 int64_t rows, int64_t cols, int64_t ld) {
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  const auto draw = [&](int64_t r) {
    switch (kind % 6) {
      case 1:
        return u(g) * std::exp(4.0 * nd(g));  // wide exponents
      case 2:
        return r == rows / 2 ? std::ldexp(nd(g), 900) : nd(g);  // a huge row
      case 3:
        return 0.0;  // zero matrix
      case 5:
        return std::ldexp(nd(g), -1060);  // subnormals
      default:
        return nd(g);  // random; kind 4 gets NaN and Inf below
    }
  };
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t r = 0; r < rows; ++r) {
      const double re = draw(r);
      x[base + j * ld + r] = make_cuDoubleComplex(re, draw(r));
    }
  if (kind % 6 == 4) {
    x[base] = make_cuDoubleComplex(NAN, 1.0);
    x[base + (cols - 1) * ld + rows - 1] = make_cuDoubleComplex(0.5, INFINITY);
  }
}

// `count` matrices rows x cols (ld = rows + 3, stride = ld cols + 5 complex elements, or 0 for
// a broadcast: one matrix).
struct host_operand {
  int64_t ld, stride;
  std::vector<cuDoubleComplex> data;
  host_operand(int64_t rows, int64_t cols, int64_t q, bool broadcast, std::mt19937_64& g, int kind)
      : ld(rows + 3), stride(broadcast ? 0 : (rows + 3) * cols + 5) {
    const int64_t stored = broadcast ? 1 : q, one = ld * cols + 5;
    data.assign(static_cast<size_t>(stored * one), make_cuDoubleComplex(-7.0, 3.0));
    for (int64_t i = 0; i < stored; ++i)
      fill_matrix(kind + static_cast<int>(i), g, data, i * one, rows, cols, ld);
  }
};

// Bitwise equality of two complex arrays, both parts; counts the finite parts compared.
int64_t differing(const std::vector<cuDoubleComplex>& got, const std::vector<cuDoubleComplex>& want,
                  int64_t* finite) {
  int64_t bad = 0;
  *finite = 0;
  for (size_t x = 0; x < got.size(); ++x) {
    *finite += std::isfinite(got[x].x) && std::isfinite(got[x].y) ? 1 : 0;
    if ((!same_bits(got[x].x, want[x].x) || !same_bits(got[x].y, want[x].y)) && ++bad <= 5)
      ADD_FAILURE() << "element " << x << ": batch (" << got[x].x << ", " << got[x].y
                    << ") single (" << want[x].x << ", " << want[x].y << ")";
  }
  return bad;
}

class BatchedComplex : public GpuTest, public ::testing::WithParamInterface<complex_case> {
 protected:
  void TearDown() override {
    set_workspace_cap(0);
    GpuTest::TearDown();
  }
};

TEST_P(BatchedComplex, EqualsTheSingleCallBitwise) {
  const complex_case tc = GetParam();
  const int64_t m = tc.m, n = tc.n, k = tc.k, q = tc.count;
  std::mt19937_64 g(4321 + tc.s + m * 7 + n * 11 + k + q);
  const bool ta = tc.ta != CUBLAS_OP_N, tb = tc.tb != CUBLAS_OP_N;
  host_operand ha(ta ? k : m, ta ? m : k, q, tc.broadcast_a, g, 0);
  host_operand hb(tb ? n : k, tb ? k : n, q, tc.broadcast_b, g, 2);
  const int64_t ldc = m + 2, stride_c = ldc * n + 9;
  std::vector<cuDoubleComplex> hc(static_cast<size_t>(q * stride_c));
  std::normal_distribution<double> nd;
  for (auto& x : hc) x = make_cuDoubleComplex(nd(g), nd(g));
  if (q > 1) hc[static_cast<size_t>(stride_c + 1)] = make_cuDoubleComplex(NAN, NAN);

  device_buffer<cuDoubleComplex> a(ha.data), b(hb.data), c_batch(hc), c_single(hc);
  device_buffer<cuDoubleComplex> scalars(std::vector<cuDoubleComplex>{tc.alpha, tc.beta});
  ASSERT_NE(a.ptr, nullptr);
  ASSERT_NE(c_batch.ptr, nullptr);
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ASSERT_CUBLAS(cublasSetPointerMode(
      handle_, tc.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
  const cuDoubleComplex* alpha = tc.device_scalars ? scalars.ptr : &tc.alpha;
  const cuDoubleComplex* beta = tc.device_scalars ? scalars.ptr + 1 : &tc.beta;
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = tc.s;
  o.scaling = tc.scaling;

  for (int64_t i = 0; i < q; ++i)
    ASSERT_EQ(
        ozdgemm_zgemm(handle_, tc.ta, tc.tb, m, n, k, alpha, a.ptr + i * ha.stride, ha.ld,
                      b.ptr + i * hb.stride, hb.ld, beta, c_single.ptr + i * stride_c, ldc, o),
        OZDGEMM_STATUS_SUCCESS);
  const strided_batch_result r =
      zgemm_strided_batch_device(handle_, tc.ta, tc.tb, m, n, k, alpha, a.ptr, ha.ld, ha.stride,
                                 b.ptr, hb.ld, hb.stride, beta, c_batch.ptr, ldc, stride_c, q, o);
  ASSERT_EQ(r.done, q) << (r.declined != nullptr ? r.declined : "");
  EXPECT_EQ(r.s, tc.s);
  ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));

  const std::vector<cuDoubleComplex> got = c_batch.to_host(), want = c_single.to_host();
  int64_t finite = 0;
  EXPECT_EQ(differing(got, want, &finite), 0);
  EXPECT_GT(finite, static_cast<int64_t>(got.size()) / 2) << "the comparison must be over values";
  if (tc.beta.x == 0.0 && tc.beta.y == 0.0 && q > 1) {
    EXPECT_FALSE(std::isnan(got[stride_c + 1].x)) << "beta = 0 read C";
  }
}

std::vector<complex_case> cases() {
  const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0), zero = make_cuDoubleComplex(0, 0);
  const cuDoubleComplex a1 = make_cuDoubleComplex(0.75, -1.25), b1 = make_cuDoubleComplex(-0.5, 2);
  const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T, C = CUBLAS_OP_C;
  std::vector<complex_case> v;
  for (int s : {8, 14, 20})
    for (cublasOperation_t oa : {N, T, C})
      for (cublasOperation_t ob : {N, T, C})
        if (s == 14 || (oa == ob))
          v.push_back({s, oa, ob, 29, 23, 41, 7, false, false, a1, b1, false});
  v.push_back({14, N, N, 40, 33, 100, 6, true, false, a1, b1, false});
  v.push_back({14, C, N, 40, 33, 100, 6, false, true, one, zero, false});
  v.push_back({14, N, C, 33, 40, 70, 5, true, false, a1, zero, true});
  v.push_back({14, T, T, 48, 16, 64, 13, false, false, zero, b1, true});
  v.push_back({14, N, T, 48, 16, 64, 13, false, false, zero, zero, true});
  v.push_back({14, N, N, 90, 70, 130, 12, false, false, a1, b1, false});
  const ozdgemm_scaling_t acc = OZDGEMM_SCALING_ACCURATE;
  v.push_back({14, N, C, 29, 23, 41, 7, false, false, a1, b1, false, acc});
  v.push_back({20, C, N, 40, 33, 100, 6, true, false, a1, zero, true, acc});
  v.push_back({8, T, N, 33, 40, 70, 5, false, true, one, b1, false, acc});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, BatchedComplex, ::testing::ValuesIn(cases()), case_name);

// Chunks under a small cap equal one chunk, and the public entry equals both.
class BatchedComplexApi : public GpuTest {
 protected:
  void TearDown() override {
    set_workspace_cap(0);
    GpuTest::TearDown();
  }
};

TEST_F(BatchedComplexApi, ChunksAndThePublicEntryEqualOneChunk) {
  const int64_t m = 50, n = 40, k = 90, q = 17, lda = 53, ldb = 91, ldc = 51;
  // B is n x k under op C (the batch) and k x n under op N (the refused calls): ldb k covers both.
  const int64_t sa = lda * k + 3, sb = ldb * k + 1, sc = ldc * n + 2;
  std::mt19937_64 g(6);
  std::normal_distribution<double> nd;
  std::vector<cuDoubleComplex> ha(q * sa), hb(q * sb), hc(q * sc);
  for (auto& x : ha) x = make_cuDoubleComplex(nd(g) * std::exp(2.0 * nd(g)), nd(g));
  for (auto& x : hb) x = make_cuDoubleComplex(nd(g), nd(g) * std::exp(nd(g)));
  for (auto& x : hc) x = make_cuDoubleComplex(nd(g), nd(g));
  device_buffer<cuDoubleComplex> a(ha), b(hb), c_one(hc), c_chunks(hc), c_api(hc);
  const cuDoubleComplex alpha = make_cuDoubleComplex(1.25, 0.5),
                        beta = make_cuDoubleComplex(-0.5, 0.25);
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = 14;
  o.scaling = OZDGEMM_SCALING_FAST;
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  const strided_batch_result whole =
      zgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_C, m, n, k, &alpha, a.ptr, lda, sa,
                                 b.ptr, ldb, sb, &beta, c_one.ptr, ldc, sc, q, o);
  EXPECT_EQ(whole.done, q) << (whole.declined != nullptr ? whole.declined : "");
  EXPECT_EQ(whole.per_chunk, q);
  // A cap that holds 4 matrices' workspace: 5 chunks, the last of 1.
  const batch_dims dims{m, n, k, 14, false, false, resolve_int8_gemm(int8_gemm_backend::setting)};
  size_t four = 0;
  ASSERT_TRUE(batched_complex_workspace_bytes(dims, 4, &four));
  release_contexts(handle_);
  set_workspace_cap(four);
  const strided_batch_result parts =
      zgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_C, m, n, k, &alpha, a.ptr, lda, sa,
                                 b.ptr, ldb, sb, &beta, c_chunks.ptr, ldc, sc, q, o);
  EXPECT_EQ(parts.done, q) << (parts.declined != nullptr ? parts.declined : "");
  EXPECT_EQ(parts.per_chunk, 4);
  set_workspace_cap(0);
  ASSERT_EQ(ozdgemm_zgemm_strided_batched(handle_, CUBLAS_OP_N, CUBLAS_OP_C, m, n, k, &alpha, a.ptr,
                                          lda, sa, b.ptr, ldb, sb, &beta, c_api.ptr, ldc, sc, q, o),
            OZDGEMM_STATUS_SUCCESS);
  // Host alpha = 0 and automatic counts are not the engine's.
  const cuDoubleComplex zero = make_cuDoubleComplex(0.0, 0.0);
  EXPECT_EQ(zgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &zero, a.ptr,
                                       lda, sa, b.ptr, ldb, sb, &beta, c_api.ptr, ldc, sc, q, o)
                .done,
            0);
  ozdgemm_options_t automatic = o;
  automatic.num_moduli = OZDGEMM_MODULI_AUTO;
  EXPECT_EQ(
      zgemm_strided_batch_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.ptr, lda, sa,
                                 b.ptr, ldb, sb, &beta, c_api.ptr, ldc, sc, q, automatic)
          .done,
      0);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<cuDoubleComplex> one = c_one.to_host(), chunks = c_chunks.to_host(),
                                     api = c_api.to_host();
  int64_t finite = 0;
  EXPECT_EQ(differing(chunks, one, &finite), 0);
  EXPECT_EQ(differing(api, one, &finite), 0);
}

}  // namespace
