// The host path against the device path: cblas_dgemm and dgemm_ on host memory (served by
// libozdgemm's GPU host path, OZDGEMM_MODE=emulate) must give, bit for bit, what ozdgemm_dgemm
// gives on device copies of the same data with the same settings. Covers both CBLAS layouts,
// every transpose pair, padded leading dimensions, beta = 0 and beta != 0, operands larger
// than one staging buffer, and, with OZDGEMM_HOST_TILE, many column tiles.
//
// Multi-worker host path (OZDGEMM_HOST_WORKERS_PER_DEVICE, OZDGEMM_DEVICES):
//   --digest-out FILE / --digest-in FILE  write, or compare with, a digest of every C bit of the
//       run: a run with several workers must give the single-worker run's bits exactly.
//   wide   instead of the usual cases, two wide column-major calls (C read, beta != 0) whose
//       tiles span two download chunks, for the failure tests (OZDGEMM_HOST_FAIL_AFTER,
//       OZDGEMM_INJECT_FAULT).
//   --cpu-columns none|some|all  every column of C must then be, bit for bit, either the device
//       result or what the CPU BLAS (libblas.so.3, loaded here with dlopen) computes for that
//       column alone: `none` requires the GPU to have done all of them, `some` requires the
//       CPU BLAS to have finished at least one (and the GPU at least one), `all` requires every
//       column from the CPU BLAS. A column computed twice (beta reads C) or not at all matches
//       neither.
//   heavy  instead of the usual cases, two calls on data with an extreme exponent spread
//       ((U - 0.5) exp(8 N(0, 1))), where OZDGEMM_MODULI=auto finds no s <= 20 (with
//       --cpu-columns all: the CPU BLAS must then do the whole call).
//   large  instead of the usual cases, two calls whose A, B and C all exceed 64 MiB (what
//       OZDGEMM_HOST_REGISTER registers), with beta = 0 (C written directly), padded leading
//       dimensions and transposes (pitched copies), wide enough for many tiles and workers.
//   --app-pinned  the program page-locks its own A, B and C (cudaHostRegister) around each host
//       call: the library must find them registered already and stage them.
//   --min-gpus N  exit 77 (skip) with fewer than N GPUs visible.
//
// OZDGEMM_MODULI (a count or `auto`), OZDGEMM_ACCURACY (`native`, `max` or bits) and
// OZDGEMM_SCALING set the options of the device-side ozdgemm_dgemm as the library reads them
// for a host call (host_env_options: `native` is the CPU BLAS's bound there).
//
// Linked with libozdgemm (cblas_dgemm and dgemm_ resolve to it). Exit 77 without a GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "env_options.hpp"
#include "ozdgemm/ozdgemm.h"

extern "C" {
void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, size_t, size_t);
}

namespace {

constexpr int kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112;
int failures = 0;

struct test_case {
  int layout;
  bool ta, tb;
  int m, n, k, pad;
  double alpha, beta;
  bool fortran;
  double spread = 1.5;  // data: N(0, 1) exp(spread N(0, 1)); heavy: (U - 0.5) exp(spread N)
  bool uniform = false;
};

using dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*,
                          const double*, const double*, const int*, const double*, const int*,
                          const double*, double*, const int*, size_t, size_t);
enum class cpu_columns { unchecked, none, some, all };
cpu_columns cpu_check = cpu_columns::unchecked;
bool app_pinned = false;
dgemm_fn cpu_dgemm = nullptr;  // the CPU BLAS's own dgemm_, not libozdgemm's
uint64_t digest = 1469598103934665603ull;  // FNV-1a over every C bit of the run

void add_to_digest(const std::vector<double>& c) {
  const auto* p = reinterpret_cast<const unsigned char*>(c.data());
  for (size_t i = 0; i < c.size() * sizeof(double); ++i)
    digest = (digest ^ p[i]) * 1099511628211ull;
}

// Column-major calls only: every column of the inside of C is the device's bits or the CPU
// BLAS's bits for that column computed from the original C.
bool columns_ok(const test_case& tc, const std::vector<double>& c0,
                const std::vector<double>& host_c, const std::vector<double>& dev_c, int ldc,
                int lda, int ldb, const std::vector<double>& a, const std::vector<double>& b);

bool run_case(cublasHandle_t h, const test_case& tc, std::mt19937_64& gen) {
  // Stored shapes in the caller's layout: A is m x k (k x m if transposed), and so on.
  const bool row = tc.layout == kRowMajor;
  const int a_rows = tc.ta ? tc.k : tc.m, a_cols = tc.ta ? tc.m : tc.k;
  const int b_rows = tc.tb ? tc.n : tc.k, b_cols = tc.tb ? tc.k : tc.n;
  // Leading dimension: the length of a stored row (row-major) or column (column-major).
  const int lda = (row ? a_cols : a_rows) + tc.pad, ldb = (row ? b_cols : b_rows) + tc.pad;
  const int ldc = (row ? tc.n : tc.m) + tc.pad;
  const size_t a_len = static_cast<size_t>(lda) * (row ? a_rows : a_cols);
  const size_t b_len = static_cast<size_t>(ldb) * (row ? b_rows : b_cols);
  const size_t c_len = static_cast<size_t>(ldc) * (row ? tc.m : tc.n);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(-0.5, 0.5);
  std::vector<double> a(a_len), b(b_len), c(c_len);
  auto draw = [&] { return (tc.uniform ? ud(gen) : nd(gen)) * std::exp(tc.spread * nd(gen)); };
  for (double& x : a) x = draw();
  for (double& x : b) x = draw();
  for (double& x : c) x = nd(gen);
  std::vector<double> host_c = c;

  // The application's own page-locking, released after the call (before the vectors go).
  std::vector<void*> pinned;
  if (app_pinned)
    for (std::vector<double>* v : {&a, &b, &host_c}) {
      if (cudaHostRegister(v->data(), v->size() * 8, cudaHostRegisterDefault) != cudaSuccess) {
        std::fprintf(stderr, "cudaHostRegister failed: %s\n",
                     cudaGetErrorString(cudaGetLastError()));
        return false;
      }
      pinned.push_back(v->data());
    }
  const auto t0 = std::chrono::steady_clock::now();
  if (tc.fortran) {
    const char ta = tc.ta ? 'T' : 'N', tb = tc.tb ? 'T' : 'N';
    dgemm_(&ta, &tb, &tc.m, &tc.n, &tc.k, &tc.alpha, a.data(), &lda, b.data(), &ldb, &tc.beta,
           host_c.data(), &ldc, 1, 1);
  } else {
    cblas_dgemm(tc.layout, tc.ta ? kTrans : kNoTrans, tc.tb ? kTrans : kNoTrans, tc.m, tc.n, tc.k,
                tc.alpha, a.data(), lda, b.data(), ldb, tc.beta, host_c.data(), ldc);
  }
  const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (void* p : pinned) cudaHostUnregister(p);

  // The same product on the device, in column-major terms: a row-major call is
  // C^T = op(B)^T op(A)^T on the same buffers.
  double *da, *db, *dc;
  if (cudaMalloc(&da, a_len * 8) || cudaMalloc(&db, b_len * 8) || cudaMalloc(&dc, c_len * 8)) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return false;
  }
  cudaMemcpy(da, a.data(), a_len * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b_len * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), c_len * 8, cudaMemcpyHostToDevice);
  const cublasOperation_t opa = tc.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = tc.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const ozdgemm_status_t st =
      row ? ozdgemm_dgemm(h, opb, opa, tc.n, tc.m, tc.k, &tc.alpha, db, ldb, da, lda, &tc.beta, dc,
                          ldc, host_env_options())
          : ozdgemm_dgemm(h, opa, opb, tc.m, tc.n, tc.k, &tc.alpha, da, lda, db, ldb, &tc.beta, dc,
                          ldc, host_env_options());
  std::vector<double> dev_c(c_len);
  cudaMemcpy(dev_c.data(), dc, c_len * 8, cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  if (st != OZDGEMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "ozdgemm_dgemm: %s\n", ozdgemm_status_string(st));
    return false;
  }
  add_to_digest(host_c);
  if (cpu_check != cpu_columns::unchecked)
    return columns_ok(tc, c, host_c, dev_c, ldc, lda, ldb, a, b);
  size_t differ = 0, changed = 0;
  for (size_t i = 0; i < c_len; ++i) {
    differ += std::memcmp(&host_c[i], &dev_c[i], 8) != 0;
    changed += std::memcmp(&host_c[i], &c[i], 8) != 0;
  }
  // Padding rows/columns of C must be untouched, so not every element changes; every element
  // inside the product must (alpha != 0 and random data).
  const size_t inside = static_cast<size_t>(tc.m) * tc.n;
  const bool ok = differ == 0 && changed == inside;
  std::printf("%s %s %c%c %dx%dx%d pad %d beta %g: %zu of %zu differ, %zu changed, host %.3f s %s\n",
              tc.fortran ? "dgemm_     " : "cblas_dgemm", row ? "row" : "col", tc.ta ? 'T' : 'N',
              tc.tb ? 'T' : 'N', tc.m, tc.n, tc.k, tc.pad, tc.beta, differ, c_len, changed, host_s,
              ok ? "ok" : "FAIL");
  return ok;
}

bool columns_ok(const test_case& tc, const std::vector<double>& c0,
                const std::vector<double>& host_c, const std::vector<double>& dev_c, int ldc,
                int lda, int ldb, const std::vector<double>& a, const std::vector<double>& b) {
  if (tc.layout != kColMajor || cpu_dgemm == nullptr) {
    std::fprintf(stderr, "column check: column-major cases and a CPU BLAS only\n");
    return false;
  }
  std::vector<double> cpu_c = c0;
  const char ta = tc.ta ? 'T' : 'N', tb = tc.tb ? 'T' : 'N';
  cpu_dgemm(&ta, &tb, &tc.m, &tc.n, &tc.k, &tc.alpha, a.data(), &lda, b.data(), &ldb, &tc.beta,
            cpu_c.data(), &ldc, 1, 1);
  int gpu_cols = 0, cpu_cols = 0, bad_cols = 0;
  const bool all_cpu = cpu_check == cpu_columns::all;
  for (int j = 0; j < tc.n; ++j) {
    const size_t col = static_cast<size_t>(j) * ldc;
    const size_t bytes = static_cast<size_t>(tc.m) * 8;
    // `all`: the CPU BLAS's bits first (the device side ran cuBLAS's native DGEMM then, which
    // could agree with it on a column by chance).
    if (all_cpu && std::memcmp(&host_c[col], &cpu_c[col], bytes) == 0)
      ++cpu_cols;
    else if (std::memcmp(&host_c[col], &dev_c[col], bytes) == 0)
      ++gpu_cols;
    else if (std::memcmp(&host_c[col], &cpu_c[col], bytes) == 0) ++cpu_cols;
    else ++bad_cols;
  }
  // Padding rows of C untouched.
  size_t pad_changed = 0;
  for (int j = 0; j < tc.n; ++j)
    for (int i = tc.m; i < ldc; ++i) {
      const size_t e = static_cast<size_t>(j) * ldc + i;
      pad_changed += std::memcmp(&host_c[e], &c0[e], 8) != 0;
    }
  const bool ok =
      bad_cols == 0 && pad_changed == 0 &&
      (all_cpu ? cpu_cols == tc.n
               : gpu_cols > 0 && (cpu_check == cpu_columns::none ? cpu_cols == 0 : cpu_cols > 0));
  std::printf(
      "%s %c%c %dx%dx%d beta %g: %d columns from the GPU, %d from the CPU BLAS, %d wrong, "
      "%zu padding changed (want %s CPU BLAS columns) %s\n",
      tc.fortran ? "dgemm_     " : "cblas_dgemm", ta, tb, tc.m, tc.n, tc.k, tc.beta, gpu_cols,
      cpu_cols, bad_cols, pad_changed,
      cpu_check == cpu_columns::none ? "no"
      : all_cpu                      ? "all"
                                     : "some",
      ok ? "ok" : "FAIL");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  bool wide = false, heavy = false, large = false;
  int min_gpus = 1;
  std::string digest_out, digest_in;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "wide") {
      wide = true;
    } else if (arg == "heavy") {
      heavy = true;
    } else if (arg == "large") {
      large = true;
    } else if (arg == "--app-pinned") {
      app_pinned = true;
    } else if (arg == "--min-gpus" && i + 1 < argc) {
      min_gpus = std::atoi(argv[++i]);
    } else if (arg == "--digest-out" && i + 1 < argc) {
      digest_out = argv[++i];
    } else if (arg == "--digest-in" && i + 1 < argc) {
      digest_in = argv[++i];
    } else if (arg == "--cpu-columns" && i + 1 < argc) {
      const std::string v = argv[++i];
      cpu_check = v == "none"  ? cpu_columns::none
                  : v == "all" ? cpu_columns::all
                               : cpu_columns::some;
    } else {
      std::fprintf(stderr,
                   "usage: host_path_client [wide|heavy|large] [--digest-out F] [--digest-in F] "
                   "[--cpu-columns none|some|all] [--app-pinned] [--min-gpus N]\n");
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: host-path test not run\n");
    return 77;
  }
  if (count < min_gpus) {
    std::printf("%d GPU(s), this test needs %d: not run\n", count, min_gpus);
    return 77;
  }
  if (cpu_check != cpu_columns::unchecked) {
    // The same library the hooks use as their CPU BLAS (libblas.so.3 on LD_LIBRARY_PATH), its
    // own definition: dlsym on its handle, not the process's (which is libozdgemm's).
    void* blas = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
    if (blas != nullptr) cpu_dgemm = reinterpret_cast<dgemm_fn>(dlsym(blas, "dgemm_"));
    if (cpu_dgemm == nullptr) {
      std::fprintf(stderr, "no libblas.so.3 to check the CPU BLAS's columns against\n");
      return 1;
    }
  }
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  std::mt19937_64 gen(2026);
  const test_case cases[] = {
      {kColMajor, false, false, 1000, 3000, 700, 0, 1.0, 0.5, false},
      {kColMajor, true, false, 513, 2049, 1025, 3, -2.0, 0.0, false},
      {kColMajor, false, true, 640, 1111, 257, 1, 0.75, 1.0, false},
      {kColMajor, true, true, 300, 1500, 64, 0, 1.0, -1.0, false},
      {kRowMajor, false, false, 700, 1500, 300, 2, 1.0, 0.0, false},
      {kRowMajor, true, false, 257, 900, 513, 0, 3.0, 2.0, false},
      {kRowMajor, false, true, 1200, 400, 800, 5, 1.0, 1.0, false},
      {kRowMajor, true, true, 100, 2500, 100, 0, -1.0, 0.25, false},
      {kColMajor, false, true, 900, 1300, 600, 7, 1.0, 1.0, true},
      {kColMajor, true, false, 33, 17, 4000, 0, 1.0, 0.0, true},
      // Operands and C larger than one 64 MiB staging buffer (8M elements).
      {kColMajor, false, false, 3000, 3000, 3000, 0, 1.0, 1.0, false},
  };
  // Wide column-major calls with C read (beta != 0): with OZDGEMM_HOST_TILE=3000, four and
  // five tiles whose C spans two download chunks (8M elements / 4100 rows = 2046 columns),
  // so a worker can fail with part of a tile written. More tiles than the failure tests'
  // workers: when every worker fails in its second tile, some columns are left to the CPU.
  const test_case wide_cases[] = {
      {kColMajor, false, false, 4100, 12000, 128, 0, 1.0, 0.5, false},
      {kColMajor, true, true, 4100, 15000, 96, 1, -1.0, 1.0, true},
  };
  // Exponent spread phi = 8: no s <= 20 meets native's bound (docs/auto.md, section 4).
  const test_case heavy_cases[] = {
      {kColMajor, false, false, 520, 700, 300, 0, 1.0, 0.5, false, 8.0, true},
      {kColMajor, true, false, 300, 400, 500, 2, -1.0, 0.0, true, 8.0, true},
  };
  // A, B and C over 64 MiB (8M doubles) each, beta = 0, pitched and transposed; at the default
  // tiles, 3 tiles each for one worker, more with several.
  const test_case large_cases[] = {
      {kColMajor, false, false, 2900, 4600, 2950, 1, 1.0, 0.0, false},
      {kColMajor, true, true, 4200, 4500, 2100, 3, -0.5, 0.0, true},
  };
  if (heavy) {
    for (const test_case& tc : heavy_cases) failures += run_case(h, tc, gen) ? 0 : 1;
  } else if (large) {
    for (const test_case& tc : large_cases) failures += run_case(h, tc, gen) ? 0 : 1;
  } else if (wide) {
    for (const test_case& tc : wide_cases) failures += run_case(h, tc, gen) ? 0 : 1;
  } else {
    for (const test_case& tc : cases) failures += run_case(h, tc, gen) ? 0 : 1;
  }
  cublasDestroy(h);
  std::printf("digest of every C: %016llx\n", static_cast<unsigned long long>(digest));
  if (!digest_out.empty()) {
    FILE* f = std::fopen(digest_out.c_str(), "w");
    if (f == nullptr || std::fprintf(f, "%016llx\n", static_cast<unsigned long long>(digest)) < 0)
      ++failures;
    if (f != nullptr) std::fclose(f);
  }
  if (!digest_in.empty()) {
    FILE* f = std::fopen(digest_in.c_str(), "r");
    unsigned long long want = 0;
    if (f == nullptr || std::fscanf(f, "%llx", &want) != 1) {
      std::printf("no digest in %s (run the single-worker test first)\n", digest_in.c_str());
      ++failures;
    } else if (want != digest) {
      std::printf("digest differs from the single-worker run's %016llx: FAIL\n", want);
      ++failures;
    } else {
      std::printf("digest equals the single-worker run's: ok\n");
    }
    if (f != nullptr) std::fclose(f);
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
