// The automatic moduli count on the GPU:
//   - bit identity with the host reference's auto path: the same chosen s (or the same "none")
//     and the same bits, over the phi families and the adversarial sets, both scaling modes,
//     targets native, max and a number of bits (n = 256..512: the host reference is O(s n^3));
//   - at n = 1024..4096, the chosen s meets its target on measured errors (a double-double
//     reference on sampled blocks of C): no worse than native cublasDgemm's measured error for
//     target native, <= 2^-b (|A||B|) for b bits, and no worse than native for max;
//   - the fallback: when no s meets the target, C equals native cublasDgemm bit for bit, in
//     both pointer modes, ozdgemm_dgemm_ex reports s = 0, and the caller's handle is unchanged.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "auto_fixture.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/auto_reference.hpp"
#include "support/auto_inputs.hpp"
#include "support/dd_reference.hpp"
#include "support/inputs.hpp"
#include "support/metrics.hpp"

namespace {

using namespace ozdgemm::test::choice;
using ozdgemm::test::auto_case;
using ozdgemm::test::auto_set;
using ozdgemm::test::host_matrix;
using ozdgemm::test::operand_pair;

// ---- Bit identity with the host reference --------------------------------------------------

struct identity_param {
  auto_case c;
  bool fast;
  int target;  // index into kTargets
  std::string name() const {
    return c.name + "_" + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
           std::to_string(c.k) + (fast ? "_fast_" : "_acc_") + kTargets[target].name;
  }
};

class AutoModuliIdentity : public AutoGpuTest,
                           public ::testing::WithParamInterface<identity_param> {};

TEST_P(AutoModuliIdentity, SameSAndSameBitsAsTheHostReference) {
  const identity_param& prm = GetParam();
  const auto_case& c = prm.c;
  const operand_pair in = ozdgemm::test::make_auto_inputs(c);
  const double alpha = 1.5, beta = -0.25;
  host_matrix c0 = ozdgemm::test::phi_matrix(c.m, c.n, 1.0, c.seed + 7);

  // Host reference.
  host_matrix ref = c0;
  const ozdgemm::detail::gemm_problem hp{
      c.m, c.n, c.k, ozdgemm::detail::operand_a(ozdgemm::detail::op_kind::n, in.a.ptr(), in.a.ld),
      ozdgemm::detail::operand_b(ozdgemm::detail::op_kind::n, in.b.ptr(), in.b.ld), ref.ptr(),
      ref.ld};
  const auto mode = prm.fast ? ozdgemm::detail::scaling_mode::fast
                             : ozdgemm::detail::scaling_mode::accurate;
  const ozdgemm::detail::moduli_choice hc =
      ozdgemm::detail::reference_dgemm_auto(hp, alpha, beta, mode, kTargets[prm.target].host);

  // GPU.
  device_problem d(in, c0);
  int s_used = -1;
  ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &alpha, d.a.ptr,
                             c.m, d.b.ptr, c.k, &beta, d.c.ptr, c.m,
                             auto_options(prm.fast ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE,
                                          kTargets[prm.target].accuracy),
                             &s_used),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<double> got = d.c.to_host();
  std::printf("[ auto ] %s: s = %d (host %d)%s\n", prm.name().c_str(), s_used, hc.s,
              hc.s == 0 ? " fallback" : "");
  ASSERT_EQ(s_used, hc.s) << "host predicted " << hc.predicted << " against " << hc.target;

  // s == 0: the host reference ran its FP64 stand-in; the GPU must have run cublasDgemm.
  const std::vector<double> want =
      hc.s == 0 ? native_result(handle_, d, c0, alpha, beta) : ref.data;
  int64_t diff = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (bits_of(got[i]) != bits_of(want[i]) && !(std::isnan(got[i]) && std::isnan(want[i])))
      ++diff;
  EXPECT_EQ(diff, 0) << "elements differing from the " << (hc.s == 0 ? "native" : "reference")
                     << " result";
}

std::vector<identity_param> identity_params() {
  std::vector<identity_param> v;
  // Every set, mode and target at 256 (square) ...
  for (const auto_case& c : issue_sets(256, 256, 256, 501))
    for (bool fast : {true, false})
      for (int t = 0; t < 3; ++t) v.push_back({c, fast, t});
  // ... and a rectangular 512-class shape (not a multiple of the padding) for target native.
  for (const auto_case& c : issue_sets(512, 392, 456, 901))
    for (bool fast : {true, false}) v.push_back({c, fast, 0});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Sets, AutoModuliIdentity, ::testing::ValuesIn(identity_params()),
                         [](const ::testing::TestParamInfo<identity_param>& i) {
                           return i.param.name();
                         });

// ---- Measured accuracy at n = 1024..4096 ------------------------------------------------------

// Errors on sampled blocks of C (double-double reference), both metrics.
struct sampled_errors {
  double rel = 0.0, scaled = 0.0;
};

class sampler {
 public:
  // 8 blocks of 16 x 16 entries spread over C (the first block holds row 0: the huge row).
  explicit sampler(const operand_pair& in) {
    const int64_t m = in.a.rows, n = in.b.cols, k = in.a.cols;
    for (int b = 0; b < kBlocks; ++b) {
      const int64_t i0 = (m - kSide) * b / (kBlocks - 1), j0 = (n - kSide) * (kBlocks - 1 - b) /
                                                                (kBlocks - 1);
      i0_[b] = i0;
      j0_[b] = j0;
      R_[b].assign(kSide * kSide, 0.0);
      ab_[b].assign(kSide * kSide, 0.0);
      ozdgemm::test::dd_gemm('N', 'N', kSide, kSide, k, 1.0, in.a.ptr() + i0, in.a.ld,
                             in.b.ptr() + j0 * in.b.ld, in.b.ld, 0.0, R_[b].data(), kSide);
      ozdgemm::test::abs_product('N', 'N', kSide, kSide, k, in.a.ptr() + i0, in.a.ld,
                                 in.b.ptr() + j0 * in.b.ld, in.b.ld, ab_[b].data(), kSide);
    }
  }

  sampled_errors measure(const std::vector<double>& C, int64_t ldc) const {
    sampled_errors e;
    for (int b = 0; b < kBlocks; ++b) {
      const double* cb = C.data() + j0_[b] * ldc + i0_[b];
      const auto rel = ozdgemm::test::max_rel_error(kSide, kSide, cb, ldc, R_[b].data(), kSide);
      const auto sc = ozdgemm::test::max_scaled_error(kSide, kSide, cb, ldc, R_[b].data(), kSide,
                                                      ab_[b].data(), kSide);
      e.rel = std::max(e.rel, rel.zero_denominator_mismatches + rel.nonfinite_mismatches != 0
                                  ? INFINITY
                                  : rel.max);
      e.scaled = std::max(e.scaled, sc.zero_denominator_mismatches + sc.nonfinite_mismatches != 0
                                        ? INFINITY
                                        : sc.max);
    }
    return e;
  }

 private:
  static constexpr int kBlocks = 8;
  static constexpr int64_t kSide = 16;
  int64_t i0_[kBlocks], j0_[kBlocks];
  std::vector<double> R_[kBlocks], ab_[kBlocks];
};

struct accuracy_param {
  auto_case c;
  std::string name() const { return c.name + "_n" + std::to_string(c.n); }
};

class AutoModuliAccuracy : public AutoGpuTest,
                           public ::testing::WithParamInterface<accuracy_param> {};

TEST_P(AutoModuliAccuracy, ChosenSMeetsTheTargetOnMeasuredErrors) {
  const auto_case& c = GetParam().c;
  const operand_pair in = ozdgemm::test::make_auto_inputs(c);
  const sampler smp(in);
  host_matrix c0 = ozdgemm::test::make_matrix(c.m, c.n);
  device_problem d(in, c0);
  const std::vector<double> native = native_result(handle_, d, c0, 1.0, 0.0);
  const sampled_errors ne = smp.measure(native, c.m);
  std::printf("[ auto ] %s native: rel %.3g scaled %.3g\n", GetParam().name().c_str(), ne.rel,
              ne.scaled);
  const double one = 1.0, zero = 0.0;
  for (bool fast : {true, false})
    for (const target_spec& t : kTargets) {
      int s_used = -1;
      d.reset_c(c0);
      ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &one, d.a.ptr,
                                 c.m, d.b.ptr, c.k, &zero, d.c.ptr, c.m,
                                 auto_options(fast ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE,
                                              t.accuracy),
                                 &s_used),
                OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaDeviceSynchronize());
      const std::vector<double> got = d.c.to_host();
      const sampled_errors e = smp.measure(got, c.m);
      std::printf("[ auto ] %s %s %s: s = %d rel %.3g scaled %.3g\n", GetParam().name().c_str(),
                  fast ? "fast" : "accurate", t.name, s_used, e.rel, e.scaled);
      if (s_used == 0) {  // the fallback: native bit for bit
        EXPECT_EQ(std::memcmp(got.data(), native.data(), got.size() * sizeof(double)), 0);
        continue;
      }
      if (t.host.kind == ozdgemm::detail::accuracy_kind::bits) {
        EXPECT_LE(e.scaled, std::ldexp(1.0, -t.host.bits)) << t.name;
      } else {  // native and max: no worse than native DGEMM, in both metrics
        EXPECT_LE(e.scaled, ne.scaled) << t.name;
        EXPECT_LE(e.rel, ne.rel) << t.name;
      }
    }
}

std::vector<accuracy_param> accuracy_params() {
  std::vector<accuracy_param> v;
  for (int64_t n : {int64_t{1024}, int64_t{4096}})
    for (const auto_case& c : issue_sets(n, n, n, 7001 + n)) v.push_back({c});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Sets, AutoModuliAccuracy, ::testing::ValuesIn(accuracy_params()),
                         [](const ::testing::TestParamInfo<accuracy_param>& i) {
                           return i.param.name();
                         });

// ---- The certified moduli count (OZDGEMM_MODULI_CERTIFIED) -------------------------------
// (1) Bit identity with the host reference (reference_dgemm_auto with certified = true, i.e.
// certified_choose_moduli with kCertBands bands): the same s, hence the same worst certified
// ratios on both sides up to the target, and the same bits of C, over the issue's sets, the
// anti-aligned inputs that defeat the model, both modes and three targets. (2) The guarantee
// itself at n = 1024: on sampled blocks of C, every element obeys
// |C - AB| <= target (|A||B|)_ij + u |C_ij| (double-double reference).

class CertifiedModuliIdentity : public AutoGpuTest,
                                public ::testing::WithParamInterface<certified_param> {};

TEST_P(CertifiedModuliIdentity, SameSAndSameBitsAsTheHostReference) {
  const certified_param& prm = GetParam();
  const auto_case& c = prm.cc.c;
  const double alpha = -0.75, beta = 0.5;
  const certified_reference h = host_certified(prm, alpha, beta);
  const ozdgemm::detail::moduli_choice& hc = h.choice;
  const host_matrix& c0 = h.c0;
  device_problem d(h.in, c0);
  int s_used = -1;
  ASSERT_EQ(
      ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &alpha, d.a.ptr, c.m,
                       d.b.ptr, c.k, &beta, d.c.ptr, c.m,
                       certified_options(prm.fast ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE,
                                         kTargets[prm.target].accuracy),
                       &s_used),
      OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<double> got = d.c.to_host();
  std::printf("[ certified ] %s: s = %d (host %d)%s\n", prm.name().c_str(), s_used, hc.s,
              hc.s == 0 ? " fallback" : "");
  ASSERT_EQ(s_used, hc.s) << "host bound " << hc.predicted << " against " << hc.target;
  const std::vector<double> want =
      hc.s == 0 ? native_result(handle_, d, c0, alpha, beta) : h.ref.data;
  int64_t diff = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (bits_of(got[i]) != bits_of(want[i]) && !(std::isnan(got[i]) && std::isnan(want[i]))) ++diff;
  EXPECT_EQ(diff, 0) << "elements differing from the " << (hc.s == 0 ? "native" : "reference")
                     << " result";
}

INSTANTIATE_TEST_SUITE_P(Sets, CertifiedModuliIdentity,
                         ::testing::ValuesIn(certified_params(3001, 4001)),
                         [](const ::testing::TestParamInfo<certified_param>& i) {
                           return i.param.name();
                         });

class CertifiedModuliGuarantee : public AutoGpuTest,
                                 public ::testing::WithParamInterface<certified_case> {};

TEST_P(CertifiedModuliGuarantee, EveryElementWithinTheTarget) {
  const certified_case& cc = GetParam();
  const auto_case& c = cc.c;
  const operand_pair in = cc.inputs();
  host_matrix c0 = ozdgemm::test::make_matrix(c.m, c.n);
  device_problem d(in, c0);
  const std::vector<double> native = native_result(handle_, d, c0, 1.0, 0.0);
  // The sampled blocks of C (those of `sampler`, block 0 holds row 0: the anti-aligned row).
  constexpr int kBlocks = 8;
  constexpr int64_t kSide = 16;
  std::vector<double> R[kBlocks], ab[kBlocks];
  int64_t i0[kBlocks], j0[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    i0[b] = (c.m - kSide) * b / (kBlocks - 1);
    j0[b] = (c.n - kSide) * (kBlocks - 1 - b) / (kBlocks - 1);
    R[b].assign(kSide * kSide, 0.0);
    ab[b].assign(kSide * kSide, 0.0);
    ozdgemm::test::dd_gemm('N', 'N', kSide, kSide, c.k, 1.0, in.a.ptr() + i0[b], in.a.ld,
                           in.b.ptr() + j0[b] * in.b.ld, in.b.ld, 0.0, R[b].data(), kSide);
    ozdgemm::test::abs_product('N', 'N', kSide, kSide, c.k, in.a.ptr() + i0[b], in.a.ld,
                               in.b.ptr() + j0[b] * in.b.ld, in.b.ld, ab[b].data(), kSide);
  }
  // max over the samples of (|C - R| - u |C|) / (|A||B|): the certified part of the error.
  auto excess = [&](const std::vector<double>& C) {
    double worst = 0.0;
    for (int b = 0; b < kBlocks; ++b)
      for (int64_t jj = 0; jj < kSide; ++jj)
        for (int64_t ii = 0; ii < kSide; ++ii) {
          const double got = C[(j0[b] + jj) * c.m + i0[b] + ii];
          const double r = R[b][jj * kSide + ii], w = ab[b][jj * kSide + ii];
          if (!std::isfinite(got)) return static_cast<double>(INFINITY);
          const double e = std::fabs(got - r) - std::ldexp(std::fabs(got), -53);
          if (w == 0.0) {
            if (e > 0.0) return static_cast<double>(INFINITY);
            continue;
          }
          worst = std::max(worst, e / w);
        }
    return worst;
  };
  const double target = std::sqrt(static_cast<double>(c.k)) * std::ldexp(1.0, -53);
  const double one = 1.0, zero = 0.0;
  for (bool fast : {true, false}) {
    const ozdgemm_scaling_t sc = fast ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE;
    int s_cert = -1, s_auto = -1;
    d.reset_c(c0);
    ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &one, d.a.ptr, c.m,
                               d.b.ptr, c.k, &zero, d.c.ptr, c.m,
                               certified_options(sc, OZDGEMM_ACCURACY_NATIVE), &s_cert),
              OZDGEMM_STATUS_SUCCESS);
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<double> got = d.c.to_host();
    d.reset_c(c0);
    ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &one, d.a.ptr, c.m,
                               d.b.ptr, c.k, &zero, d.c.ptr, c.m,
                               auto_options(sc, OZDGEMM_ACCURACY_NATIVE), &s_auto),
              OZDGEMM_STATUS_SUCCESS);
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<double> got_auto = d.c.to_host();
    const double ex = excess(got), ex_auto = excess(got_auto), ex_native = excess(native);
    std::printf(
        "[ certified ] %s%s n%lld %s: certified s = %d, excess/target %.3g; auto s = %d, "
        "excess/target %.3g; native excess/target %.3g\n",
        cc.anti ? "anti_" : "", c.name.c_str(), static_cast<long long>(c.n),
        fast ? "fast" : "accurate", s_cert, ex / target, s_auto, ex_auto / target,
        ex_native / target);
    if (s_cert == 0) {  // the fallback: native bit for bit
      EXPECT_EQ(std::memcmp(got.data(), native.data(), got.size() * sizeof(double)), 0);
      continue;
    }
    // The dd reference errs by about 2^-100 (|A||B|): far below the target.
    EXPECT_LE(ex, target * (1.0 + 1e-9)) << (fast ? "fast" : "accurate");
  }
}

std::vector<certified_case> guarantee_params() {
  std::vector<certified_case> v;
  for (const auto_case& c : issue_sets(1024, 1024, 1024, 9001)) v.push_back({c, false});
  for (double phi : {1.0, 2.0})
    v.push_back({{"phi" + std::to_string(static_cast<int>(phi)), auto_set::phi, phi, 1024, 1024,
                  1024, 9501 + static_cast<uint64_t>(phi)},
                 true});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Sets, CertifiedModuliGuarantee, ::testing::ValuesIn(guarantee_params()),
                         [](const ::testing::TestParamInfo<certified_case>& i) {
                           return (i.param.anti ? "anti_" : "") + i.param.c.name;
                         });

// ---- The fallback --------------------------------------------------------------------------

// phi = 8: no s <= 20 meets native's bound (host measurements, docs/auto.md). The call
// must give native cublasDgemm's bits, in both pointer modes, report s = 0, and leave the
// handle's pointer mode and stream as they were.
class AutoModuliApi : public AutoGpuTest {};

TEST_F(AutoModuliApi, FallbackIsNativeBitForBitInBothPointerModes) {
  const auto_case c{"phi8", auto_set::phi, 8.0, 300, 200, 256, 4242};
  const operand_pair in = ozdgemm::test::make_auto_inputs(c);
  const host_matrix c0 = ozdgemm::test::phi_matrix(c.m, c.n, 1.0, 99);
  device_problem d(in, c0);
  const double alpha = 0.75, beta = 2.0;
  const std::vector<double> native = native_result(handle_, d, c0, alpha, beta);
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  device_buffer<double> scalars(std::vector<double>{alpha, beta});
  for (bool device_mode : {false, true}) {
    for (ozdgemm_scaling_t mode : {OZDGEMM_SCALING_FAST, OZDGEMM_SCALING_ACCURATE}) {
      ASSERT_CUBLAS(cublasSetPointerMode(
          handle_, device_mode ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
      d.reset_c(c0);
      int s_used = -1;
      ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k,
                                 device_mode ? scalars.ptr : &alpha, d.a.ptr, c.m, d.b.ptr, c.k,
                                 device_mode ? scalars.ptr + 1 : &beta, d.c.ptr, c.m,
                                 auto_options(mode, OZDGEMM_ACCURACY_NATIVE), &s_used),
                OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaStreamSynchronize(stream));
      EXPECT_EQ(s_used, 0);
      const std::vector<double> got = d.c.to_host();
      EXPECT_EQ(std::memcmp(got.data(), native.data(), got.size() * sizeof(double)), 0)
          << (device_mode ? "device" : "host") << " pointer mode";
      // ozdgemm_dgemm (no out-parameter) takes the same path.
      d.reset_c(c0);
      ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k,
                              device_mode ? scalars.ptr : &alpha, d.a.ptr, c.m, d.b.ptr, c.k,
                              device_mode ? scalars.ptr + 1 : &beta, d.c.ptr, c.m,
                              auto_options(mode, OZDGEMM_ACCURACY_NATIVE)),
                OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaStreamSynchronize(stream));
      const std::vector<double> got2 = d.c.to_host();
      EXPECT_EQ(std::memcmp(got2.data(), native.data(), got2.size() * sizeof(double)), 0);
      cublasPointerMode_t pm;
      cudaStream_t st;
      ASSERT_CUBLAS(cublasGetPointerMode(handle_, &pm));
      ASSERT_CUBLAS(cublasGetStream(handle_, &st));
      EXPECT_EQ(pm, device_mode ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
      EXPECT_EQ(st, stream);
    }
  }
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(stream);
}

// A fixed s reports itself; invalid accuracy values are rejected before anything runs.
TEST_F(AutoModuliApi, FixedSReportedAndInvalidTargetRejected) {
  const auto_case c{"phi1", auto_set::phi, 1.0, 64, 64, 64, 11};
  const operand_pair in = ozdgemm::test::make_auto_inputs(c);
  const host_matrix c0 = ozdgemm::test::make_matrix(c.m, c.n);
  device_problem d(in, c0);
  const double one = 1.0, zero = 0.0;
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = 9;
  int s_used = -1;
  ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &one, d.a.ptr, c.m,
                             d.b.ptr, c.k, &zero, d.c.ptr, c.m, o, &s_used),
            OZDGEMM_STATUS_SUCCESS);
  EXPECT_EQ(s_used, 9);
  for (int bad : {-2, 201, 1000}) {
    o = auto_options(OZDGEMM_SCALING_FAST, bad);
    s_used = -1;
    EXPECT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &one, d.a.ptr,
                               c.m, d.b.ptr, c.k, &zero, d.c.ptr, c.m, o, &s_used),
              OZDGEMM_STATUS_INVALID_VALUE)
        << bad;
    EXPECT_EQ(s_used, 0);
  }
  ASSERT_CUDA(cudaDeviceSynchronize());
}

}  // namespace
