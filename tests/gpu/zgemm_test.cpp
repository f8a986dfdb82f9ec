// ZGEMM on the GPU (ozdgemm_zgemm): (1) bit identity with the host reference
// (ozdgemm_zgemm_reference, checked against double-double by tests/cpu/zgemm_reference_test.cpp)
// over every op pair, fixed s, auto and certified, both scalings, leading-dimension padding,
// host and device pointer mode and complex alpha, beta; (2) semantics against native
// cublasZgemm on the same arguments: Inf/NaN classes per part, alpha = 0, beta = 0, k = 0,
// invalid arguments, the s reported by ozdgemm_zgemm_ex, the certified fallback to native and
// graph capture; (3) the Karatsuba form (the default) and the four-product form give the same
// bits.
#include <cuComplex.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "engine/complex_gemm.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.hpp"
#include "reference/complex_reference.hpp"
#include "support/complex_inputs.hpp"
#include "support/zgemm_calls.hpp"
#include "zgemm_problem.hpp"

namespace {

using ozdgemm::test::anti_aligned_zinputs;
using ozdgemm::test::cu;
using ozdgemm::test::differing;
using ozdgemm::test::make_zmatrix;
using ozdgemm::test::phi_zmatrix;
using ozdgemm::test::setting_name;
using ozdgemm::test::store_for_zop;
using ozdgemm::test::to_op;
using ozdgemm::test::zdouble;
using ozdgemm::test::zmatrix;
using ozdgemm::test::zproblem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Releases what the library cached for the handle before the fixture destroys it.
class ZgemmGpuTest : public GpuTest {
 protected:
  void TearDown() override {
    if (handle_ != nullptr) {
      cudaDeviceSynchronize();
      ozdgemm_release_handle(handle_);
    }
    GpuTest::TearDown();
  }
};

// ---- (1) Bit identity with the host reference ---------------------------------------------

struct identity_case {
  int64_t m, n, k;
  char ta, tb;
  int64_t pad;
  int moduli;
  bool fast, device_scalars;
  zdouble alpha, beta;
  bool nan_c;
  std::string name() const {
    std::string r = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" +
                    ta + tb + "_" + setting_name(moduli) + (fast ? "_fast" : "_acc") +
                    (device_scalars ? "_devptr" : "_hostptr");
    if (alpha == zdouble(0.0, 0.0)) r += "_alpha0";
    if (beta == zdouble(0.0, 0.0)) r += "_beta0";
    if (pad != 0) r += "_ldpad";
    return r;
  }
};

class ZgemmBitIdentity : public ZgemmGpuTest,
                         public ::testing::WithParamInterface<identity_case> {};

TEST_P(ZgemmBitIdentity, GpuEqualsHostReference) {
  const identity_case& tc = GetParam();
  const uint64_t seed = 500 + tc.m * 7 + tc.n * 13 + tc.k * 17 + tc.ta * 3 + tc.tb;
  zproblem p(tc.ta, tc.tb, phi_zmatrix(tc.m, tc.k, 1.0, seed),
             phi_zmatrix(tc.k, tc.n, 1.0, seed + 1), tc.pad, tc.alpha, tc.beta, seed + 2, tc.nan_c);
  if (tc.alpha == zdouble(0.0, 0.0)) {  // A and B must not be read: poison them
    for (zdouble& x : p.A.data) x = zdouble(kNaN, kNaN);
    for (zdouble& x : p.B.data) x = zdouble(kNaN, kNaN);
    ASSERT_CUDA(cudaMemcpy(p.a.ptr, p.A.data.data(), p.A.data.size() * sizeof(zdouble),
                           cudaMemcpyHostToDevice));
    ASSERT_CUDA(cudaMemcpy(p.b.ptr, p.B.data.data(), p.B.data.size() * sizeof(zdouble),
                           cudaMemcpyHostToDevice));
  }
  const ozdgemm_options_t o = ozdgemm::test::zoptions(tc.moduli, tc.fast);
  const std::vector<zdouble> want = p.reference(o);
  const int host_s = p.reference_s(tc.moduli, tc.fast);
  ASSERT_GT(host_s, 0) << "these inputs are emulated on the host";

  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  if (tc.device_scalars) {
    ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
  }
  int s_used = -1;
  ASSERT_EQ(p.run(handle_, o, tc.device_scalars, &s_used), OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  EXPECT_EQ(s_used, host_s);
  const std::vector<zdouble> got = p.c.to_host();
  EXPECT_EQ(differing(got, want), 0) << "elements differing from the host reference (padding "
                                        "rows included)";
  // The handle is unchanged.
  cudaStream_t s_after;
  cublasPointerMode_t pm_after;
  ASSERT_CUBLAS(cublasGetStream(handle_, &s_after));
  ASSERT_CUBLAS(cublasGetPointerMode(handle_, &pm_after));
  EXPECT_EQ(s_after, stream);
  EXPECT_EQ(pm_after, tc.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
  // The same call through the C++ API, host pointer mode: the same bits.
  if (!tc.device_scalars) {
    p.reset_c();
    ozdgemm::options opts;
    opts.num_moduli = tc.moduli;
    opts.scaling = tc.fast ? ozdgemm::scaling::fast : ozdgemm::scaling::accurate;
    ASSERT_EQ(ozdgemm::zgemm(handle_, to_op(tc.ta), to_op(tc.tb), tc.m, tc.n, tc.k, cu(&p.alpha),
                             cu(p.a.ptr), p.A.ld, cu(p.b.ptr), p.B.ld, cu(&p.beta), cu(p.c.ptr),
                             p.C0.ld, opts),
              OZDGEMM_STATUS_SUCCESS);
    ASSERT_CUDA(cudaStreamSynchronize(stream));
    EXPECT_EQ(differing(p.c.to_host(), want), 0) << "ozdgemm::zgemm";
  }
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(stream);
}

std::vector<identity_case> identity_cases() {
  std::vector<identity_case> v;
  const char ops[3] = {'N', 'T', 'C'};
  const zdouble alpha(-0.75, 0.5), beta(0.25, -1.5);
  int idx = 0;
  for (int oa = 0; oa < 3; ++oa)
    for (int ob = 0; ob < 3; ++ob)
      for (int moduli : {14, 16, 20, OZDGEMM_MODULI_AUTO, OZDGEMM_MODULI_CERTIFIED})
        for (bool fast : {true, false}) {
          ++idx;
          v.push_back({37, 29, 45, ops[oa], ops[ob], idx % 3 == 0 ? 3 : 0, moduli, fast,
                       idx % 2 == 1, alpha, beta, false});
        }
  // Larger shapes, BLAS semantics in both pointer modes, k past one INT8 k-block (the embedded
  // depth 2k = 140000 > 2^17 - 16).
  for (bool dev : {false, true}) {
    v.push_back(
        {130, 70, 300, 'C', 'N', 1, OZDGEMM_MODULI_CERTIFIED, true, dev, alpha, beta, false});
    v.push_back({33, 21, 40, 'N', 'C', 0, 14, false, dev, {0.0, 0.0}, beta, false});
    v.push_back({33, 21, 40, 'T', 'N', 2, 16, true, dev, alpha, {0.0, 0.0}, true});
    v.push_back({3, 2, 70000, 'C', 'T', 0, 20, dev, dev, alpha, beta, false});
    // The Karatsuba form's half depth k' = 140000 > 2^17 - 16 too: its products are folded.
    v.push_back({5, 3, 140000, 'N', 'C', 0, 16, !dev, dev, alpha, beta, false});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, ZgemmBitIdentity, ::testing::ValuesIn(identity_cases()),
                         [](const ::testing::TestParamInfo<identity_case>& i) {
                           return i.param.name();
                         });

// ---- (2) Semantics against native cublasZgemm ----------------------------------------------

const char* fp_class(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  return "finite";
}

class ZgemmSemantics : public ZgemmGpuTest {};

// Inf and NaN in A or B: every part of C has the class native cublasZgemm gives there.
TEST_F(ZgemmSemantics, SpecialValuesGiveNativeClassesPerPart) {
  struct special {
    int64_t ai, al;
    zdouble av;
    int64_t bl, bj;
    zdouble bv;
  } const cases[] = {
      {2, 3, {kInf, 0.5}, -1, -1, {}},        {1, 0, {0.25, -kInf}, -1, -1, {}},
      {4, 5, {kNaN, 1.0}, -1, -1, {}},        {-1, -1, {}, 2, 3, {0.5, kNaN}},
      {-1, -1, {}, 6, 1, {kInf, -kInf}},      {0, 4, {kInf, 0.0}, 4, 2, {-kInf, 0.0}},
      {3, 1, {kInf, kInf}, 1, 0, {0.0, 0.0}}, {5, 2, {-kInf, 1.0}, 2, 4, {kNaN, kNaN}},
  };
  int64_t compared = 0;
  for (const special& sp : cases)
    for (const zdouble alpha : {zdouble(1.0, 0.0), zdouble(-0.75, 0.5)})
      for (int moduli : {14, OZDGEMM_MODULI_CERTIFIED}) {
        zmatrix op_a = phi_zmatrix(6, 8, 1.0, 61), op_b = phi_zmatrix(8, 5, 1.0, 62);
        if (sp.ai >= 0) op_a(sp.ai, sp.al) = sp.av;
        if (sp.bl >= 0) op_b(sp.bl, sp.bj) = sp.bv;
        zproblem p('N', 'N', op_a, op_b, 1, alpha, {0.25, -1.5}, 63);
        ASSERT_EQ(p.run_native(handle_), CUBLAS_STATUS_SUCCESS);
        ASSERT_CUDA(cudaDeviceSynchronize());
        const std::vector<zdouble> native = p.c.to_host();
        int s_used = -1;
        ASSERT_EQ(p.run(handle_, ozdgemm::test::zoptions(moduli, true), false, &s_used),
                  OZDGEMM_STATUS_SUCCESS);
        ASSERT_CUDA(cudaDeviceSynchronize());
        const std::vector<zdouble> got = p.c.to_host();
        for (int64_t j = 0; j < p.n; ++j)
          for (int64_t i = 0; i < p.m; ++i) {
            const zdouble g = got[j * p.C0.ld + i], w = native[j * p.C0.ld + i];
            EXPECT_STREQ(fp_class(g.real()), fp_class(w.real()))
                << "re at " << i << "," << j << " s=" << s_used;
            EXPECT_STREQ(fp_class(g.imag()), fp_class(w.imag()))
                << "im at " << i << "," << j << " s=" << s_used;
            compared += !std::isfinite(w.real()) + !std::isfinite(w.imag());
          }
      }
  EXPECT_GT(compared, 0) << "non-finite parts were compared";
}

// alpha = 0 (A and B poisoned with NaN, host and device pointer mode): C = beta C, no NaN from
// A or B, within the epilogue's rounding of native's beta C; k = 0 gives the same bits as
// alpha = 0; beta = 0 never reads C (NaN there does not leak).
TEST_F(ZgemmSemantics, AlphaZeroBetaZeroAndEmptyK) {
  const zdouble beta(0.25, -1.5);
  for (bool dev : {false, true}) {
    zproblem p('N', 'T', phi_zmatrix(9, 7, 1.0, 71), phi_zmatrix(7, 6, 1.0, 72), 1, {0.0, 0.0},
               beta, 73);
    for (zdouble& x : p.A.data) x = zdouble(kNaN, kNaN);
    for (zdouble& x : p.B.data) x = zdouble(kNaN, kNaN);
    ASSERT_CUDA(cudaMemcpy(p.a.ptr, p.A.data.data(), p.A.data.size() * sizeof(zdouble),
                           cudaMemcpyHostToDevice));
    ASSERT_CUDA(cudaMemcpy(p.b.ptr, p.B.data.data(), p.B.data.size() * sizeof(zdouble),
                           cudaMemcpyHostToDevice));
    ASSERT_EQ(p.run_native(handle_), CUBLAS_STATUS_SUCCESS);
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<zdouble> native = p.c.to_host();
    if (dev) {
      ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
    }
    for (int moduli : {14, OZDGEMM_MODULI_CERTIFIED}) {
      int s_used = -1;
      ASSERT_EQ(p.run(handle_, ozdgemm::test::zoptions(moduli, true), dev, &s_used),
                OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaDeviceSynchronize());
      const std::vector<zdouble> got = p.c.to_host();
      const double u = std::ldexp(1.0, -53);
      for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
          const zdouble g = got[j * p.C0.ld + i], w = native[j * p.C0.ld + i], c0 = p.C0(i, j);
          ASSERT_TRUE(std::isfinite(g.real()) && std::isfinite(g.imag())) << "A or B was read";
          const double mag = std::abs(beta) * std::abs(c0);
          EXPECT_LE(std::abs(g - w), 8 * u * mag) << "beta C at " << i << "," << j;
        }
      // k = 0: C = beta C, the same bits (host pointer mode: the scalars live on the host).
      if (!dev) {
        p.reset_c();
        ASSERT_EQ(ozdgemm_zgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_T, p.m, p.n, 0, cu(&p.alpha),
                                cu(p.a.ptr), p.A.ld, cu(p.b.ptr), p.B.ld, cu(&p.beta), cu(p.c.ptr),
                                p.C0.ld, ozdgemm::test::zoptions(moduli, true)),
                  OZDGEMM_STATUS_SUCCESS);
        ASSERT_CUDA(cudaDeviceSynchronize());
        EXPECT_EQ(differing(p.c.to_host(), got), 0) << "k = 0 against alpha = 0";
      }
    }
    ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
  }
  // beta = 0 with NaN in C: the result equals the one with finite data in C.
  zproblem nan_c('C', 'N', phi_zmatrix(9, 7, 1.0, 74), phi_zmatrix(7, 6, 1.0, 75), 0, {-0.75, 0.5},
                 {0.0, 0.0}, 76, true);
  zproblem data_c('C', 'N', phi_zmatrix(9, 7, 1.0, 74), phi_zmatrix(7, 6, 1.0, 75), 0, {-0.75, 0.5},
                  {0.0, 0.0}, 76, false);
  int s1 = -1, s2 = -1;
  ASSERT_EQ(nan_c.run(handle_, ozdgemm::test::zoptions(14, true), false, &s1),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_EQ(data_c.run(handle_, ozdgemm::test::zoptions(14, true), false, &s2),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<zdouble> x = nan_c.c.to_host(), y = data_c.c.to_host();
  EXPECT_EQ(differing(x, y), 0);
  for (const zdouble& e : x) EXPECT_FALSE(std::isnan(e.real()) || std::isnan(e.imag()));
}

// Invalid arguments: the status cublasZgemm_64 returns for the same arguments, and C untouched.
TEST_F(ZgemmSemantics, InvalidArgumentsReturnCublasStatusAndLeaveCUntouched) {
  const int64_t n = 8;
  device_buffer<zdouble> a(std::vector<zdouble>(n * n, {1.0, 1.0}));
  device_buffer<zdouble> b(std::vector<zdouble>(n * n, {1.0, -1.0}));
  device_buffer<zdouble> c(std::vector<zdouble>(n * n, {42.0, -42.0}));
  const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0), zero = make_cuDoubleComplex(0, 0);
  struct bad {
    int64_t m, n, k, lda, ldb, ldc;
    cublasOperation_t ta, tb;
  } const cases[] = {
      {-1, n, n, n, n, n, CUBLAS_OP_N, CUBLAS_OP_N},
      {n, -1, n, n, n, n, CUBLAS_OP_N, CUBLAS_OP_C},
      {n, n, -1, n, n, n, CUBLAS_OP_C, CUBLAS_OP_N},
      {n, n, n, n - 1, n, n, CUBLAS_OP_N, CUBLAS_OP_N},
      {n, n, n, n, n - 1, n, CUBLAS_OP_T, CUBLAS_OP_C},
      {n, n, n, n, n, n - 1, CUBLAS_OP_C, CUBLAS_OP_C},
      {n, n, n, n, n, n, static_cast<cublasOperation_t>(42), CUBLAS_OP_N},
      {n, n, n, n, n, n, CUBLAS_OP_N, static_cast<cublasOperation_t>(7)},
  };
  for (const bad& x : cases) {
    const cublasStatus_t native =
        cublasZgemm_64(handle_, x.ta, x.tb, x.m, x.n, x.k, &one, cu(a.ptr), x.lda, cu(b.ptr), x.ldb,
                       &zero, cu(c.ptr), x.ldc);
    const ozdgemm_status_t st =
        ozdgemm_zgemm(handle_, x.ta, x.tb, x.m, x.n, x.k, &one, cu(a.ptr), x.lda, cu(b.ptr), x.ldb,
                      &zero, cu(c.ptr), x.ldc, ozdgemm_default_options());
    EXPECT_EQ(ozdgemm_status_to_cublas(st), native);
    EXPECT_EQ(st, OZDGEMM_STATUS_INVALID_VALUE);
  }
  EXPECT_EQ(ozdgemm_status_to_cublas(ozdgemm_zgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                                                   cu(a.ptr), n, cu(b.ptr), n, &zero, cu(c.ptr), n,
                                                   ozdgemm_default_options())),
            cublasZgemm_64(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, cu(a.ptr), n,
                           cu(b.ptr), n, &zero, cu(c.ptr), n));
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (const zdouble& x : c.to_host()) ASSERT_EQ(x, zdouble(42.0, -42.0));
}

// ozdgemm_zgemm_ex reports the fixed s, and the host reference's s for a per-call choice; where
// the certified choice finds no s (anti-aligned or wide-range data), the call runs native
// cublasZgemm: C holds native's bits and the reported s is 0.
TEST_F(ZgemmSemantics, ReportsSAndFallsBackToNativeBits) {
  {
    zproblem p('N', 'N', phi_zmatrix(40, 50, 1.0, 81), phi_zmatrix(50, 30, 1.0, 82), 0,
               {-0.75, 0.5}, {0.25, -1.5}, 83);
    for (int moduli : {9, 17, OZDGEMM_MODULI_AUTO, OZDGEMM_MODULI_CERTIFIED}) {
      int s_used = -1;
      ASSERT_EQ(p.run(handle_, ozdgemm::test::zoptions(moduli, true), false, &s_used),
                OZDGEMM_STATUS_SUCCESS);
      EXPECT_EQ(s_used, p.reference_s(moduli, true)) << setting_name(moduli);
      if (moduli > 0) {
        EXPECT_EQ(s_used, moduli);
      }
    }
  }
  int fallbacks = 0;
  for (double phi : {4.0, 8.0}) {
    zmatrix op_a, op_b;
    anti_aligned_zinputs(phi, 24, 20, 1024, 4001 + static_cast<uint64_t>(phi), &op_a, &op_b);
    zproblem p('N', 'N', op_a, op_b, 0, {1.0, 0.0}, {0.0, 0.0}, 84);
    for (bool fast : {true, false}) {
      const int host_s = p.reference_s(OZDGEMM_MODULI_CERTIFIED, fast);
      int s_used = -1;
      ASSERT_EQ(
          p.run(handle_, ozdgemm::test::zoptions(OZDGEMM_MODULI_CERTIFIED, fast), false, &s_used),
          OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaDeviceSynchronize());
      const std::vector<zdouble> got = p.c.to_host();
      EXPECT_EQ(s_used, host_s) << "phi " << phi;
      std::printf("[ certified ] anti-aligned phi=%g %s: s = %d\n", phi, fast ? "fast" : "acc",
                  s_used);
      if (host_s != 0) {
        EXPECT_EQ(
            differing(got, p.reference(ozdgemm::test::zoptions(OZDGEMM_MODULI_CERTIFIED, fast))),
            0);
        continue;
      }
      ++fallbacks;
      ASSERT_EQ(p.run_native(handle_), CUBLAS_STATUS_SUCCESS);
      ASSERT_CUDA(cudaDeviceSynchronize());
      EXPECT_EQ(differing(got, p.c.to_host()), 0) << "C is not native cublasZgemm's result";
    }
  }
  EXPECT_GT(fallbacks, 0) << "some anti-aligned input defeats every s (as for DGEMM)";
}

// Graph capture through ozdgemm_zgemm_ex: with a fixed s (workspace grown by an earlier call), the
// captured call replayed gives the bits of the uncaptured call; under the default (certified) the
// _ex entry, which reports s, chooses on the host, so the captured call is native cublasZgemm and
// the replay gives native's bits (ozdgemm_zgemm chooses on the GPU there:
// zgemm_gpu_choice_test.cpp).
TEST_F(ZgemmSemantics, GraphCapture) {
  zproblem p('C', 'N', phi_zmatrix(60, 70, 1.0, 91), phi_zmatrix(70, 50, 1.0, 92), 2, {-0.75, 0.5},
             {0.25, -1.5}, 93);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, s));
  for (int moduli : {14, OZDGEMM_MODULI_CERTIFIED}) {
    const ozdgemm_options_t o = ozdgemm::test::zoptions(moduli, true);
    std::vector<zdouble> want;
    if (moduli == 14) {
      int s_used = -1;
      ASSERT_EQ(p.run(handle_, o, false, &s_used), OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaStreamSynchronize(s));
      EXPECT_EQ(s_used, 14);
      want = p.c.to_host();
    } else {
      ASSERT_EQ(p.run_native(handle_), CUBLAS_STATUS_SUCCESS);
      ASSERT_CUDA(cudaStreamSynchronize(s));
      want = p.c.to_host();
    }
    p.reset_c();
    ASSERT_CUDA(cudaDeviceSynchronize());
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    int s_used = -1;
    const ozdgemm_status_t st = ozdgemm_zgemm_ex(
        handle_, to_op(p.ta), to_op(p.tb), p.m, p.n, p.k, cu(&p.alpha), cu(p.a.ptr), p.A.ld,
        cu(p.b.ptr), p.B.ld, cu(&p.beta), cu(p.c.ptr), p.C0.ld, o, &s_used);
    ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
    ASSERT_EQ(st, OZDGEMM_STATUS_SUCCESS);
    EXPECT_EQ(s_used, moduli == 14 ? 14 : 0) << "certified runs native under capture";
    ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
      p.reset_c();
      ASSERT_CUDA(cudaDeviceSynchronize());
      ASSERT_CUDA(cudaGraphLaunch(exec, s));
      ASSERT_CUDA(cudaStreamSynchronize(s));
      EXPECT_EQ(differing(p.c.to_host(), want), 0) << setting_name(moduli) << " replay " << replay;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(s);
}

// ---- (3) The two forms ----------------------------------------------------------------------

// The Karatsuba form (3 INT8 GEMMs of halves per modulus) and the four-product form (one GEMM of
// the whole embedding) compute the same T mod every modulus (core/karatsuba.hpp), so the same
// C: over op pairs, sizes off the 16-element padding, both scalings, fixed, auto and certified
// counts, and a depth whose halves need two k-blocks.
TEST_F(ZgemmSemantics, KaratsubaAndFourProductFormsGiveTheSameBits) {
  using ozdgemm::detail::complex_form;
  struct form_case {
    char ta, tb;
    int64_t m, n, k;
    int moduli;
    bool fast;
  };
  const form_case cases[] = {{'N', 'N', 37, 29, 45, 14, true},
                             {'C', 'T', 37, 29, 45, 16, false},
                             {'T', 'C', 1, 1, 1, 20, true},
                             {'N', 'C', 130, 70, 300, OZDGEMM_MODULI_CERTIFIED, true},
                             {'C', 'N', 64, 48, 32, OZDGEMM_MODULI_AUTO, false},
                             {'N', 'N', 200, 160, 96, OZDGEMM_MODULI_CERTIFIED, false},
                             {'N', 'T', 4, 3, 140000, 15, true}};
  for (const form_case& fc : cases) {
    const uint64_t seed = 700 + fc.m + fc.n * 3 + fc.k * 5;
    zproblem p(fc.ta, fc.tb, phi_zmatrix(fc.m, fc.k, 1.0, seed),
               phi_zmatrix(fc.k, fc.n, 1.0, seed + 1), 1, {-0.75, 0.5}, {0.25, -1.5}, seed + 2);
    const ozdgemm_options_t o = ozdgemm::test::zoptions(fc.moduli, fc.fast);
    std::vector<zdouble> got[2];
    int s_used[2] = {-1, -1};
    const complex_form forms[2] = {complex_form::karatsuba, complex_form::four};
    for (int f = 0; f < 2; ++f) {
      ozdgemm::detail::set_complex_form_setting(forms[f]);
      const ozdgemm_status_t st = p.run(handle_, o, false, &s_used[f]);
      ozdgemm::detail::set_complex_form_setting(complex_form::setting);
      ASSERT_EQ(st, OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaDeviceSynchronize());
      got[f] = p.c.to_host();
    }
    const std::string what = std::string(1, fc.ta) + fc.tb + " " + std::to_string(fc.m) + "x" +
                             std::to_string(fc.n) + "x" + std::to_string(fc.k) + " " +
                             setting_name(fc.moduli);
    ASSERT_GT(s_used[0], 0) << what << ": emulated";
    EXPECT_EQ(s_used[0], s_used[1]) << what;
    EXPECT_EQ(differing(got[0], got[1]), 0) << what;
    EXPECT_EQ(differing(got[0], p.reference(o)), 0) << what << ": the host reference";
  }
}

}  // namespace
