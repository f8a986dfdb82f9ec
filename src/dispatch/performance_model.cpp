#include "dispatch/performance_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/gemm_problem.hpp"

namespace ozdgemm::detail {
namespace {

// H200 rates measured with bench/ozdgemm_bench (docs/performance.md), chosen on the side that
// favours native.
constexpr double kNativeFp64 = 57e12;        // cublasDgemm, flop/s, n >= 2048
constexpr double kNativeLatency = 10e-6;     // s
constexpr double kInt8 = 1.35e15;            // INT8 GEMM multiply-adds x 2 per second
constexpr double kPrepBandwidth = 2.1e12;    // scaling + residue passes, bytes/s
constexpr double kCrtBandwidth = 2.3e12;     // reduction + CRT pass, bytes/s
constexpr double kEmulationLatency = 60e-6;  // ~12 launches + cuBLAS setup, s
constexpr double kPcie = 20e9;               // pinned host <-> device, bytes/s per direction
constexpr double kCpuBlas = 1.0e11;          // host BLAS flop/s: generous on purpose

// x rounded up to the INT8 padding, in double: the _64 cuBLAS entries pass sizes up to 2^63 - 1,
// where round_up's integer sum would overflow (found by tests/fuzz).
double padded(int64_t x) { return std::ceil(static_cast<double>(x) / kPad) * kPad; }

double emulation_seconds(int64_t m, int64_t n, int64_t k, int s, scaling_mode mode, bool reads_c) {
  const double mp = padded(m), np = padded(n), kp = padded(k);
  const double gemms = s * 2.0 * mp * np * kp / kInt8;
  // Each input element: 8-byte reads in every pass (3 passes) and s residue bytes written.
  double prep = (static_cast<double>(m) + n) * k * (3 * 8.0 + s) / kPrepBandwidth;
  if (mode == scaling_mode::accurate)
    prep += 2.0 * mp * np * kp / kInt8 + 8.0 * mp * np / kPrepBandwidth;
  const double crt =
      static_cast<double>(m) * n * (4.0 * s + 8.0 + (reads_c ? 8.0 : 0.0)) / kCrtBandwidth;
  return kEmulationLatency + gemms + prep + crt;
}

// The emulation's time on the device, the per-call choice included.
double emulated_seconds(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                        bool reads_c) {
  if (moduli.is_fixed()) return emulation_seconds(m, n, k, moduli.count(), mode, reads_c);
  // A conservative s (the measured choices are 15-17 for phi <= 2) and the one
  // device-to-host copy + stream synchronisation of the choice.
  constexpr double kAutoChoiceLatency = 30e-6;  // s
  double t = kAutoChoiceLatency;
  // Certified: also 6 band INT8 GEMMs, the band planes (3 bytes written per input element after
  // an 8-byte read, twice: planes and norms) and per element of C six 64-bit accumulations of an
  // INT32 plane and the ratio pass (about 30 bytes' worth).
  if (moduli.is_certified()) {
    const double mp = padded(m), np = padded(n), kp = padded(k);
    t += 6 * 2.0 * mp * np * kp / kInt8 +
         (static_cast<double>(m) + n) * k * (2 * 8.0 + 3) / kPrepBandwidth +
         static_cast<double>(m) * n * (6 * 20.0 + 30) / kCrtBandwidth;
  }
  return t + emulation_seconds(m, n, k, kAutoModuliEstimate, mode, reads_c);
}

}  // namespace

prediction predict_device(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                          bool reads_c) {
  const double native = kNativeLatency + 2.0 * m * n * k / kNativeFp64;
  return {native * 1e3, emulated_seconds(m, n, k, moduli, mode, reads_c) * 1e3};
}

prediction predict_host(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                        bool reads_c) {
  const double cpu = 2.0 * m * n * k / kCpuBlas;
  const double bytes = 8.0 * (static_cast<double>(m) * k + static_cast<double>(k) * n +
                              static_cast<double>(m) * n * (reads_c ? 2 : 1));
  return {cpu * 1e3, (bytes / kPcie + emulated_seconds(m, n, k, moduli, mode, reads_c)) * 1e3};
}

}  // namespace ozdgemm::detail
