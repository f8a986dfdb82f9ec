#include "dispatch/performance_model.hpp"

#include <cmath>

#include "core/certified_bound.hpp"
#include "core/gemm_problem.hpp"

namespace ozdgemm::detail {
namespace {

// Fixed costs, measured on the H200 and taken for every GPU: a kernel launch and cuBLAS's
// set-up cost about the same everywhere, and both are small next to the calls auto mode
// emulates.
constexpr double kNativeLatency = 10e-6;     // s
constexpr double kEmulationLatency = 60e-6;  // ~12 launches + cuBLAS setup, s
// The automatic count's one device-to-host copy and stream synchronisation; the certified
// count's chooser kernel, which the host does not wait for (engine/speculation.hpp).
constexpr double kChoiceLatency = 30e-6;  // s
constexpr double kChooserLatency = 5e-6;  // s
// The certified count's ratio pass (kernels/certify.cu), per element of C: its filter (about 10
// FP64 operations) and its loads, and the chooser. On an H100 the pass took 63 us at 4096^3
// (3.8 ps per element) and 167 us at 8192^3 (2.5 ps), the chooser 6 (bench/results/default,
// run 16).
constexpr double kRatioSecondsPerElement = 3.5e-12;
constexpr double kRatioFlopsPerElement = 10.0;
// The certificate's work in the passes over A and B (the l1 norms beside the scan's statistics,
// the band codes in the residue pass, the band drops and exponents of every s): at 4096^3 on an
// H100 116 us over the fixed count's passes (run 15; 109 in run 16), the time of 5 bytes per
// input element at the preparation rate.
constexpr double kCertPrepBytes = 5.0;

// The batched engine's work per matrix against the single call's model without its fixed cost:
// on an H100 at s = 14 (bench/results/batched, run 4, 1322a8e) it took 2.9, 11.1 and 43.6 us per
// matrix at 128^3, 256^3 and 512^3 (256, 128 and 64 matrices), 1.77, 1.66 and 1.55 times what
// emulation_seconds gives them less kEmulationLatency: its passes over small matrices do not
// reach the bandwidth of large ones. The slow end, which favours native. Complex batches (the
// embedding's real batch, the packs and the epilogue; run 5, 838c6b4) took 8.1 and 32.2 us per
// matrix at 128^3 and 256^3, 1.40 and 1.37 times the model's terms: their embedded matrices
// are four times larger.
constexpr double kEnginePassFactor = 1.8;
constexpr double kComplexEnginePassFactor = 1.45;

// x rounded up to the INT8 padding, in double: the _64 cuBLAS entries pass sizes up to 2^63 - 1,
// where round_up's integer sum would overflow (found by tests/fuzz).
double padded(int64_t x) { return std::ceil(static_cast<double>(x) / kPad) * kPad; }

double emulation_seconds(int64_t m, int64_t n, int64_t k, int s, scaling_mode mode, bool reads_c,
                         const gpu_rates& r, bool karatsuba) {
  const double mp = padded(m), np = padded(n), kp = padded(k);
  double gemms = s * 2.0 * mp * np * kp / r.int8;
  // The Karatsuba form: three products of the embedding's quarters instead of four. Per modulus
  // it also sums the residues of the halves of A' and of B* (3 bytes per element of m x k' and
  // n' x k' at the preparation rate), and its CRT reads three INT32 products per complex element
  // instead of two (4 more bytes per element of m x n'). On an H100 at ZGEMM 4096^3, s = 15, the
  // sums took 0.54 ms and the CRT 1.26 ms, about the real CRT's price alone; the 8 bytes per real
  // element and modulus priced before (fitted to the H200's times of bench/results/zgemm run 7,
  // when the form had a combination pass of its own) came to 1.9 ms over it, 0.7 ms more than
  // these terms (bench/results/default, run 17).
  if (karatsuba) {
    const double kh = kp / 2, nh = np / 2;
    gemms = 0.75 * gemms + s * (3.0 * (mp + nh) * kh / r.prep_bw + 4.0 * mp * nh / r.crt_bw);
  }
  // Each input element: 8-byte reads in every pass (3 passes) and s residue bytes written. The
  // Karatsuba form's passes read the complex operands themselves, m k + k n / 2 real values of
  // the embedding m x n x k (its B holds each entry of B twice): on an H100 its scans and
  // residue passes took twice a real m x (k/2) operand's time for each operand, not three
  // times in all (ZGEMM 4096^3, bench/results/default, run 16).
  const double inputs = karatsuba ? static_cast<double>(m) * k + static_cast<double>(k) * n / 2
                                  : (static_cast<double>(m) + n) * k;
  double prep = inputs * (3 * 8.0 + s) / r.prep_bw;
  if (mode == scaling_mode::accurate)
    prep += 2.0 * mp * np * kp / r.int8 + 8.0 * mp * np / r.prep_bw;
  const double crt =
      static_cast<double>(m) * n * (4.0 * s + 8.0 + (reads_c ? 8.0 : 0.0)) / r.crt_bw;
  return kEmulationLatency + gemms + prep + crt;
}

// The per-call choice's own cost: auto, one device-to-host copy and stream synchronisation;
// certified, the chooser kernel and kCertBands (kCertBands + 1) / 2 band INT8 GEMMs, the
// certificate's work in the passes over the inputs (kCertPrepBytes; as a speculated count, the
// default of eager calls, runs it: a count chosen on the host writes the band planes in a pass
// of its own, which is not priced), per element of C a 64-bit accumulation of an INT32
// plane per band GEMM where k spans several k-blocks (with one, the INT32 sums are read as they
// are), and the ratio pass: one evaluation of its filter per element once the first elements
// have settled the counts below the chosen one, modelled as a time per element plus its FP64
// work at the GPU's rate, which dominates where FP64 is weak.
double choice_seconds(int64_t m, int64_t n, int64_t k, moduli_setting moduli, const gpu_rates& r) {
  double t = moduli.is_certified() ? kChooserLatency : kChoiceLatency;
  if (moduli.is_certified()) {
    const double mp = padded(m), np = padded(n), kp = padded(k);
    constexpr int band_gemms = kCertBands * (kCertBands + 1) / 2;
    const double elements = static_cast<double>(m) * n;
    const bool accumulated = kCertBands > 1 || kp > kKBlock;
    t += band_gemms * 2.0 * mp * np * kp / r.int8 +
         (static_cast<double>(m) + n) * k * kCertPrepBytes / r.prep_bw +
         (accumulated ? elements * band_gemms * 20.0 / r.crt_bw : 0.0) +
         elements * (kRatioSecondsPerElement + kRatioFlopsPerElement / r.fp64);
  }
  return t;
}

// The emulation's time on the device, a per-call choice priced at kAutoModuliEstimate moduli.
double emulated_seconds(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                        bool reads_c, const gpu_rates& r, bool karatsuba) {
  if (moduli.is_fixed())
    return emulation_seconds(m, n, k, moduli.count(), mode, reads_c, r, karatsuba);
  return choice_seconds(m, n, k, moduli, r) +
         emulation_seconds(m, n, k, kAutoModuliEstimate, mode, reads_c, r, karatsuba);
}

// A GPU the model has no rates for cannot be predicted faster: native.
bool known(const gpu_rates& r) {
  return r.fp64 > 0 && r.int8 > 0 && r.prep_bw > 0 && r.crt_bw > 0 && r.host_link > 0 &&
         r.cpu_blas > 0;
}

}  // namespace

prediction predict_device(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                          bool reads_c, const gpu_rates& rates, bool karatsuba) {
  if (!known(rates)) return {0.0, HUGE_VAL};
  const double native = kNativeLatency + 2.0 * m * n * k / rates.fp64;
  return {native * 1e3, emulated_seconds(m, n, k, moduli, mode, reads_c, rates, karatsuba) * 1e3};
}

prediction predict_device_batch(int64_t m, int64_t n, int64_t k, int s, scaling_mode mode,
                                bool reads_c, const gpu_rates& rates, int64_t count, bool complex) {
  if (!known(rates)) return {0.0, HUGE_VAL};
  const double c = static_cast<double>(count);
  const int64_t w = complex ? 2 : 1;  // the embedding: m x 2n x 2k
  const double native = kNativeLatency + c * 2.0 * m * (w * n) * (w * k) / rates.fp64 *
                                             (complex ? kZgemmNativeWork : 1.0);
  double per_matrix =
      emulation_seconds(m, w * n, w * k, s, mode, complex || reads_c, rates, false) -
      kEmulationLatency;
  // The packs read A and B (16 bytes a complex element) and write A' (16) and B* (32); the
  // epilogue reads T (16) and C (16) and writes C (16).
  if (complex)
    per_matrix += (32.0 * m * k + 48.0 * static_cast<double>(k) * n + 48.0 * m * n) / rates.prep_bw;
  const double factor = complex ? kComplexEnginePassFactor : kEnginePassFactor;
  return {native * 1e3, (kEmulationLatency + c * factor * per_matrix) * 1e3};
}

double native_latency_ms() { return kNativeLatency * 1e3; }

double choice_ms(int64_t m, int64_t n, int64_t k, moduli_setting moduli, const gpu_rates& rates) {
  if (!known(rates) || moduli.is_fixed()) return 0.0;
  return choice_seconds(m, n, k, moduli, rates) * 1e3;
}

prediction predict_host(int64_t m, int64_t n, int64_t k, moduli_setting moduli, scaling_mode mode,
                        bool reads_c, const gpu_rates& rates) {
  if (!known(rates)) return {0.0, HUGE_VAL};
  const double cpu = 2.0 * m * n * k / rates.cpu_blas;
  const double bytes = 8.0 * (static_cast<double>(m) * k + static_cast<double>(k) * n +
                              static_cast<double>(m) * n * (reads_c ? 2 : 1));
  return {cpu * 1e3, (bytes / rates.host_link +
                      emulated_seconds(m, n, k, moduli, mode, reads_c, rates, false)) *
                         1e3};
}

}  // namespace ozdgemm::detail
