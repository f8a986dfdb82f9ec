// What the certified moduli count (the default) costs over a fixed s and against cuBLAS, and
// where. For each n: one input set (U - 0.5) exp(phi N(0,1)), then, on it,
//   native     cublasDgemm
//   cublas_emu cuBLAS's own FP64 emulation (eager, dynamic mantissa control)
//   fixed      ozdgemm_dgemm_ex at the fixed s of --fixed (fast scaling)
//   certified  the certified count, chosen on the host after a wait (ozdgemm_dgemm_ex,
//              OZDGEMM_CHOICE=host)
//   fixed_cert ozdgemm_dgemm_ex at the fixed s the certified call chose (the count the default
//              runs on this data)
//   default    ozdgemm_dgemm with no settings: the certified count speculated by the host and
//              checked on the GPU, no wait (engine/speculation.hpp); the shape's history holds
//              the certified call's count by then, so its warm-up is already a second call
//   fallback   the default when the count it launches is not certified for the data: the shape's
//              history is given s = 2 before each call, so the FP64 fallback GEMM runs
// over_fixed is each row's time over fixed's, except default's, over fixed_cert's (the bar of
// the certificate's cost).
// timed with CUDA events around each call (the host's choice waits inside it), the median of
// --reps after a warm-up; the timed calls go round the methods (one call of each per round), so
// that the GPU's clocks drifting over the run weigh on every method alike, fallback last on its
// own; first_ms is the warm-up (the first call of the shape: workspace, graphs, cuBLASLt plans),
// on the host clock to the end of the stream's work. Then, between
// cudaProfilerStart and cudaProfilerStop, one more call of each, each one after a one-thread marker
// kernel whose argument names it, so that a profiler run with --profile-from-start off (ncu) lists
// every kernel of every call in order.
//   certified_probe [--n 2048,4096,8192] [--phi 0.5] [--fixed 15] [--reps 10]
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/bench_cuda.hpp"
#include "common/bench_inputs.hpp"
#include "common/bench_methods.hpp"
#include "engine/gpu_choice.hpp"
#include "engine/moduli_history.hpp"
#include "engine/speculation.hpp"
#include "ozdgemm/ozdgemm.h"

namespace {

using namespace ozdgemm::detail;
namespace bench = ozdgemm::bench;

__global__ void marker(int method) {
  if (method < 0) __trap();  // never: the argument only labels the launch
}

const char* arg(int argc, char** argv, const char* name, const char* def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return def;
}

std::vector<long long> int_list(const char* s) {
  std::vector<long long> out;
  for (const char* p = s; *p != '\0';) {
    out.push_back(std::atoll(p));
    while (*p != '\0' && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::vector<long long> sizes = int_list(arg(argc, argv, "--n", "2048,4096,8192"));
  const double phi = std::atof(arg(argc, argv, "--phi", "0.5"));
  const int fixed = std::atoi(arg(argc, argv, "--fixed", "15"));
  const int reps = std::atoi(arg(argc, argv, "--reps", "10"));
  if (reps < 1 || fixed < 2 || fixed > 20) {
    std::fprintf(stderr, "certified_probe: --reps >= 1, --fixed in [2, 20]\n");
    return 2;
  }
  bench::cuda_stream stream;
  bench::cublas_handle handle(stream.get());
  bench::cublas_handle emu_handle(stream.get());
  const std::string emu_error = bench::configure_cublas_emulation(emu_handle.get(), false, 0);
  if (!emu_error.empty())
    std::fprintf(stderr, "certified_probe: no cublas_emu: %s\n", emu_error.c_str());
  bench::event_pool ev(2);
  enum { kFixed, kCertified, kFixedCert, kDefault, kFallback, kNative, kCublasEmu, kMethods };
  const char* names[] = {"fixed",    "certified", "fixed_cert", "default",
                         "fallback", "native",    "cublas_emu"};
  // Native first: every row's ratio to it comes from the same run.
  const int order[] = {kNative, kCublasEmu, kFixed, kCertified, kFixedCert, kDefault, kFallback};
  std::printf("n,phi,method,s,median_ms,over_fixed,over_native,first_ms\n");
  for (const long long n : sizes) {
    const bench::shape sh{n, n, n};
    bench::input_set in = bench::make_input_set(sh, 1, 0, phi, stream.get());
    const double one = 1.0, zero = 0.0;
    int certified_s = fixed;  // the certified call's count, once it has run
    auto call = [&](int method) {
      if (method == kNative || method == kCublasEmu) {
        const int ni = static_cast<int>(n);
        OZDGEMM_CUBLAS_TRY(cublasDgemm(method == kNative ? handle.get() : emu_handle.get(),
                                       CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, in.a.get(), ni,
                                       in.b.get(), ni, &zero, in.c.get(), ni));
        return 0;
      }
      ozdgemm_options_t o = ozdgemm_default_options();
      o.scaling = OZDGEMM_SCALING_FAST;
      o.num_moduli = method == kFixed       ? fixed
                     : method == kFixedCert ? certified_s
                                            : OZDGEMM_MODULI_CERTIFIED;
      if (method == kFallback) {  // outcomes so far learnt first, then a window of s = 2
        harvest_outcomes();
        const history_key key = key_of_call(n, n, n, false, scaling_mode::fast, o.accuracy);
        for (int i = 0; i < moduli_history::kWindow; ++i) process_moduli_history().record(key, 2);
      }
      if (method == kDefault || method == kFallback)
        clear_gpu_choice_override();
      else
        set_gpu_choice_everywhere(false);  // the host's choice
      int s = -1;
      const ozdgemm_status_t st =
          method == kDefault || method == kFallback
              ? ozdgemm_dgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, in.a.get(), n,
                              in.b.get(), n, &zero, in.c.get(), n, o)
              : ozdgemm_dgemm_ex(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, in.a.get(),
                                 n, in.b.get(), n, &zero, in.c.get(), n, o, &s);
      if (st != OZDGEMM_STATUS_SUCCESS) {
        std::fprintf(stderr, "certified_probe: %s failed: %s\n", names[method],
                     ozdgemm_status_string(st));
        std::exit(1);
      }
      return s;
    };
    // Every method's warm-up first, in order, then the timed calls in rounds of one call per
    // method, so that a drift of the GPU's clocks during the run falls on all of them alike.
    // fallback is timed last, on its own: it rewrites the shape's history before each call.
    const auto used = [&](int method) { return method != kCublasEmu || emu_error.empty(); };
    double first_ms[kMethods] = {}, median_ms[kMethods] = {};
    int ran_s[kMethods] = {};
    std::vector<double> t[kMethods];
    const auto timed = [&](int method) {
      OZDGEMM_CUDA_TRY(cudaEventRecord(ev[0], stream.get()));
      ran_s[method] = call(method);
      OZDGEMM_CUDA_TRY(cudaEventRecord(ev[1], stream.get()));
      OZDGEMM_CUDA_TRY(cudaEventSynchronize(ev[1]));
      t[method].push_back(bench::elapsed_ms(ev[0], ev[1]));
    };
    const auto warm_up = [&](int method) {
      OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
      const auto t0 = std::chrono::steady_clock::now();
      ran_s[method] = call(method);  // workspace, graphs, cuBLASLt plans
      OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
      first_ms[method] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (method == kCertified && ran_s[method] >= 2) certified_s = ran_s[method];
    };
    for (const int method : order)
      if (used(method) && method != kFallback) warm_up(method);
    for (int r = 0; r < reps; ++r)
      for (const int method : order)
        if (used(method) && method != kFallback) timed(method);
    warm_up(kFallback);
    for (int r = 0; r < reps; ++r) timed(kFallback);
    for (const int method : order)
      if (used(method)) median_ms[method] = bench::median(t[method]);
    for (const int method : order) {
      if (!used(method)) continue;
      const double ms = median_ms[method];
      const bool ozdgemm = method != kNative && method != kCublasEmu;
      const double base = method == kDefault ? median_ms[kFixedCert] : median_ms[kFixed];
      std::printf("%lld,%g,%s,%s,%.4f,%.3f,%.3f,%.1f\n", n, phi, names[method],
                  !ozdgemm             ? ""
                  : method >= kDefault ? "gpu"
                                       : std::to_string(ran_s[method]).c_str(),
                  ms, base > 0 ? ms / base : bench::kNaN, ms / median_ms[kNative],
                  first_ms[method]);
      std::fflush(stdout);
    }
    OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
    OZDGEMM_CUDA_TRY(cudaProfilerStart());
    for (const int method : order) {
      if (method == kCublasEmu && !emu_error.empty()) continue;
      marker<<<1, 1, 0, stream.get()>>>(method);
      call(method);
    }
    OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
    OZDGEMM_CUDA_TRY(cudaProfilerStop());
  }
  clear_gpu_choice_override();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "certified_probe: %s\n", e.what());
  return 1;
}
