// Complex double GEMM side by side: native cublasZgemm, cublasZgemm3m, cuBLAS's own FP64
// emulation of cublasZgemm, and ozdgemm_zgemm at every requested s and scaling mode, plus its
// per-call choices (certified, the default, chosen on the host and on the GPU, and auto). One
// row per (set, n, method): time, TFLOPS counting 8 n^3, speed-up over native, and the errors
// against a double-double reference at sampled entries. Per set and n it then names the
// accuracy-matched s: the smallest s whose errors are no worse than native cublasZgemm's in both
// metrics, per form.
//
//   zgemm_bench [--sizes 2048,4096] [--moduli 12-20] [--modes fast,accurate] [--phi 0,0.5,2]
//               [--forms karatsuba,four] [--sample-rows 24] [--sample-cols 24]
//               [--target-ms 1000] [--min-reps 3] [--csv FILE] [--dry-run]
//
// Forms (engine/complex_gemm.hpp): "ozdgemm" rows run the Karatsuba form (the default), "ozdgemm
// four" rows the four-product form at the same s and mode, right after; the bench compares the
// two results bit for bit over all of C (same_bits: 1 when identical). The per-call choices run
// the default form.
//
// Inputs: every real and imaginary part is (U - 0.5) exp(phi N(0,1)) (bench_inputs.hpp), A and
// B square, column-major, op N. Errors: rel = max |C - R| / |R| and scaled = max |C - R| /
// sum_l |a_il| |b_lj| (complex moduli), over the sampled rows x columns.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/bench_cuda.hpp"
#include "common/bench_inputs.hpp"
#include "common/bench_methods.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/gpu_choice.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::bench {
namespace {

struct zoptions {
  std::vector<int64_t> sizes{2048, 4096, 8192, 16384};
  std::vector<int> moduli;
  std::vector<ozdgemm_scaling_t> modes{OZDGEMM_SCALING_FAST, OZDGEMM_SCALING_ACCURATE};
  std::vector<double> phis{0.0, 0.5, 2.0};
  std::vector<detail::complex_form> forms{detail::complex_form::karatsuba,
                                          detail::complex_form::four};
  int sample_rows = 24, sample_cols = 24;
  timing_policy tp{0, 1, 1000.0, 3, 50};
  std::string csv;
  bool dry_run = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t q = s.find(',', p);
    out.push_back(s.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return out;
}

// "12-20,22": ranges and single counts.
std::vector<int> parse_moduli(const std::string& s) {
  std::vector<int> out;
  for (const std::string& part : split(s)) {
    const size_t dash = part.find('-');
    const int lo = std::atoi(part.substr(0, dash).c_str());
    const int hi = dash == std::string::npos ? lo : std::atoi(part.substr(dash + 1).c_str());
    for (int v = lo; v <= hi; ++v) out.push_back(v);
  }
  return out;
}

zoptions parse(int argc, char** argv) {
  zoptions o;
  o.moduli = parse_moduli("12-20");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "zgemm_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--sizes") {
      o.sizes.clear();
      for (const std::string& v : split(val())) o.sizes.push_back(std::atoll(v.c_str()));
    } else if (a == "--moduli") {
      o.moduli = parse_moduli(val());
    } else if (a == "--modes") {
      o.modes.clear();
      for (const std::string& v : split(val()))
        o.modes.push_back(v == "fast" ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE);
    } else if (a == "--phi") {
      o.phis.clear();
      for (const std::string& v : split(val())) o.phis.push_back(std::atof(v.c_str()));
    } else if (a == "--forms") {
      o.forms.clear();
      for (const std::string& v : split(val()))
        o.forms.push_back(v == "four" ? detail::complex_form::four
                                      : detail::complex_form::karatsuba);
    } else if (a == "--sample-rows") {
      o.sample_rows = std::atoi(val().c_str());
    } else if (a == "--sample-cols") {
      o.sample_cols = std::atoi(val().c_str());
    } else if (a == "--target-ms") {
      o.tp.target_ms = std::atof(val().c_str());
    } else if (a == "--min-reps") {
      o.tp.min_reps = std::atoi(val().c_str());
    } else if (a == "--csv") {
      o.csv = val();
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else {
      std::fprintf(stderr, "zgemm_bench: unknown option %s (see the file comment)\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

struct method_row {
  explicit method_row(std::string n) : name(std::move(n)) {}
  std::string name;  // zgemm, zgemm3m, cublas_emu, ozdgemm s=.. mode, ozdgemm certified, ...
  int s = 0;         // ozdgemm: the s that ran (fixed, or reported by the choice)
  std::string mode;  // ozdgemm: fast / accurate
  double ms = kNaN;
  double rel = kNaN, scaled = kNaN;
  std::string error;
  int same_bits = -1;  // "ozdgemm four": 1 when C equals the Karatsuba form's bit for bit
};

__global__ void count_differing(const unsigned long long* x, const unsigned long long* y, size_t n,
                                unsigned long long* count) {
  unsigned long long d = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    d += x[i] != y[i];
  if (d != 0) atomicAdd(count, d);
}

// The number of the `n` doubles at x and y (device) whose bits differ.
unsigned long long differing_doubles(const double* x, const double* y, size_t n,
                                     cudaStream_t stream) {
  device_array<unsigned long long> count(1);
  OZDGEMM_CUDA_TRY(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream));
  count_differing<<<1024, 256, 0, stream>>>(reinterpret_cast<const unsigned long long*>(x),
                                            reinterpret_cast<const unsigned long long*>(y), n,
                                            count.get());
  unsigned long long host = 0;
  OZDGEMM_CUDA_TRY(
      cudaMemcpyAsync(&host, count.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream));
  return host;
}

// The sampled rows of A, columns of B, and the double-double reference at their crossings.
struct zsamples {
  std::vector<int64_t> rows, cols;
  std::vector<double> re, im, abs_dot;  // [r * cols + c]
};

zsamples make_zsamples(int64_t n, const double* a, const double* b, int nr, int nc,
                       uint64_t seed) {
  zsamples z;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  for (int r = 0; r < nr; ++r) z.rows.push_back(pick(rng));
  for (int c = 0; c < nc; ++c) z.cols.push_back(pick(rng));
  // Row i of complex A (lda = n): n complex entries 16 n bytes apart.
  std::vector<double> row(2 * n), y_re(2 * n), y_im(2 * n);
  std::vector<std::vector<double>> cols(nc, std::vector<double>(2 * n));
  for (int c = 0; c < nc; ++c)
    OZDGEMM_CUDA_TRY(cudaMemcpy(cols[c].data(), b + 2 * z.cols[c] * n, 16 * n,
                                cudaMemcpyDeviceToHost));
  for (int r = 0; r < nr; ++r) {
    OZDGEMM_CUDA_TRY(cudaMemcpy2D(row.data(), 16, a + 2 * z.rows[r], 16 * n, 16, n,
                                  cudaMemcpyDeviceToHost));
    for (int c = 0; c < nc; ++c) {
      const std::vector<double>& bc = cols[c];
      double mags = 0.0;
      for (int64_t l = 0; l < n; ++l) {
        y_re[2 * l] = bc[2 * l];  // re = sum ar br - ai bi
        y_re[2 * l + 1] = -bc[2 * l + 1];
        y_im[2 * l] = bc[2 * l + 1];  // im = sum ar bi + ai br
        y_im[2 * l + 1] = bc[2 * l];
        mags += std::hypot(row[2 * l], row[2 * l + 1]) * std::hypot(bc[2 * l], bc[2 * l + 1]);
      }
      z.re.push_back(dot2(row.data(), y_re.data(), 2 * n).value);
      z.im.push_back(dot2(row.data(), y_im.data(), 2 * n).value);
      z.abs_dot.push_back(mags);
    }
  }
  return z;
}

// The errors of C (device, ldc = n) at the samples.
void sampled_zerrors(int64_t n, const double* c, const zsamples& z, method_row* out) {
  double rel = 0.0, scaled = 0.0;
  const size_t nc = z.cols.size();
  for (size_t r = 0; r < z.rows.size(); ++r)
    for (size_t q = 0; q < nc; ++q) {
      double v[2];
      OZDGEMM_CUDA_TRY(cudaMemcpy(v, c + 2 * (z.cols[q] * n + z.rows[r]), 16,
                                  cudaMemcpyDeviceToHost));
      const size_t e = r * nc + q;
      const double err = std::hypot(v[0] - z.re[e], v[1] - z.im[e]);
      const double mag = std::hypot(z.re[e], z.im[e]);
      if (std::isnan(err)) {  // an entry not written, or a NaN the inputs cannot produce
        out->rel = out->scaled = kNaN;
        return;
      }
      if (mag != 0.0) rel = std::max(rel, err / mag);
      if (z.abs_dot[e] != 0.0) scaled = std::max(scaled, err / z.abs_dot[e]);
    }
  out->rel = rel;
  out->scaled = scaled;
}

double tflops(int64_t n, double ms) { return 8.0 * double(n) * double(n) * double(n) / (ms * 1e9); }

}  // namespace
}  // namespace ozdgemm::bench

int main(int argc, char** argv) {
  using namespace ozdgemm::bench;
  const zoptions o = parse(argc, argv);
  const int methods =
      5 + static_cast<int>(o.moduli.size() * o.modes.size() * std::max<size_t>(1, o.forms.size()));
  if (o.dry_run) {
    double total = 0.0;
    for (int64_t n : o.sizes) {
      // About 48 TFLOPS native; every method about native's time, at least min_reps + 1 calls.
      const double call_s = 8.0 * double(n) * n * n / 48e12;
      const double per_method =
          std::max(o.tp.target_ms / 1e3, call_s * (o.tp.min_reps + 1)) + 0.05;
      const double t = o.phis.size() * methods * per_method;
      std::printf("n = %-6lld ~%6.1f s (%d methods x %zu sets)\n", static_cast<long long>(n), t,
                  methods, o.phis.size());
      total += t;
    }
    std::printf("modelled total: %.0f s\n", total);
    return 0;
  }
  int device = 0;
  cudaDeviceProp prop{};
  OZDGEMM_CUDA_TRY(cudaGetDevice(&device));
  OZDGEMM_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0, cublas_version = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("zgemm_bench: %s (sm_%d%d), CUDA driver %d, runtime %d\n", prop.name, prop.major,
              prop.minor, driver, runtime);

  std::ofstream csv;
  if (!o.csv.empty()) {
    csv.open(o.csv);
    csv << "phi,n,method,s,mode,ms,tflops,speedup,rel,scaled,error,same_bits\n";
  }
  cuda_stream stream;
  cublas_handle plain(stream.get()), emu(stream.get());
  cublasGetVersion(plain.get(), &cublas_version);
  std::printf("cuBLAS %d\n", cublas_version);
  const std::string emu_error = configure_cublas_emulation(emu.get(), false, 0);
  event_pool ev(64);
  const cuDoubleComplex one{1.0, 0.0}, zero{0.0, 0.0};

  for (double phi : o.phis)
    for (int64_t n : o.sizes) {
      // A complex n x n matrix is a real n x 2n one: the generator's m x 2k A, 2k x 2n B (of
      // which the first 2 n^2 doubles are used) and m x 2n C.
      const shape real_shape{n, 2 * n, 2 * n};
      input_set in = make_input_set(real_shape, 1, 0, phi, stream.get());
      OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
      const auto* A = reinterpret_cast<const cuDoubleComplex*>(in.a.get());
      const auto* B = reinterpret_cast<const cuDoubleComplex*>(in.b.get());
      auto* C = reinterpret_cast<cuDoubleComplex*>(in.c.get());
      const zsamples z = make_zsamples(n, in.a.get(), in.b.get(), o.sample_rows, o.sample_cols,
                                       1000 + static_cast<uint64_t>(n));

      std::vector<method_row> rows;
      auto run = [&](method_row r, const std::function<std::string()>& enqueue) {
        if (r.error.empty()) {
          const timing t = time_calls([&](int) { return enqueue(); }, 1, o.tp, stream.get(), ev);
          r.ms = t.median_ms;
          r.error = t.error;
        }
        if (r.error.empty()) {
          OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
          sampled_zerrors(n, in.c.get(), z, &r);
        }
        rows.push_back(r);
      };
      auto cublas_call = [&](cublasStatus_t st) {
        return st == CUBLAS_STATUS_SUCCESS ? std::string() : std::string(cublasGetStatusString(st));
      };
      run(method_row("zgemm"), [&] {
        return cublas_call(cublasZgemm(plain.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n,
                                       B, n, &zero, C, n));
      });
      run(method_row("zgemm3m"), [&] {
        return cublas_call(cublasZgemm3m(plain.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A,
                                         n, B, n, &zero, C, n));
      });
      method_row emu_row("cublas_emu");
      emu_row.error = emu_error;
      run(emu_row, [&] {
        return cublas_call(cublasZgemm(emu.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n,
                                       B, n, &zero, C, n));
      });
      auto ozdgemm_row = [&](const std::string& name, ozdgemm_options_t opt) {
        method_row r(name);
        r.mode = opt.scaling == OZDGEMM_SCALING_FAST ? "fast" : "accurate";
        int used = 0;
        run(r, [&] {
          const ozdgemm_status_t st = ozdgemm_zgemm_ex(plain.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n,
                                                       n, &one, A, n, B, n, &zero, C, n, opt, &used);
          return st == OZDGEMM_STATUS_SUCCESS ? std::string() : ozdgemm_status_string(st);
        });
        rows.back().s = used;
      };
      {  // C of the form before (freed before the per-call choices, which need the most memory)
        const size_t doubles = static_cast<size_t>(2 * n * n);
        device_array<double> first_form(o.forms.size() > 1 ? doubles : 0);
        for (ozdgemm_scaling_t mode : o.modes)
          for (int s : o.moduli)
            for (size_t f = 0; f < o.forms.size(); ++f) {
              ozdgemm_options_t opt = ozdgemm_default_options();
              opt.num_moduli = s;
              opt.scaling = mode;
              const bool four = o.forms[f] == ozdgemm::detail::complex_form::four;
              ozdgemm::detail::set_complex_form_setting(o.forms[f]);
              ozdgemm_row(four ? "ozdgemm four" : "ozdgemm", opt);
              ozdgemm::detail::set_complex_form_setting(ozdgemm::detail::complex_form::setting);
              if (f > 0 && rows.back().error.empty() && rows[rows.size() - 2].error.empty())
                rows.back().same_bits =
                    differing_doubles(first_form.get(), in.c.get(), doubles, stream.get()) == 0;
              if (f + 1 < o.forms.size())  // the next form compares with this one
                OZDGEMM_CUDA_TRY(cudaMemcpyAsync(first_form.get(), in.c.get(), doubles * 8,
                                                 cudaMemcpyDeviceToDevice, stream.get()));
            }
        OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
      }
      ozdgemm_row("ozdgemm certified", ozdgemm_default_options());
      {  // the default: the count above speculated and checked on the GPU, no host wait (s is
         // not reported)
        ozdgemm::detail::clear_gpu_choice_override();
        method_row r("ozdgemm default");
        r.mode = "fast";
        run(r, [&] {
          const ozdgemm_status_t st =
              ozdgemm_zgemm(plain.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero,
                            C, n, ozdgemm_default_options());
          return st == OZDGEMM_STATUS_SUCCESS ? std::string() : ozdgemm_status_string(st);
        });
        ozdgemm::detail::clear_gpu_choice_override();
      }
      ozdgemm_options_t automatic = ozdgemm_default_options();
      automatic.num_moduli = OZDGEMM_MODULI_AUTO;
      ozdgemm_row("ozdgemm auto", automatic);
      ozdgemm_release_handle(plain.get());

      const method_row& native = rows[0];
      std::printf("\nphi %.1f, n = %lld: %-24s %9s %8s %8s %10s %10s\n", phi,
                  static_cast<long long>(n), "method", "ms", "TFLOPS", "x native", "rel",
                  "scaled");
      for (const method_row& r : rows) {
        const std::string label =
            r.name + (r.s > 0 ? " s=" + std::to_string(r.s) : "") + (r.mode.empty() ? "" : " " + r.mode);
        const double speedup = native.ms / r.ms;
        const char* bits = r.same_bits < 0 ? "" : r.same_bits ? " (same bits)" : " (BITS DIFFER)";
        std::printf("  %-40s %9.3f %8.2f %8.2f %10.2e %10.2e %s%s\n", label.c_str(), r.ms,
                    tflops(n, r.ms), speedup, r.rel, r.scaled, r.error.c_str(), bits);
        if (csv.is_open())
          csv << phi << ',' << n << ',' << r.name << ',' << r.s << ',' << r.mode << ',' << r.ms
              << ',' << tflops(n, r.ms) << ',' << speedup << ',' << r.rel << ',' << r.scaled << ','
              << r.error << ','
              << (r.same_bits < 0 ? ""
                  : r.same_bits   ? "1"
                                  : "0")
              << '\n';
      }
      // The accuracy-matched s of each form and mode: the smallest fixed s no worse than native
      // in both metrics, and its speed-up.
      for (const char* form : {"ozdgemm", "ozdgemm four"})
        for (ozdgemm_scaling_t mode : o.modes) {
          const char* mname = mode == OZDGEMM_SCALING_FAST ? "fast" : "accurate";
          const method_row* best = nullptr;
          bool ran = false;
          for (const method_row& r : rows) {
            if (r.name != form || r.mode != mname) continue;
            ran = true;
            if (r.error.empty() && r.rel <= native.rel && r.scaled <= native.scaled &&
                (best == nullptr || r.s < best->s))
              best = &r;
          }
          if (!ran) continue;
          if (best != nullptr)
            std::printf("  matched (%s, %s): s = %d, %.2fx native, %.2fx zgemm3m\n", form, mname,
                        best->s, native.ms / best->ms, rows[1].ms / best->ms);
          else
            std::printf("  matched (%s, %s): no s meets native\n", form, mname);
        }
      std::fflush(stdout);
      if (csv.is_open()) csv.flush();  // each set's rows survive a run cut short
    }
  return 0;
}
