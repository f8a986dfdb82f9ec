// The default certified count of eager device calls, speculated by the host and checked on the
// GPU with no wait (engine/speculation.hpp):
//   - a shape's second call launches the count its first call certified (the GPU's tally counts
//     what ran) and gives the host reference's bits at that count;
//   - data that switches on one shape (phi 0.5, phi 4, anti-aligned, phi 0.5, then phi 0.5 until
//     a probe finds a count again): every result meets native DGEMM's error bound, each emulated
//     one equals the host reference at the count that ran, a launched count too small for the
//     data runs the FP64 fallback, and the shape is emulated again within kProbeEvery calls;
//   - the Karatsuba form's second call (its residue pass writes the band planes of all of B*)
//     runs its first call's count and gives the host reference's bits;
//   - behind a 200 ms spinning kernel on the same stream, 4096^3 ozdgemm_dgemm and ozdgemm_zgemm
//     calls at defaults (after one earlier call of the shape) return while the kernel spins, and
//     give the bits of that earlier call.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "auto_fixture.hpp"
#include "choice_tally.hpp"
#include "core/moduli.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/moduli_history.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/host_reference.hpp"
#include "spin_kernel.cuh"
#include "support/auto_inputs.hpp"
#include "support/dd_reference.hpp"
#include "support/inputs.hpp"
#include "zgemm_problem.hpp"

namespace {

using namespace ozdgemm::test::choice;
using ozdgemm::detail::kMinModuli;
using ozdgemm::test::grown_slot;
using ozdgemm::test::tally_now;

class SpeculativeCount : public AutoGpuTest {
 protected:
  void SetUp() override {
    ozdgemm::detail::clear_gpu_choice_override();  // the default: OZDGEMM_CHOICE unset or gpu
    AutoGpuTest::SetUp();
  }
};

size_t differing_bits(const std::vector<double>& got, const std::vector<double>& want) {
  size_t diff = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], want[i])) ++diff;
  return diff;
}

// The host reference at a fixed count s (column-major, op = N, N).
std::vector<double> reference_at(const operand_pair& in, const host_matrix& c0, double alpha,
                                 double beta, int s) {
  host_matrix c = c0;
  const ozdgemm::detail::gemm_problem p{
      in.a.rows,
      in.b.cols,
      in.a.cols,
      ozdgemm::detail::operand_a(ozdgemm::detail::op_kind::n, in.a.data.data(), in.a.rows),
      ozdgemm::detail::operand_b(ozdgemm::detail::op_kind::n, in.b.data.data(), in.a.cols),
      c.data.data(),
      in.a.rows};
  ozdgemm::detail::reference_dgemm(p, alpha, beta, s, ozdgemm::detail::scaling_mode::fast);
  return c.data;
}

// Elements whose distance from native cuBLAS's result exceeds twice native's deterministic bound
// k u (|A||B|)_ij (alpha = 1, beta = 0: both are within k u (|A||B|)_ij of the exact product).
size_t beyond_native_bound(const operand_pair& in, const std::vector<double>& got,
                           const std::vector<double>& native) {
  const int64_t m = in.a.rows, n = in.b.cols, k = in.a.cols;
  const double u = std::ldexp(1.0, -53);
  std::vector<double> abs_ab(static_cast<size_t>(m * n));
  ozdgemm::test::abs_product('N', 'N', m, n, k, in.a.data.data(), m, in.b.data.data(), k,
                             abs_ab.data(), m);
  size_t bad = 0;
  for (int64_t e = 0; e < m * n; ++e)
    if (!(std::fabs(got[e] - native[e]) <= 2.0 * (k + 2) * u * abs_ab[e])) ++bad;
  return bad;
}

TEST_F(SpeculativeCount, SecondCallRunsTheLearntCountWithTheReferenceBits) {
  const double alpha = -0.75, beta = 0.5;
  const auto_case cases[] = {{"phi0p5", auto_set::phi, 0.5, 200, 136, 700, 9101},
                             {"phi2", auto_set::phi, 2.0, 120, 88, 1000, 9102},
                             {"nonneg", auto_set::nonnegative, 1.0, 96, 64, 513, 9103}};
  const ozdgemm_options_t o = ozdgemm_default_options();
  for (const auto_case& c : cases) {
    const operand_pair in = ozdgemm::test::make_auto_inputs(c);
    const host_matrix c0 = ozdgemm::test::phi_matrix(c.m, c.n, 1.0, c.seed + 1);
    device_problem d(in, c0);
    int s_first = -1;  // the shape's first call: the host's choice, which the history learns
    ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &alpha, d.a.ptr,
                               c.m, d.b.ptr, c.k, &beta, d.c.ptr, c.m, o, &s_first),
              OZDGEMM_STATUS_SUCCESS);
    ASSERT_GE(s_first, kMinModuli) << c.name;
    for (int call = 0; call < 2; ++call) {
      d.reset_c(c0);
      const std::vector<unsigned long long> before = tally_now();
      ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &alpha, d.a.ptr,
                              c.m, d.b.ptr, c.k, &beta, d.c.ptr, c.m, o),
                OZDGEMM_STATUS_SUCCESS);
      const int ran = grown_slot(before, tally_now());
      std::printf("[ speculative ] %s call %d: s = %d (first call's choice %d)\n", c.name.c_str(),
                  call + 2, ran, s_first);
      EXPECT_EQ(ran, s_first) << c.name << ": the learnt count, certified on the GPU";
      EXPECT_EQ(differing_bits(d.c.to_host(), reference_at(in, c0, alpha, beta, s_first)), 0u)
          << c.name << " call " << call + 2;
    }
  }
}

TEST_F(SpeculativeCount, DataSwitchingOnOneShapeKeepsEveryCallWithinTheBound) {
  const int64_t m = 160, n = 144, k = 640;
  const double alpha = 1.0, beta = 0.0;
  const operand_pair easy =
      ozdgemm::test::make_auto_inputs({"phi0p5", auto_set::phi, 0.5, m, n, k, 9201});
  const operand_pair sequence[] = {
      easy,
      ozdgemm::test::make_auto_inputs({"phi4", auto_set::phi, 4.0, m, n, k, 9202}),
      ozdgemm::test::anti_aligned_inputs(4.0, m, n, k, 9203),
      easy,
  };
  const char* names[] = {"phi0.5", "phi4", "anti-aligned", "phi0.5"};
  const host_matrix c0 = ozdgemm::test::phi_matrix(m, n, 1.0, 9204);
  device_problem d(easy, c0);
  const ozdgemm_options_t o = ozdgemm_default_options();
  int emulated = 0, fallbacks = 0, native_calls = 0, calls = 0, last_kind = -1;
  // first: the shape's first call, which chooses on the host (it has no count yet) and reports s.
  auto run = [&](const operand_pair& in, const char* name, bool first = false) {
    ASSERT_CUDA(
        cudaMemcpy(d.a.ptr, in.a.data.data(), in.a.data.size() * 8, cudaMemcpyHostToDevice));
    ASSERT_CUDA(
        cudaMemcpy(d.b.ptr, in.b.data.data(), in.b.data.size() * 8, cudaMemcpyHostToDevice));
    const std::vector<double> native = native_result(handle_, d, c0, alpha, beta);
    d.reset_c(c0);
    const std::vector<unsigned long long> before = tally_now();
    int reported = -1;
    ASSERT_EQ(first ? ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d.a.ptr,
                                       m, d.b.ptr, k, &beta, d.c.ptr, m, o, &reported)
                    : ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d.a.ptr, m,
                                    d.b.ptr, k, &beta, d.c.ptr, m, o),
              OZDGEMM_STATUS_SUCCESS);
    const std::vector<unsigned long long> after = tally_now();
    const std::vector<double> got = d.c.to_host();
    bool grew = false;
    for (size_t s = 0; s < after.size(); ++s) grew = grew || after[s] != before[s];
    const int ran = first ? reported : grown_slot(before, after);
    ++calls;
    EXPECT_EQ(beyond_native_bound(in, got, native), 0u) << name << ", call " << calls;
    if (ran >= kMinModuli) {
      ++emulated;
      last_kind = 2;
      EXPECT_EQ(differing_bits(got, reference_at(in, c0, alpha, beta, ran)), 0u)
          << name << ": not the reference at the count that ran, s = " << ran;
    } else if (ran == 0) {
      ++fallbacks;
      last_kind = 1;
    } else {
      EXPECT_FALSE(grew) << name << ": more than one count in the tally";
      ++native_calls;  // native cuBLAS on the caller's handle: nothing was enqueued
      last_kind = 0;
    }
    std::printf("[ speculative ] call %d (%s): %s\n", calls, name,
                ran >= kMinModuli ? ("emulated, s = " + std::to_string(ran)).c_str()
                : ran == 0        ? "FP64 fallback"
                                  : "native");
  };
  for (int i = 0; i < 4; ++i) run(sequence[i], names[i], i == 0);
  EXPECT_GE(emulated, 1) << "phi 0.5 on the shape's first call is emulated";
  EXPECT_GE(fallbacks, 1) << "phi 4 after phi 0.5's count should run the fallback";
  // Easy data again: native until a probe certifies it, then emulated.
  const int limit = static_cast<int>(ozdgemm::detail::moduli_history::kProbeEvery) + 2;
  int tries = 0;
  do {
    run(easy, "phi0.5 again");
  } while (last_kind != 2 && ++tries < limit);
  EXPECT_EQ(last_kind, 2) << "phi 0.5 was not emulated again within " << limit << " calls";
  std::printf("[ speculative ] %d calls: %d emulated, %d FP64 fallbacks, %d native\n", calls,
              emulated, fallbacks, native_calls);
}

// A launched count the data does not certify runs the FP64 fallback (kernels/fallback_gemm.cuh):
// each call's shape is given the history s = 2, which no call here certifies. Every op pair, alpha
// and beta (beta = 0 with NaN in C, which must not leak; alpha = 0), both pointer modes, ld
// padding: each result within twice native's deterministic bound of native cublasDgemm's, and the
// tally's slot 0 (the fallback) counts each call.
TEST_F(SpeculativeCount, UncertifiedLaunchedCountRunsTheFp64Fallback) {
  const int64_t m = 150, n = 70, pad = 5;
  const ozdgemm_options_t o = ozdgemm_default_options();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct scalars {
    double alpha, beta;
    bool nan_c;
  };
  const scalars cases[] = {{1.0, 0.0, true}, {-0.75, 1.5, false}, {0.0, 2.0, false}};
  const double u = std::ldexp(1.0, -53);
  int calls = 0;
  for (const cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (const cublasOperation_t tb : {CUBLAS_OP_N, CUBLAS_OP_T})
      for (const scalars& sc : cases)
        for (const bool device_mode : {false, true}) {
          // A shape of its own per call: each call teaches its shape the count it certifies.
          const int64_t k = 333 + calls;
          ozdgemm::detail::process_moduli_history().record(
              ozdgemm::detail::key_of_call(m, n, k, false, ozdgemm::detail::scaling_mode::fast,
                                           o.accuracy),
              2);
          const int64_t ra = ta == CUBLAS_OP_N ? m : k, ca = ta == CUBLAS_OP_N ? k : m;
          const int64_t rb = tb == CUBLAS_OP_N ? k : n, cb = tb == CUBLAS_OP_N ? n : k;
          const int64_t lda = ra + pad, ldb = rb + pad, ldc = m + pad;
          const host_matrix a = ozdgemm::test::phi_matrix(ra, ca, 1.0, 9401 + calls, lda);
          const host_matrix b = ozdgemm::test::phi_matrix(rb, cb, 1.0, 9501 + calls, ldb);
          host_matrix c0 = ozdgemm::test::phi_matrix(m, n, 1.0, 9601 + calls, ldc);
          if (sc.nan_c) std::fill(c0.data.begin(), c0.data.end(), nan);
          device_buffer<double> da(a.data), db(b.data), dc(c0.data), dn(c0.data);
          device_buffer<double> dscal(std::vector<double>{sc.alpha, sc.beta});
          ASSERT_CUBLAS(cublasSetPointerMode(
              handle_, device_mode ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
          const double* al = device_mode ? dscal.ptr : &sc.alpha;
          const double* be = device_mode ? dscal.ptr + 1 : &sc.beta;
          ASSERT_CUBLAS(
              cublasDgemm(handle_, ta, tb, m, n, k, al, da.ptr, lda, db.ptr, ldb, be, dn.ptr, ldc));
          const std::vector<unsigned long long> before = tally_now();
          ASSERT_EQ(ozdgemm_dgemm(handle_, ta, tb, m, n, k, al, da.ptr, lda, db.ptr, ldb, be,
                                  dc.ptr, ldc, o),
                    OZDGEMM_STATUS_SUCCESS);
          // alpha = 0: C = beta C, which s = 2 serves (device pointer mode) or which needs no
          // emulation at all (host pointer mode).
          if (sc.alpha != 0.0) EXPECT_EQ(grown_slot(before, tally_now()), 0) << "the fallback ran";
          ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
          const std::vector<double> got = dc.to_host(), native = dn.to_host();
          std::vector<double> abs_ab(static_cast<size_t>(m * n));
          ozdgemm::test::abs_product(ta == CUBLAS_OP_N ? 'N' : 'T', tb == CUBLAS_OP_N ? 'N' : 'T',
                                     m, n, k, a.data.data(), lda, b.data.data(), ldb, abs_ab.data(),
                                     m);
          size_t bad = 0;
          for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
              const double c = sc.beta == 0.0 ? 0.0 : std::fabs(c0.data[j * ldc + i]);
              const double bound =
                  4.0 * (k + 2) * u *
                  (std::fabs(sc.alpha) * abs_ab[j * m + i] + std::fabs(sc.beta) * c);
              const double g = got[j * ldc + i], w = native[j * ldc + i];
              if (!std::isfinite(g) || !(std::fabs(g - w) <= bound)) ++bad;
            }
          EXPECT_EQ(bad, 0u) << "ta " << ta << " tb " << tb << " alpha " << sc.alpha << " beta "
                             << sc.beta << (device_mode ? " device" : " host") << " pointers";
          // ld padding of C: the rows below m keep C0's values
          for (int64_t j = 0; j < n; ++j)
            for (int64_t i = m; i < ldc; ++i)
              if (!same_bits(got[j * ldc + i], c0.data[j * ldc + i])) ++bad;
          EXPECT_EQ(bad, 0u) << "padding of C written";
          ++calls;
        }
  EXPECT_EQ(calls, 24);
}

// The same for a complex call: the fallback multiplies the real embedding in FP64, then the
// complex epilogue applies alpha and beta; within native cublasZgemm's bound.
TEST_F(SpeculativeCount, UncertifiedComplexCountRunsTheFp64Fallback) {
  const int64_t m = 96, n = 80, k = 200;
  const ozdgemm_options_t o = ozdgemm_default_options();
  ozdgemm::detail::process_moduli_history().record(
      ozdgemm::detail::key_of_call(m, n, k, true, ozdgemm::detail::scaling_mode::fast, o.accuracy),
      2);
  using ozdgemm::test::zdouble;
  ozdgemm::test::zproblem z('N', 'C', ozdgemm::test::phi_zmatrix(m, k, 1.0, 9701),
                            ozdgemm::test::phi_zmatrix(k, n, 1.0, 9702), 3, zdouble(0.5, -1.25),
                            zdouble(-0.25, 2.0), 9703);
  ASSERT_CUBLAS(z.run_native(handle_));
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<zdouble> native = z.c.to_host();
  z.reset_c();
  const std::vector<unsigned long long> before = tally_now();
  ASSERT_EQ(ozdgemm_zgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_C, m, n, k, ozdgemm::test::cu(&z.alpha),
                          ozdgemm::test::cu(z.a.ptr), z.A.ld, ozdgemm::test::cu(z.b.ptr), z.B.ld,
                          ozdgemm::test::cu(&z.beta), ozdgemm::test::cu(z.c.ptr), z.C0.ld, o),
            OZDGEMM_STATUS_SUCCESS);
  EXPECT_EQ(grown_slot(before, tally_now()), 0) << "the fallback ran";
  const std::vector<zdouble> got = z.c.to_host();
  std::vector<double> abs_ab(static_cast<size_t>(m * n));
  ozdgemm::test::abs_zproduct('N', 'C', m, n, k, z.A.ptr(), z.A.ld, z.B.ptr(), z.B.ld,
                              abs_ab.data(), m);
  const double u = std::ldexp(1.0, -53);
  size_t bad = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      const double bound =
          8.0 * (k + 2) * u *
          (std::abs(z.alpha) * abs_ab[j * m + i] + std::abs(z.beta) * std::abs(z.C0(i, j)));
      if (!(std::abs(got[j * z.C0.ld + i] - native[j * z.C0.ld + i]) <= bound)) ++bad;
    }
  EXPECT_EQ(bad, 0u);
}

// The Karatsuba form's speculated call: its residue pass writes the band planes of the whole
// embedding B* from the first half of each column (launch_residues_and_bands' mirror). The
// second call of a shape runs the count its first call (the host's choice) certified, and both
// give the host reference's bits.
TEST_F(SpeculativeCount, KaratsubaSecondCallGivesTheReferenceBits) {
  using ozdgemm::detail::complex_form;
  using ozdgemm::test::zdouble;
  struct karatsuba_case {
    char ta, tb;
    int64_t m, n, k;
  };
  const karatsuba_case cases[] = {{'N', 'N', 130, 70, 300}, {'C', 'T', 37, 29, 45}};
  const ozdgemm_options_t o = ozdgemm_default_options();
  ozdgemm::detail::set_complex_form_setting(complex_form::karatsuba);
  for (const karatsuba_case& kc : cases) {
    const uint64_t seed = 9800 + kc.m + kc.n * 3 + kc.k * 5;
    ozdgemm::test::zproblem z(kc.ta, kc.tb, ozdgemm::test::phi_zmatrix(kc.m, kc.k, 0.5, seed),
                              ozdgemm::test::phi_zmatrix(kc.k, kc.n, 0.5, seed + 1), 3,
                              zdouble(-0.75, 0.5), zdouble(0.25, -1.5), seed + 2);
    int s_first = -1;
    ASSERT_EQ(z.run(handle_, o, false, &s_first), OZDGEMM_STATUS_SUCCESS);
    ASSERT_GE(s_first, kMinModuli);
    const std::vector<zdouble> want = z.reference(o);
    for (int call = 0; call < 2; ++call) {
      z.reset_c();
      const std::vector<unsigned long long> before = tally_now();
      ASSERT_EQ(
          ozdgemm_zgemm(handle_, ozdgemm::test::to_op(kc.ta), ozdgemm::test::to_op(kc.tb), kc.m,
                        kc.n, kc.k, ozdgemm::test::cu(&z.alpha), ozdgemm::test::cu(z.a.ptr), z.A.ld,
                        ozdgemm::test::cu(z.b.ptr), z.B.ld, ozdgemm::test::cu(&z.beta),
                        ozdgemm::test::cu(z.c.ptr), z.C0.ld, o),
          OZDGEMM_STATUS_SUCCESS);
      EXPECT_EQ(grown_slot(before, tally_now()), s_first) << kc.m << "x" << kc.n << "x" << kc.k;
      EXPECT_EQ(ozdgemm::test::differing(z.c.to_host(), want), 0)
          << kc.m << "x" << kc.n << "x" << kc.k << " call " << call + 2;
    }
  }
}

using ozdgemm::test::spin_cycles;
using ozdgemm::test::spin_kernel;

// Runs `call` behind a 200 ms spin on `stream`; the host time of the call, and whether the
// stream was still busy when it returned.
template <class Call>
void behind_a_spin(cudaStream_t stream, const char* what, Call&& call) {
  spin_kernel<<<1, 1, 0, stream>>>(spin_cycles(200.0));
  ASSERT_CUDA(cudaGetLastError());
  const auto t0 = std::chrono::steady_clock::now();
  call();
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const cudaError_t pending = cudaStreamQuery(stream);
  std::printf("[ speculative ] %s behind a 200 ms spin: returned after %.3f ms, stream %s\n", what,
              host_ms, pending == cudaErrorNotReady ? "still busy" : "idle");
  EXPECT_EQ(pending, cudaErrorNotReady) << what << ": the call waited for the spinning kernel";
  EXPECT_LT(host_ms, 100.0) << what;
  ASSERT_CUDA(cudaStreamSynchronize(stream));
}

TEST_F(SpeculativeCount, EagerCallsReturnBeforeASpinningKernelEnds) {
  const int64_t n = 4096;
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  const ozdgemm_options_t o = ozdgemm_default_options();
  {  // DGEMM
    const operand_pair in =
        ozdgemm::test::make_auto_inputs({"phi0p5", auto_set::phi, 0.5, n, n, n, 9301});
    const host_matrix c0 = ozdgemm::test::make_matrix(n, n);
    device_problem d(in, c0);
    const double alpha = 1.0, beta = 0.0;
    auto call = [&] {
      ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, d.a.ptr, n,
                              d.b.ptr, n, &beta, d.c.ptr, n, o),
                OZDGEMM_STATUS_SUCCESS);
    };
    // The shape's first call, which may wait once (the host's choice), teaches the shape its
    // count; with other programs on the GPU it can be turned away (the workspace rule), so it is
    // repeated until it emulates.
    int first_s = 0;
    for (int tries = 0; tries < 3 && first_s < kMinModuli; ++tries) {
      ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, d.a.ptr, n,
                                 d.b.ptr, n, &beta, d.c.ptr, n, o, &first_s),
                OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaStreamSynchronize(stream));
    }
    ASSERT_GE(first_s, kMinModuli) << "the shape's first calls were never emulated";
    const std::vector<double> first = d.c.to_host();
    d.reset_c(c0);
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<unsigned long long> before = tally_now();
    behind_a_spin(stream, "ozdgemm_dgemm 4096^3", call);
    EXPECT_GE(grown_slot(before, tally_now()), kMinModuli) << "phi 0.5 at 4096 is emulated";
    EXPECT_EQ(differing_bits(d.c.to_host(), first), 0u);
  }
  {  // ZGEMM
    ozdgemm::test::zproblem z('N', 'N', ozdgemm::test::phi_zmatrix(n, n, 0.5, 9302),
                              ozdgemm::test::phi_zmatrix(n, n, 0.5, 9303), 0,
                              ozdgemm::test::zdouble(1.0, 0.0), ozdgemm::test::zdouble(0.0, 0.0),
                              9304);
    const cuDoubleComplex al = make_cuDoubleComplex(1.0, 0.0), be = make_cuDoubleComplex(0.0, 0.0);
    auto call = [&] {
      ASSERT_EQ(ozdgemm_zgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &al,
                              ozdgemm::test::cu(z.a.ptr), z.A.ld, ozdgemm::test::cu(z.b.ptr),
                              z.B.ld, &be, ozdgemm::test::cu(z.c.ptr), z.C0.ld, o),
                OZDGEMM_STATUS_SUCCESS);
    };
    int first_s = 0;
    for (int tries = 0; tries < 3 && first_s < kMinModuli; ++tries) {
      ASSERT_EQ(ozdgemm_zgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &al,
                                 ozdgemm::test::cu(z.a.ptr), z.A.ld, ozdgemm::test::cu(z.b.ptr),
                                 z.B.ld, &be, ozdgemm::test::cu(z.c.ptr), z.C0.ld, o, &first_s),
                OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaStreamSynchronize(stream));
    }
    ASSERT_GE(first_s, kMinModuli) << "the shape's first calls were never emulated";
    const std::vector<ozdgemm::test::zdouble> first = z.c.to_host();
    z.reset_c();
    const std::vector<unsigned long long> before = tally_now();
    behind_a_spin(stream, "ozdgemm_zgemm 4096^3", call);
    EXPECT_GE(grown_slot(before, tally_now()), kMinModuli) << "complex phi 0.5 is emulated";
    EXPECT_EQ(ozdgemm::test::differing(z.c.to_host(), first), 0);
  }
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(stream);
}

}  // namespace
