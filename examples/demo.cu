// ozdgemm demo: C = A B in FP64, three ways, with the time and accuracy of each.
//
//   - native cublasDgemm (FP64 units);
//   - ozdgemm with no options (the library default: the moduli count certified per call from
//     the data, fast scaling);
//   - ozdgemm with a fixed count, 15 moduli, fast scaling (an explicit trade: no certificate).
//
// ozdgemm is a drop-in for cublasDgemm: the same arguments plus an options struct, the same
// stream behaviour (all work goes on the handle's stream, nothing synchronises the host).
// Accuracy is measured against a double-double (about 106-bit) reference computed on the host.
//
// With no GPU, the demo runs the library's bit-exact host reference of the same arithmetic
// (ozdgemm_dgemm_reference) on a small problem instead.
//
//   demo [--n N] [--reps R]
//
// Only the public API is used: #include <ozdgemm/ozdgemm.hpp>, link libozdgemm and cuBLAS.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ozdgemm/ozdgemm.hpp"

namespace {

// ---------------------------------------------------------------------------------------------
// Error checks: every CUDA and cuBLAS call is checked; a failure ends the demo with a message.

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "demo: %s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(EXIT_FAILURE);
  }
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "demo: %s failed: %s\n", what, cublasGetStatusString(s));
    std::exit(EXIT_FAILURE);
  }
}

void check(ozdgemm::status s, const char* what) {
  if (s != OZDGEMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "demo: %s failed: %s\n", what, ozdgemm::to_string(s));
    std::exit(EXIT_FAILURE);
  }
}

// ---------------------------------------------------------------------------------------------
// Test matrices: entry (U - 0.5) exp(phi N(0,1)); phi sets the spread of exponents. A
// counter-based generator (splitmix64) makes entry `index` of matrix `key` the same on the
// host and the GPU, whatever the launch configuration.

constexpr double kPhi = 0.5;

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__host__ __device__ inline double unit_open(uint64_t h) {  // uniform in (0, 1)
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

__host__ __device__ inline double random_entry(uint64_t key, int64_t index, double phi) {
  const uint64_t c = key + 3 * static_cast<uint64_t>(index);
  const double u = unit_open(splitmix64(c));
  const double u1 = unit_open(splitmix64(c + 1));
  const double u2 = unit_open(splitmix64(c + 2));
  const double normal = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);  // Box-Muller
  return (u - 0.5) * exp(phi * normal);
}

__global__ void fill_random_kernel(double* p, int64_t count, uint64_t key, double phi) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    p[i] = random_entry(key, i, phi);
}

void fill_random_host(std::vector<double>& p, uint64_t key, double phi) {
  for (size_t i = 0; i < p.size(); ++i) p[i] = random_entry(key, static_cast<int64_t>(i), phi);
}

const uint64_t kKeyA = splitmix64(1), kKeyB = splitmix64(2);

// ---------------------------------------------------------------------------------------------
// Reference: C_ij = sum_l A_il B_lj in double-double (Ogita, Rump, Oishi's Dot2: each product
// split exactly by an FMA, each sum by TwoSum), accurate to about 2^-106 (|A||B|)_ij.
// Column-major, lda = ldb = n.

struct reference_entry {
  double value;    // C_ij
  double abs_dot;  // (|A||B|)_ij, the natural scale of the rounding errors of C_ij
};

reference_entry reference_at(const std::vector<double>& a, const std::vector<double>& b, int64_t n,
                             int64_t i, int64_t j) {
  double s = 0.0, c = 0.0, abs_sum = 0.0;
  for (int64_t l = 0; l < n; ++l) {
    const double x = a[i + l * n], y = b[l + j * n];
    const double p = x * y;
    const double pe = std::fma(x, y, -p);  // x y = p + pe exactly
    const double t = s + p;
    const double z = t - s;
    const double se = (s - (t - z)) + (p - z);  // s + p = t + se exactly
    s = t;
    c += pe + se;
    abs_sum += std::fabs(p);
  }
  return reference_entry{s + c, abs_sum};
}

struct accuracy {
  double max_rel = 0.0;     // max |C - R| / |R|
  double max_scaled = 0.0;  // max |C - R| / (|A||B|): what FP64 rounding bounds (~ k 2^-53)
};

void add_to(accuracy& acc, double got, const reference_entry& r) {
  const double d = std::fabs(got - r.value);
  const double rel = d / std::fabs(r.value);
  const double scaled = d / r.abs_dot;
  // A NaN (an entry not computed) must show, so it wins the maximum.
  if (std::isnan(rel) || !(acc.max_rel >= rel)) acc.max_rel = rel;
  if (std::isnan(scaled) || !(acc.max_scaled >= scaled)) acc.max_scaled = scaled;
}

// `rate_unit` is 1e12 (TFLOPS) on the GPU, 1e9 (GFLOPS) on the host.
void print_header(const char* time_label, const char* rate_label, const char* speedup_label) {
  std::printf("%-36s %10s %9s %9s %12s %19s\n", "method", time_label, rate_label, speedup_label,
              "max rel err", "max |C-R|/(|A||B|)");
}

void print_row(const std::string& name, double ms, double flops, double rate_unit, double base_ms,
               const accuracy& acc) {
  std::printf("%-36s %10.3f %9.3f %9.2f %12.2e %19.2e\n", name.c_str(), ms,
              flops / (ms * 1e-3) / rate_unit, base_ms / ms, acc.max_rel, acc.max_scaled);
}

// ---------------------------------------------------------------------------------------------
// GPU path.

int gpu_demo(int64_t n, int reps) {
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  std::printf("GPU: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  std::printf("C = A B with n = %lld, entries (U-0.5)*exp(%.1f*N(0,1)), alpha = 1, beta = 0\n\n",
              static_cast<long long>(n), kPhi);

  const size_t count = static_cast<size_t>(n) * n;
  const size_t bytes = count * sizeof(double);
  double *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  check(cudaMalloc(&d_a, bytes), "cudaMalloc(A)");
  check(cudaMalloc(&d_b, bytes), "cudaMalloc(B)");
  check(cudaMalloc(&d_c, bytes), "cudaMalloc(C)");

  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const int blocks = static_cast<int>(std::min<size_t>((count + 255) / 256, 65536));
  fill_random_kernel<<<blocks, 256, 0, stream>>>(d_a, count, kKeyA, kPhi);
  check(cudaGetLastError(), "fill_random_kernel(A)");
  fill_random_kernel<<<blocks, 256, 0, stream>>>(d_b, count, kKeyB, kPhi);
  check(cudaGetLastError(), "fill_random_kernel(B)");

  cublasHandle_t handle = nullptr;
  check(cublasCreate(&handle), "cublasCreate");
  check(cublasSetStream(handle, stream), "cublasSetStream");

  // The three ways to compute C. ozdgemm::dgemm takes cublasDgemm's arguments (64-bit sizes)
  // plus the options; alpha and beta follow the handle's pointer mode (host here).
  const double one = 1.0, zero = 0.0;
  const int ni = static_cast<int>(n);
  struct method {
    std::string name;
    std::function<void()> run;
  };
  auto ozdgemm_method = [&](int moduli, ozdgemm::scaling scaling, const char* name) {
    ozdgemm::options opts;
    opts.num_moduli = moduli;
    opts.scaling = scaling;
    return method{name, [=, &one, &zero]() {
                    check(ozdgemm::dgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d_a, n,
                                         d_b, n, &zero, d_c, n, opts),
                          "ozdgemm::dgemm");
                  }};
  };
  const std::vector<method> methods = {
      {"cublasDgemm (native FP64)",
       [&]() {
         check(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, d_a, ni, d_b, ni,
                           &zero, d_c, ni),
               "cublasDgemm");
       }},
      ozdgemm_method(OZDGEMM_MODULI_CERTIFIED, ozdgemm::scaling::fast,
                     "ozdgemm default (certified s, fast)"),
      ozdgemm_method(15, ozdgemm::scaling::fast, "ozdgemm s=15 fast (fixed)"),
  };

  // The reference at a few hundred random positions, from host copies of A and B.
  std::vector<double> h_a(count), h_b(count), h_c(count);
  check(cudaMemcpyAsync(h_a.data(), d_a, bytes, cudaMemcpyDeviceToHost, stream), "copy A");
  check(cudaMemcpyAsync(h_b.data(), d_b, bytes, cudaMemcpyDeviceToHost, stream), "copy B");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  constexpr int kSamples = 256;
  std::mt19937_64 gen(42);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::vector<int64_t> si(kSamples), sj(kSamples);
  std::vector<reference_entry> ref(kSamples);
  for (int t = 0; t < kSamples; ++t) {
    si[t] = pick(gen);
    sj[t] = pick(gen);
    ref[t] = reference_at(h_a, h_b, n, si[t], sj[t]);
  }

  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  const double flops = 2.0 * n * n * n;
  std::printf(
      "time: median of %d runs after 2 warm-up runs (CUDA events); errors at %d random "
      "entries against double-double\n",
      reps, kSamples);
  print_header("median ms", "TFLOPS", "x native");
  double native_ms = 0.0;
  for (const method& me : methods) {
    for (int w = 0; w < 2; ++w) me.run();  // warm-up: first-call setup, workspace allocation
    std::vector<double> ms(reps);
    for (int r = 0; r < reps; ++r) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      me.run();
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float t = 0.0f;
      check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
      ms[r] = t;
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    if (native_ms == 0.0) native_ms = med;

    // Accuracy: poison C with NaN first, so an entry the method did not write shows.
    check(cudaMemsetAsync(d_c, 0xFF, bytes, stream), "cudaMemset(C)");
    me.run();
    check(cudaMemcpyAsync(h_c.data(), d_c, bytes, cudaMemcpyDeviceToHost, stream), "copy C");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    accuracy acc;
    for (int t = 0; t < kSamples; ++t) add_to(acc, h_c[si[t] + sj[t] * n], ref[t]);
    print_row(me.name, med, flops, 1e12, native_ms, acc);
  }
  std::printf(
      "\nx native = native time / method time. ozdgemm runs s INT8 GEMMs (s = number "
      "of moduli); more moduli keep more bits.\n");

  // ozdgemm caches a private handle and workspace per cuBLAS handle: release them first.
  ozdgemm_release_handle(handle);
  check(cublasDestroy(handle), "cublasDestroy");
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  check(cudaFree(d_a), "cudaFree(A)");
  check(cudaFree(d_b), "cudaFree(B)");
  check(cudaFree(d_c), "cudaFree(C)");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return EXIT_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// Host path: the same arithmetic by the library's CPU reference (integer loops, bit-identical
// to the GPU), against a naive FP64 triple loop, both checked against double-double.

int host_demo(int64_t n) {
  std::printf("C = A B with n = %lld, entries (U-0.5)*exp(%.1f*N(0,1)), alpha = 1, beta = 0\n",
              static_cast<long long>(n), kPhi);
  std::printf("errors over all %lld entries against double-double; time = host wall clock\n\n",
              static_cast<long long>(n * n));
  const size_t count = static_cast<size_t>(n) * n;
  std::vector<double> a(count), b(count), c(count);
  fill_random_host(a, kKeyA, kPhi);
  fill_random_host(b, kKeyB, kPhi);

  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  std::vector<reference_entry> ref(count);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) ref[i + j * n] = reference_at(a, b, n, i, j);
  const double dd_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();

  auto measure = [&](const std::function<void()>& compute, double* ms) {
    std::fill(c.begin(), c.end(), std::nan(""));
    const auto start = clock::now();
    compute();
    *ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    accuracy acc;
    for (size_t t = 0; t < count; ++t) add_to(acc, c[t], ref[t]);
    return acc;
  };

  const double flops = 2.0 * n * n * n;
  double naive_ms = 0.0;
  const accuracy naive = measure(
      [&]() {
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < n; ++i) {
            double s = 0.0;
            for (int64_t l = 0; l < n; ++l) s += a[i + l * n] * b[l + j * n];
            c[i + j * n] = s;
          }
      },
      &naive_ms);

  struct config {
    int moduli;
    ozdgemm::scaling scaling;
    const char* name;
  };
  const config configs[] = {
      {OZDGEMM_MODULI_CERTIFIED, ozdgemm::scaling::fast, "ozdgemm ref default (certified s)"},
      {15, ozdgemm::scaling::fast, "ozdgemm ref s=15 fast (fixed)"}};
  print_header("time ms", "GFLOPS", "x naive");
  print_row("naive FP64 triple loop", naive_ms, flops, 1e9, naive_ms, naive);
  for (const config& cf : configs) {
    ozdgemm::options opts;
    opts.num_moduli = cf.moduli;
    opts.scaling = cf.scaling;
    double ms = 0.0;
    const accuracy acc = measure(
        [&]() {
          check(ozdgemm_dgemm_reference('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0,
                                        c.data(), n, opts.c_value()),
                "ozdgemm_dgemm_reference");
        },
        &ms);
    print_row(cf.name, ms, flops, 1e9, naive_ms, acc);
  }
  std::printf(
      "\n(double-double reference itself: %.1f ms.) The host reference does the INT8 "
      "products as integer loops, so it is slow; on a GPU the same arithmetic runs on "
      "tensor cores and gives bit-identical results.\n",
      dd_ms);
  return EXIT_SUCCESS;
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr, "demo: %s\nusage: demo [--n N] [--reps R]\n", msg);
  std::exit(EXIT_FAILURE);
}

int64_t parse_positive(const char* s, int64_t hi, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 1 || v > hi) usage(what);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 0;  // 0: the default of the path taken
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      n = parse_positive(argv[++i], 46340, "--n wants an integer in [1, 46340]");
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps =
          static_cast<int>(parse_positive(argv[++i], 1000, "--reps wants an integer in [1, 1000]"));
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: demo [--n N] [--reps R]\n");
      return EXIT_SUCCESS;
    } else {
      usage("unknown argument");
    }
  }

  std::printf("ozdgemm %d.%d.%d demo\n", OZDGEMM_VERSION_MAJOR, OZDGEMM_VERSION_MINOR,
              OZDGEMM_VERSION_PATCH);
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    // cudaGetDeviceCount's failure is expected here (no driver): clear it and go on without CUDA.
    (void)cudaGetLastError();
    std::printf("no GPU found: running the bit-exact host reference instead (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    if (n > 512)
      std::printf("note: the host reference is O(s n^3) integer work; n = %lld is slow\n",
                  static_cast<long long>(n));
    return host_demo(n > 0 ? n : 128);
  }
  return gpu_demo(n > 0 ? n : 4096, reps);
}
