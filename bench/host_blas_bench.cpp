// Host-memory DGEMM benchmark for the host path: times whatever dgemm_ / cblas_dgemm the
// process resolves (a CPU BLAS, NVBLAS preloaded, or libozdgemm preloaded), so the same binary
// measures every method on the same inputs. Square column-major C = A B (alpha 1, beta 0),
// inputs (U - 0.5) exp(phi N(0,1)) filled by all cores.
//
// Per size: one warm-up call (library start-up, pinned buffers), then the median of --reps
// timed calls (wall clock: a host call is synchronous), effective TFLOPS = 2 n^3 / median, and
// the error on --samples entries against a long double reference, in both metrics:
// max |C - R| / |R| and max |C - R| / (|A||B|).
//
//   host_blas_bench --label NAME [--api fortran|cblas] [--sizes 4096,8192] [--reps 3]
//                   [--phi 0.5] [--samples 256] [--csv FILE] [--digest 1]
// --digest 1 prints a digest of every bit of C per size ("C digest"): runs that must give the
// same bits (1, 2 or 4 host-path workers, bench/run_host_bench.sh HOST_BENCH_MODE=workers)
// print the same line.
// CSV columns: label,api,n,median_s,min_s,tflops,max_rel_err,max_abs_err_over_AB,reps
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, size_t, size_t);
void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc);
}

namespace {

struct options {
  std::string label = "blas", api = "fortran", csv;
  std::vector<int> sizes{4096, 8192};
  int reps = 3, samples = 256;
  bool digest = false;
  double phi = 0.5;
};

std::vector<int> parse_sizes(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p != '\0';) {
    char* end = nullptr;
    v.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* v = argv[i + 1];
    if (key == "--label") o.label = v;
    else if (key == "--api") o.api = v;
    else if (key == "--sizes") o.sizes = parse_sizes(v);
    else if (key == "--reps") o.reps = std::max(1, std::atoi(v));
    else if (key == "--phi") o.phi = std::atof(v);
    else if (key == "--samples") o.samples = std::atoi(v);
    else if (key == "--csv") o.csv = v;
    else if (key == "--digest") o.digest = std::atoi(v) != 0;
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return o;
}

// (U - 0.5) exp(phi N(0,1)), one independent stream per thread (n = 16384 is 268M values).
void fill(std::vector<double>& x, double phi, uint64_t seed) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937_64 g(seed * 1000003u + static_cast<uint64_t>(t));
      std::uniform_real_distribution<double> u(-0.5, 0.5);
      std::normal_distribution<double> nd;
      const size_t lo = x.size() * t / threads, hi = x.size() * (t + 1) / threads;
      for (size_t i = lo; i < hi; ++i) x[i] = u(g) * std::exp(phi * nd(g));
    });
  for (std::thread& t : pool) t.join();
}

void multiply(const options& o, int n, const double* a, const double* b, double* c) {
  const double one = 1.0, zero = 0.0;
  if (o.api == "cblas") {
    cblas_dgemm(102, 111, 111, n, n, n, 1.0, a, n, b, n, 0.0, c, n);  // column-major, N, N
  } else {
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  FILE* csv = o.csv.empty() ? nullptr : std::fopen(o.csv.c_str(), "a");
  for (int n : o.sizes) {
    const size_t len = static_cast<size_t>(n) * n;
    std::vector<double> a(len), b(len), c(len, 0.0);
    fill(a, o.phi, 1);
    fill(b, o.phi, 2);
    multiply(o, n, a.data(), b.data(), c.data());  // warm-up
    std::vector<double> times;
    for (int r = 0; r < o.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      multiply(o, n, a.data(), b.data(), c.data());
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2], tflops = 2.0 * n * n * n / median / 1e12;

    std::mt19937_64 g(7);
    std::uniform_int_distribution<int> pick(0, n - 1);
    double rel = 0, abs_ab = 0;
    for (int s = 0; s < o.samples; ++s) {
      const int i = pick(g), j = pick(g);
      long double r = 0, ab = 0;
      for (int l = 0; l < n; ++l) {
        const long double p = static_cast<long double>(a[i + static_cast<size_t>(l) * n]) *
                              b[l + static_cast<size_t>(j) * n];
        r += p;
        ab += std::fabs(p);
      }
      const long double err = std::fabs(static_cast<long double>(c[i + static_cast<size_t>(j) * n]) - r);
      if (r != 0) rel = std::max(rel, static_cast<double>(err / std::fabs(r)));
      if (ab != 0) abs_ab = std::max(abs_ab, static_cast<double>(err / ab));
    }
    std::printf("%-12s %-7s n=%6d  median %9.4f s  min %9.4f s  %8.3f TFLOPS  rel %.2e  abs/|A||B| %.2e\n",
                o.label.c_str(), o.api.c_str(), n, median, times.front(), tflops, rel, abs_ab);
    if (o.digest) {
      uint64_t h = 1469598103934665603ull;  // FNV-1a
      const auto* p = reinterpret_cast<const unsigned char*>(c.data());
      for (size_t i = 0; i < len * sizeof(double); ++i) h = (h ^ p[i]) * 1099511628211ull;
      std::printf("%-12s n=%6d  C digest %016llx\n", o.label.c_str(), n,
                  static_cast<unsigned long long>(h));
    }
    std::fflush(stdout);
    if (csv != nullptr) {
      std::fprintf(csv, "%s,%s,%d,%.6f,%.6f,%.4f,%.3e,%.3e,%d\n", o.label.c_str(), o.api.c_str(), n,
                   median, times.front(), tflops, rel, abs_ab, o.reps);
      std::fflush(csv);
    }
  }
  if (csv != nullptr) std::fclose(csv);
  return 0;
}
