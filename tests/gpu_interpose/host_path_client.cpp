// The host path against the device path: cblas_dgemm and dgemm_ on host memory (served by
// libozdgemm's GPU host path, OZDGEMM_MODE=emulate) must give, bit for bit, what ozdgemm_dgemm
// gives on device copies of the same data with the same settings. Covers both CBLAS layouts,
// every transpose pair, padded leading dimensions, beta = 0 and beta != 0, operands larger
// than one staging buffer, and, with OZDGEMM_HOST_TILE, many column tiles.
//
// Linked with libozdgemm (cblas_dgemm and dgemm_ resolve to it). Exit 77 without a GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

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
};

ozdgemm_options_t env_options() {
  ozdgemm_options_t o = ozdgemm_default_options();
  if (const char* s = std::getenv("OZDGEMM_MODULI")) o.num_moduli = std::atoi(s);
  if (const char* s = std::getenv("OZDGEMM_SCALING"))
    o.scaling = std::strcmp(s, "fast") == 0 ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE;
  return o;
}

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
  std::vector<double> a(a_len), b(b_len), c(c_len);
  for (double& x : a) x = nd(gen) * std::exp(1.5 * nd(gen));
  for (double& x : b) x = nd(gen) * std::exp(1.5 * nd(gen));
  for (double& x : c) x = nd(gen);
  std::vector<double> host_c = c;

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
                          ldc, env_options())
          : ozdgemm_dgemm(h, opa, opb, tc.m, tc.n, tc.k, &tc.alpha, da, lda, db, ldb, &tc.beta, dc,
                          ldc, env_options());
  std::vector<double> dev_c(c_len);
  cudaMemcpy(dev_c.data(), dc, c_len * 8, cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  if (st != OZDGEMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "ozdgemm_dgemm: %s\n", ozdgemm_status_string(st));
    return false;
  }
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

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: host-path test not run\n");
    return 77;
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
  for (const test_case& tc : cases) failures += run_case(h, tc, gen) ? 0 : 1;
  cublasDestroy(h);
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
