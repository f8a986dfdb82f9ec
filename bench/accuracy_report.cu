// Accuracy report: for the phi families and the adversarial sets,
// the errors of native cublasDgemm, cuBLAS's own FP64 emulation (dynamic mantissa), ozdgemm at
// every fixed s in both scaling modes (the brute force that finds the oracle s) and ozdgemm
// auto (targets native and max), on a double-double reference at sampled positions
// (bench/common/bench_inputs.hpp). One CSV row per (set, method); bench/accuracy_report.sh
// drives it and plots the CSV (bench/accuracy_plot.py).
//
//   accuracy_report [--n 4096] [--big 16384] [--big-sets phi0.5,phi2,phi4] [--sets all|a,b,..]
//                   [--samples 2048] [--seed 1] [--csv FILE] [--dry-run] [--help]
//
// Sets: phi0.5 phi1 phi2 phi4 phi8 (entries (U - 0.5) exp(phi N(0,1))), nonneg (U exp(N)),
// rows_pm40 (rows of op(A) x 2^+-40, columns of op(B) x 2^-+40), huge_row (row 0 of op(A)
// x 2^600), longk (m = n = 512, k = 2^18, phi 1), near_cancel (rows 0, 2, ... of op(A) are
// [x, -x (1 + 2^-20 r)] against op(B) = [y; y]). The same definitions as tests/support/
// auto_inputs.cpp, generated here on the host with their own generator (the bench does not
// link the test support).
//
// Oracle s (per mode): the smallest s whose measured errors are <= native's in both metrics
// ("native" target), and the smallest s whose errors are <= those at s = 20 ("max"); 0: none.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/bench_cuda.hpp"
#include "common/bench_inputs.hpp"
#include "common/bench_methods.hpp"
#include "engine/gpu_choice.hpp"
#include "ozdgemm/ozdgemm.h"

namespace {

using namespace ozdgemm::bench;

struct set_spec {
  std::string name;
  int kind;  // 0 phi, 1 nonneg, 2 rows_pm40, 3 huge_row, 4 near_cancel
  double phi;
  bool long_k;
};

const std::vector<set_spec>& all_sets() {
  static const std::vector<set_spec> v = {
      {"phi0.5", 0, 0.5, false},   {"phi1", 0, 1.0, false},       {"phi2", 0, 2.0, false},
      {"phi4", 0, 4.0, false},     {"phi8", 0, 8.0, false},       {"nonneg", 1, 1.0, false},
      {"rows_pm40", 2, 1.0, false}, {"huge_row", 3, 1.0, false},  {"longk", 0, 1.0, true},
      {"near_cancel", 4, 1.0, false}};
  return v;
}

// splitmix64, Box-Muller: the same numbers on every machine.
struct rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

// op(A) (m x k, ld m) and op(B) (k x n, ld k) of a set.
void make_set(const set_spec& st, const shape& sh, uint64_t seed, std::vector<double>& a,
              std::vector<double>& b) {
  const int64_t m = sh.m, n = sh.n, k = sh.k;
  a.resize(static_cast<size_t>(m * k));
  b.resize(static_cast<size_t>(k * n));
  rng ga{seed}, gb{seed + 1};
  auto fill = [&](std::vector<double>& x, rng& g) {
    for (double& v : x) {
      const double u = g.uniform();
      v = (st.kind == 1 ? u : u - 0.5) * std::exp(st.phi * g.normal());
    }
  };
  fill(a, ga);
  fill(b, gb);
  if (st.kind == 2) {
    for (int64_t l = 0; l < k; ++l)
      for (int64_t i = 0; i < m; ++i) a[l * m + i] = std::ldexp(a[l * m + i], i % 2 == 0 ? 40 : -40);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l) b[j * k + l] = std::ldexp(b[j * k + l], j % 3 == 0 ? -40 : 40);
  } else if (st.kind == 3) {
    for (int64_t l = 0; l < k; ++l) a[l * m] = std::ldexp(a[l * m], 600);
  } else if (st.kind == 4) {
    const int64_t h = k / 2;
    rng g{seed + 2};
    for (int64_t i = 0; i < m; i += 2)
      for (int64_t l = 0; l < h; ++l)
        a[(h + l) * m + i] = -a[l * m + i] * (1.0 + std::ldexp(2.0 * g.uniform() - 1.0, -20));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < h; ++l) b[j * k + h + l] = b[j * k + l];
  }
}

struct options {
  int64_t n = 4096, big = 16384;
  std::vector<std::string> sets, big_sets{"phi0.5", "phi2", "phi4"};
  int samples = 2048;
  uint64_t seed = 1;
  std::string csv = "accuracy.csv";
  bool dry_run = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t q = s.find(',', p);
    const std::string t = s.substr(p, q == std::string::npos ? std::string::npos : q - p);
    if (!t.empty()) r.push_back(t);
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return r;
}

void usage() {
  std::puts(
      "accuracy_report: errors of native DGEMM, cuBLAS FP64 emulation, ozdgemm fixed s and\n"
      "ozdgemm auto on the issue-5 sets, against a double-double reference at sampled entries.\n"
      "  --n N            square size of every set (default 4096; longk is 512 x 512 x 2^18)\n"
      "  --big N          a second size for --big-sets (default 16384; 0: none)\n"
      "  --big-sets LIST  sets run at --big too (default phi0.5,phi2,phi4)\n"
      "  --sets LIST      sets to run (default all: phi0.5,phi1,phi2,phi4,phi8,nonneg,\n"
      "                   rows_pm40,huge_row,longk,near_cancel)\n"
      "  --samples N      sampled entries of C (default 2048)\n"
      "  --seed N         input seed (default 1)\n"
      "  --csv FILE       output (default accuracy.csv)\n"
      "  --dry-run        list the runs and the modelled GPU time, run nothing\n"
      "CSV columns: set,m,n,k,method,mode,target,s,s_auto,s_oracle,max_rel,max_scaled,\n"
      "native_rel,native_scaled (s: the moduli count that ran; 0 for native/cuBLAS rows or\n"
      "when auto fell back to native DGEMM).");
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "accuracy_report: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--n") o.n = std::atoll(val().c_str());
    else if (a == "--big") o.big = std::atoll(val().c_str());
    else if (a == "--big-sets") o.big_sets = split(val());
    else if (a == "--sets") {
      const std::string v = val();
      if (v != "all") o.sets = split(v);
    } else if (a == "--samples") o.samples = std::atoi(val().c_str());
    else if (a == "--seed") o.seed = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--csv") o.csv = val();
    else if (a == "--dry-run") o.dry_run = true;
    else {
      std::fprintf(stderr, "accuracy_report: unknown option %s (see --help)\n", a.c_str());
      return false;
    }
  }
  if (o.sets.empty())
    for (const set_spec& s : all_sets()) o.sets.push_back(s.name);
  for (const std::string& name : o.sets) {
    bool ok = false;
    for (const set_spec& s : all_sets()) ok = ok || s.name == name;
    if (!ok) {
      std::fprintf(stderr, "accuracy_report: unknown set %s\n", name.c_str());
      return false;
    }
  }
  return o.n > 0 && o.samples > 0;
}

const set_spec& find_set(const std::string& name) {
  for (const set_spec& s : all_sets())
    if (s.name == name) return s;
  return all_sets()[0];
}

struct run_item {
  set_spec set;
  shape sh;
};

std::vector<run_item> plan(const options& o) {
  std::vector<run_item> v;
  for (const std::string& name : o.sets) {
    const set_spec& st = find_set(name);
    v.push_back({st, st.long_k ? shape{512, 512, int64_t{1} << 18} : shape{o.n, o.n, o.n}});
  }
  if (o.big > 0)
    for (const std::string& name : o.big_sets) {
      const set_spec& st = find_set(name);
      if (!st.long_k) v.push_back({st, shape{o.big, o.big, o.big}});
    }
  return v;
}

// Modelled GPU seconds of one item: 2 modes x (s = 2..20 brute force + 4 auto runs at ~s 18)
// INT8 GEMMs at 1.2e15, native and cuBLAS emulation at 55e12, host generation ~25 ns/entry.
double modelled_seconds(const shape& sh) {
  const double mnk = double(sh.m) * double(sh.n) * double(sh.k);
  const double int8 = 2.0 * (209.0 + 4 * 18.0) * 2.0 * mnk / 1.2e15;
  const double fp64 = 2.0 * 2.0 * mnk / 55e12;
  const double gen = 25e-9 * (double(sh.m) + double(sh.n)) * double(sh.k);
  return int8 + fp64 + gen + 0.5;
}

struct row_err {
  double rel = kNaN, scaled = kNaN;
};

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  const std::vector<run_item> items = plan(o);
  double total = 0.0;
  for (const run_item& it : items) total += modelled_seconds(it.sh);
  if (o.dry_run) {
    for (const run_item& it : items)
      std::printf("%-12s %lld x %lld x %lld  ~%.1f s\n", it.set.name.c_str(),
                  static_cast<long long>(it.sh.m), static_cast<long long>(it.sh.n),
                  static_cast<long long>(it.sh.k), modelled_seconds(it.sh));
    std::printf("modelled total: %.0f s (%zu sets)\n", total, items.size());
    return 0;
  }
  try {
    cuda_stream stream;
    cublas_handle h(stream.get()), emu(stream.get());
    const std::string emu_err = configure_cublas_emulation(emu.get(), false, 0);
    FILE* f = std::fopen(o.csv.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "accuracy_report: cannot write %s\n", o.csv.c_str());
      return 1;
    }
    std::fprintf(f, "set,m,n,k,method,mode,target,s,s_auto,s_oracle,max_rel,max_scaled,"
                    "native_rel,native_scaled\n");
    for (const run_item& it : items) {
      const auto t0 = std::chrono::steady_clock::now();
      const shape sh = it.sh;
      std::vector<double> ha, hb;
      make_set(it.set, sh, o.seed + 1000 * (&it - items.data()), ha, hb);
      input_set in{device_array<double>(ha.size()), device_array<double>(hb.size()),
                   device_array<double>(static_cast<size_t>(sh.m * sh.n))};
      OZDGEMM_CUDA_TRY(cudaMemcpy(in.a.get(), ha.data(), ha.size() * 8, cudaMemcpyHostToDevice));
      OZDGEMM_CUDA_TRY(cudaMemcpy(in.b.get(), hb.data(), hb.size() * 8, cudaMemcpyHostToDevice));
      std::vector<double>().swap(ha);
      std::vector<double>().swap(hb);
      samples smp = make_samples(sh, in, o.samples, o.seed + 77, stream.get());
      const double one = 1.0, zero = 0.0;
      auto measure = [&]() -> row_err {
        const errors e = sampled_errors(read_samples(sh, in.c.get(), smp, stream.get()), smp.ref);
        return {e.max_rel, e.max_scaled};
      };
      auto clear_c = [&] {
        OZDGEMM_CUDA_TRY(cudaMemsetAsync(in.c.get(), 0xFF, sh.m * sh.n * 8, stream.get()));
      };
      const int m = static_cast<int>(sh.m), n = static_cast<int>(sh.n), k = static_cast<int>(sh.k);
      auto cublas_run = [&](cublasHandle_t hh) -> row_err {
        clear_c();
        if (cublasDgemm(hh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, in.a.get(), m, in.b.get(), k,
                        &zero, in.c.get(), m) != CUBLAS_STATUS_SUCCESS)
          return {};
        return measure();
      };
      const row_err native = cublas_run(h.get());
      auto line = [&](const char* method, const char* mode, const char* target, int s, int s_auto,
                      int s_oracle, const row_err& e) {
        std::fprintf(f, "%s,%lld,%lld,%lld,%s,%s,%s,%d,%d,%d,%.6e,%.6e,%.6e,%.6e\n",
                     it.set.name.c_str(), static_cast<long long>(sh.m),
                     static_cast<long long>(sh.n), static_cast<long long>(sh.k), method, mode,
                     target, s, s_auto, s_oracle, e.rel, e.scaled, native.rel, native.scaled);
      };
      line("cublas_dgemm", "", "", 0, 0, 0, native);
      if (emu_err.empty()) line("cublas_emu_dynamic", "", "", 0, 0, 0, cublas_run(emu.get()));
      for (ozdgemm_scaling_t mode : {OZDGEMM_SCALING_FAST, OZDGEMM_SCALING_ACCURATE}) {
        const char* mname = mode == OZDGEMM_SCALING_FAST ? "fast" : "accurate";
        auto oz = [&](int s, int accuracy, int* used) -> row_err {
          clear_c();
          ozdgemm_options_t op{s, mode, accuracy};
          if (ozdgemm_dgemm_ex(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, sh.m, sh.n, sh.k, &one,
                               in.a.get(), sh.m, in.b.get(), sh.k, &zero, in.c.get(), sh.m, op,
                               used) != OZDGEMM_STATUS_SUCCESS)
            return {};
          return measure();
        };
        std::vector<row_err> fixed(21);
        for (int s = 2; s <= 20; ++s) fixed[s] = oz(s, 0, nullptr);
        int oracle_native = 0, oracle_max = 0;
        for (int s = 20; s >= 2; --s) {
          if (fixed[s].rel <= native.rel && fixed[s].scaled <= native.scaled) oracle_native = s;
          if (fixed[s].rel <= fixed[20].rel && fixed[s].scaled <= fixed[20].scaled) oracle_max = s;
        }
        // Every fixed s is written: the plot shows error against s with auto's pick marked.
        for (int s = 2; s <= 20; ++s) line("ozdgemm_fixed", mname, "", s, 0, 0, fixed[s]);
        // Host time of a call (synchronised; the median of 3, warm), for the cost of the
        // per-call choices against each other and against the fixed s of the oracle.
        // used == nullptr with a certified s: ozdgemm_dgemm with the choice on the GPU for every
        // call (the graph choice, set_gpu_choice_everywhere; the _ex entry, reporting s, chooses
        // on the host after one synchronisation).
        auto call_ms = [&](int s, int* used) {
          double t[3];
          for (double& ti : t) {
            clear_c();
            OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
            const auto c0 = std::chrono::steady_clock::now();
            ozdgemm_options_t op{s, mode, OZDGEMM_ACCURACY_NATIVE};
            if (used == nullptr && s == OZDGEMM_MODULI_CERTIFIED) {
              ozdgemm::detail::set_gpu_choice_everywhere(true);
              ozdgemm_dgemm(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, sh.m, sh.n, sh.k, &one, in.a.get(),
                            sh.m, in.b.get(), sh.k, &zero, in.c.get(), sh.m, op);
              ozdgemm::detail::set_gpu_choice_everywhere(false);
            } else
              ozdgemm_dgemm_ex(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, sh.m, sh.n, sh.k, &one,
                               in.a.get(), sh.m, in.b.get(), sh.k, &zero, in.c.get(), sh.m, op,
                               used);
            OZDGEMM_CUDA_TRY(cudaStreamSynchronize(stream.get()));
            ti = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0)
                     .count();
          }
          std::sort(t, t + 3);
          return t[1];
        };
        int s_auto_native = 0;
        for (int t : {OZDGEMM_ACCURACY_NATIVE, OZDGEMM_ACCURACY_MAX}) {
          int used = -1;
          const row_err e = oz(OZDGEMM_MODULI_AUTO, t, &used);
          if (t == OZDGEMM_ACCURACY_NATIVE) s_auto_native = used;
          const bool is_native = t == OZDGEMM_ACCURACY_NATIVE;
          line("ozdgemm_auto", mname, is_native ? "native" : "max", used, used,
               is_native ? oracle_native : oracle_max, e);
          std::printf("%-12s %6lld %-8s auto %-6s s_auto %2d oracle %2d  rel %.2e (native %.2e)"
                      "  scaled %.2e (native %.2e)\n",
                      it.set.name.c_str(), static_cast<long long>(sh.n), mname,
                      is_native ? "native" : "max", used, is_native ? oracle_native : oracle_max,
                      e.rel, native.rel, e.scaled, native.scaled);
        }
        // The certified count (OZDGEMM_MODULI_CERTIFIED), target native: its s, its errors, and
        // the time of one call against one auto call (both warm: auto ran above).
        {
          int used = -1;
          const row_err e = oz(OZDGEMM_MODULI_CERTIFIED, OZDGEMM_ACCURACY_NATIVE, &used);
          line("ozdgemm_certified", mname, "native", used, s_auto_native, oracle_native, e);
          int u1 = -1, u2 = -1;
          const double t_auto = call_ms(OZDGEMM_MODULI_AUTO, &u1);
          const double t_cert = call_ms(OZDGEMM_MODULI_CERTIFIED, &u2);
          const double t_gpu = call_ms(OZDGEMM_MODULI_CERTIFIED, nullptr);
          const double t_oracle = oracle_native != 0 ? call_ms(oracle_native, nullptr) : 0.0;
          std::printf(
              "%-12s %6lld %-8s certified     s_cert %2d (auto %2d) oracle %2d  rel %.2e"
              "  scaled %.2e  time certified %.2f ms (chosen on the GPU %.2f ms) / auto %.2f ms"
              " / fixed oracle %.2f ms\n",
              it.set.name.c_str(), static_cast<long long>(sh.n), mname, used, s_auto_native,
              oracle_native, e.rel, e.scaled, t_cert, t_gpu, t_auto, t_oracle);
        }
      }
      std::fflush(f);
      ozdgemm_release_handle(h.get());
      std::fprintf(stderr, "%s %lld: %.1f s\n", it.set.name.c_str(), static_cast<long long>(sh.n),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::fclose(f);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accuracy_report: %s\n", e.what());
    return 1;
  }
  return 0;
}
