// The performance model on every GPU of the published table (dispatch/gpu_rates.hpp): which
// entry a device name finds, that the H200's prior is the model measured on it, the estimate
// for a GPU the table does not know, the bounds on calibrated rates, and, per GPU, the
// emulate-or-native decisions of auto mode for square, rank-k and tall-skinny shapes against a
// roofline written out here from the GPU's published peaks.
#include "dispatch/gpu_rates.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/decision.hpp"

namespace ozdgemm::test {
namespace {

using detail::gpu_identity;
using detail::gpu_rates;
using detail::gpu_spec;

gpu_identity named(const char* name, int major, int minor = 0) {
  gpu_identity id;
  id.name = name;
  id.cc_major = major;
  id.cc_minor = minor;
  return id;
}

const gpu_spec& spec_of(const char* name, int major, int minor = 0) {
  const gpu_spec* s = detail::find_published(named(name, major, minor));
  if (s == nullptr) throw std::runtime_error(std::string("not in the table: ") + name);
  return *s;
}

TEST(PublishedRates, DeviceNamesFindTheirOwnEntry) {
  struct name_case {
    const char* device_name;
    int major;
    const char* label;
  };
  for (const name_case& c : std::vector<name_case>{
           {"NVIDIA H200", 9, "H200"},
           {"NVIDIA H20", 9, "H20"},
           {"NVIDIA GH200 480GB", 9, "GH200"},
           {"NVIDIA H100 PCIe", 9, "H100 PCIe"},
           {"NVIDIA H100 80GB HBM3", 9, "H100 SXM"},
           {"NVIDIA A100-SXM4-80GB", 8, "A100"},
           {"NVIDIA L40S", 8, "L40S"},
           {"NVIDIA L40", 8, "L40"},
           {"NVIDIA GeForce RTX 4090", 8, "GeForce RTX 4090"},
           {"NVIDIA B200", 10, "B200"},
           {"NVIDIA GB200", 10, "GB200"},
           {"NVIDIA B300 SXM6 AC", 10, "B300"},
           {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 12, "RTX PRO 6000 Blackwell"},
       }) {
    const gpu_spec* s = detail::find_published(named(c.device_name, c.major));
    ASSERT_NE(s, nullptr) << c.device_name;
    EXPECT_STREQ(s->label, c.label) << c.device_name;
  }
  // A name of the table on a device of another architecture is not that GPU.
  EXPECT_EQ(detail::find_published(named("NVIDIA H200", 8)), nullptr);
  EXPECT_EQ(detail::find_published(named("NVIDIA Tesla V100-SXM2-32GB", 7)), nullptr);
}

// The efficiencies are the H200's: its prior is the model that was measured on it.
TEST(PublishedRates, TheH200PriorIsTheModelMeasuredOnIt) {
  const gpu_rates r = detail::prior_rates(spec_of("NVIDIA H200", 9));
  EXPECT_NEAR(r.fp64, 57e12, 57e12 * 1e-12);
  EXPECT_NEAR(r.int8, 1.35e15, 1.35e15 * 1e-12);
  EXPECT_NEAR(r.prep_bw, 2.1e12, 2.1e12 * 1e-12);
  EXPECT_NEAR(r.crt_bw, 2.3e12, 2.3e12 * 1e-12);
  EXPECT_NEAR(r.host_link, 20e9, 20e9 * 1e-12);
  EXPECT_EQ(r.cpu_blas, 1e11);
  EXPECT_NE(r.source.find("H200"), std::string::npos);
}

// A GPU the table does not know gets rates from its SM count and clock; on an H100's numbers
// (132 SMs, 1.98 GHz, 3.35 TB/s) they land near the table's H100.
TEST(PublishedRates, AnUnknownGpuOfAKnownArchitectureIsEstimated) {
  gpu_identity id = named("NVIDIA H999 prototype", 9);
  id.sm_count = 132;
  id.sm_clock_hz = 1.83e9;
  id.mem_bw = 3.35e12;
  ASSERT_EQ(detail::find_published(id), nullptr);
  const gpu_rates est = detail::prior_for(id);
  const gpu_rates h100 = detail::prior_rates(spec_of("NVIDIA H100 80GB HBM3", 9));
  EXPECT_NEAR(est.fp64 / h100.fp64, 1.0, 0.1);
  EXPECT_NEAR(est.int8 / h100.int8, 1.0, 0.1);
  EXPECT_NEAR(est.prep_bw / h100.prep_bw, 1.0, 1e-9);
  EXPECT_FALSE(est.source.empty());

  // An architecture it does not know either: no rates, and auto mode keeps every call native.
  gpu_identity odd = named("NVIDIA Thor", 11);
  odd.sm_count = 20;
  odd.sm_clock_hz = 1.5e9;
  odd.mem_bw = 0.27e12;
  const gpu_rates none = detail::prior_for(odd);
  EXPECT_TRUE(none.source.empty());
  const detail::config cfg{};
  const detail::route r = detail::decide_route(cfg, detail::call_site::device, nullptr, 16384,
                                               16384, 16384, false, none);
  EXPECT_FALSE(r.emulate) << r.reason;
}

TEST(PublishedRates, CalibrationOutsideTheBoundsIsReplacedByThePrior) {
  const gpu_rates prior = detail::prior_rates(spec_of("NVIDIA H200", 9));
  gpu_rates m = prior;
  m.fp64 = prior.fp64 * 1.2;    // plausible: kept
  m.int8 = prior.int8 * 0.1;    // a busy or throttled GPU: replaced
  m.crt_bw = prior.crt_bw * 3;  // faster than the memory: replaced
  std::string clamped;
  const gpu_rates b = detail::bounded_calibration(m, prior, &clamped);
  EXPECT_EQ(b.fp64, m.fp64);
  EXPECT_EQ(b.int8, prior.int8);
  EXPECT_EQ(b.crt_bw, prior.crt_bw);
  EXPECT_EQ(b.prep_bw, m.prep_bw);
  EXPECT_NE(clamped.find("INT8"), std::string::npos);
  EXPECT_NE(clamped.find("CRT"), std::string::npos);
  EXPECT_EQ(clamped.find("FP64"), std::string::npos);
}

// What calibration measured reaches the model with the emulation's side at the margin, FP64
// and the CPU BLAS as measured: the model errs towards native.
TEST(PublishedRates, CalibratedRatesKeepAMarginOnTheEmulationSide) {
  const gpu_rates m = detail::prior_rates(spec_of("NVIDIA H200", 9));
  const gpu_rates r = detail::with_margin(m);
  EXPECT_EQ(r.fp64, m.fp64);
  EXPECT_EQ(r.cpu_blas, m.cpu_blas);
  for (double gpu_rates::*f :
       {&gpu_rates::int8, &gpu_rates::prep_bw, &gpu_rates::crt_bw, &gpu_rates::host_link})
    EXPECT_DOUBLE_EQ(r.*f, m.*f * detail::kCalibrationMargin);
  EXPECT_LT(detail::kCalibrationMargin, 1.0);
}

// ---------------------------------------------------------------------------------------------
// Decisions per GPU. The roofline, from the published peaks and the H200's efficiencies, as
// the model should count the emulation at the default s = 14 with accurate scaling: 14 INT8
// GEMMs and the bound GEMM at the INT8 rate, three 8-byte reads and 14 bytes written per input
// element, 4 s + 8 bytes per output element, and the fixed launch costs.

struct roofline {
  double native_s, emulated_s;
};

roofline roofline_of(const gpu_spec& g, double m, double n, double k) {
  const double fp64 = g.fp64 * 57.0 / 67.0, int8 = g.int8 * 1.35 / 1.979;
  const double prep = g.mem_bw * 2.1 / 4.8, crt = g.mem_bw * 2.3 / 4.8;
  const auto pad = [](double x) { return std::ceil(x / 16) * 16; };
  const double mnk = pad(m) * pad(n) * pad(k);
  const double s = 14;
  const double emulated = 60e-6 + (s + 1) * 2 * mnk / int8 + (m + n) * k * (24 + s) / prep +
                          8 * pad(m) * pad(n) / prep + m * n * (4 * s + 8) / crt;
  return {10e-6 + 2 * m * n * k / fp64, emulated};
}

struct shape {
  int64_t m, n, k;
};

std::vector<shape> shapes() {
  std::vector<shape> out;
  for (int64_t s : {512, 1024, 2048, 4096, 8192, 16384}) out.push_back({s, s, s});  // square
  for (int64_t k : {256, 512, 1024, 2048}) out.push_back({16384, 16384, k});        // rank-k
  for (int64_t k : {256, 1024, 4096}) out.push_back({65536, 256, k});               // tall-skinny
  return out;
}

// Wherever the roofline is clear (emulation 25% faster, or slower), auto mode must agree; in
// between either answer is allowed (the model's margin sits there). Returns the shapes emulated.
std::vector<shape> check_decisions(const char* device_name, int major, int minor = 0) {
  const gpu_spec& g = spec_of(device_name, major, minor);
  const gpu_rates rates = detail::prior_rates(g);
  // Auto mode, 5% margin, and the roofline's s = 14 and accurate scaling (the default's
  // per-call choice adds its own costs, checked in performance_model_test).
  detail::config cfg{};
  cfg.moduli = detail::moduli_setting::fixed(14);
  cfg.scaling = detail::scaling_mode::accurate;
  std::vector<shape> emulated;
  for (const shape& s : shapes()) {
    const roofline r = roofline_of(g, s.m, s.n, s.k);
    const detail::route d =
        detail::decide_route(cfg, detail::call_site::device, nullptr, s.m, s.n, s.k, false, rates);
    SCOPED_TRACE(testing::Message() << g.label << " " << s.m << "x" << s.n << "x" << s.k
                                    << ": roofline native " << r.native_s * 1e3 << " ms, emulated "
                                    << r.emulated_s * 1e3 << " ms; " << d.reason);
    // The model's own prediction tracks the roofline within 10%.
    EXPECT_NEAR(d.predicted.native_ms / (r.native_s * 1e3), 1.0, 0.1);
    EXPECT_NEAR(d.predicted.emulated_ms / (r.emulated_s * 1e3), 1.0, 0.1);
    if (std::min({s.m, s.n, s.k}) < cfg.min_dim) {
      EXPECT_FALSE(d.emulate);
    } else if (r.emulated_s * 1.25 <= r.native_s) {
      EXPECT_TRUE(d.emulate) << "the roofline says emulation is 25% faster or more";
    } else if (r.emulated_s >= r.native_s) {
      EXPECT_FALSE(d.emulate) << "the roofline says native is faster";
    }
    if (d.emulate) emulated.push_back(s);
  }
  return emulated;
}

bool has(const std::vector<shape>& v, int64_t m, int64_t n, int64_t k) {
  return std::any_of(v.begin(), v.end(),
                     [&](const shape& s) { return s.m == m && s.n == n && s.k == k; });
}

// FP64-poor GPUs: the INT8 units outrun FP64 by two orders of magnitude, so every square call
// from 1024 up is emulated.
TEST(GpuModelH20, EmulatesFromSmallSizes) {
  const auto e = check_decisions("NVIDIA H20", 9);
  EXPECT_TRUE(has(e, 1024, 1024, 1024));
  EXPECT_TRUE(has(e, 16384, 16384, 256));
}
TEST(GpuModelRtx4090, EmulatesFromSmallSizes) {
  const auto e = check_decisions("NVIDIA GeForce RTX 4090", 8, 9);
  EXPECT_TRUE(has(e, 1024, 1024, 1024));
  EXPECT_TRUE(has(e, 65536, 256, 4096));
}
TEST(GpuModelL40s, EmulatesFromSmallSizes) {
  const auto e = check_decisions("NVIDIA L40S", 8, 9);
  EXPECT_TRUE(has(e, 1024, 1024, 1024));
}
TEST(GpuModelRtxPro6000, EmulatesFromSmallSizes) {
  const auto e = check_decisions("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 12);
  EXPECT_TRUE(has(e, 2048, 2048, 2048));
}
// Blackwell Ultra: FP64 cut to about 1.25 TFLOP/s and INT8 to about 0.15 POP/s; the INT8
// units still outrun FP64 several times over at large sizes.
TEST(GpuModelB300, EmulatesLargeCalls) {
  const auto e = check_decisions("NVIDIA B300 SXM6 AC", 10, 3);
  EXPECT_TRUE(has(e, 8192, 8192, 8192));
}
// FP64 tensor-core GPUs: emulation pays only for large calls.
TEST(GpuModelA100, EmulatesOnlyLargeCalls) {
  const auto e = check_decisions("NVIDIA A100-SXM4-80GB", 8);
  EXPECT_FALSE(has(e, 1024, 1024, 1024));
  EXPECT_TRUE(has(e, 16384, 16384, 16384));
}
TEST(GpuModelH100Pcie, EmulatesOnlyLargeCalls) {
  const auto e = check_decisions("NVIDIA H100 PCIe", 9);
  EXPECT_FALSE(has(e, 2048, 2048, 2048));
  EXPECT_TRUE(has(e, 16384, 16384, 16384));
}
TEST(GpuModelGh200, EmulatesOnlyLargeCalls) {
  const auto e = check_decisions("NVIDIA GH200 480GB", 9);
  EXPECT_FALSE(has(e, 2048, 2048, 2048));
  EXPECT_TRUE(has(e, 16384, 16384, 16384));
}
TEST(GpuModelB200, EmulatesFromMidSizes) {
  const auto e = check_decisions("NVIDIA B200", 10);
  EXPECT_FALSE(has(e, 512, 512, 512));
  EXPECT_TRUE(has(e, 8192, 8192, 8192));
}

}  // namespace
}  // namespace ozdgemm::test
