// A plain cuBLAS program calling every Level-3 routine the library serves besides GEMM (SYRK,
// SYR2K, SYRKX, SYMM, TRMM, TRSM in D and Z; HERK, HER2K, HERKX, HEMM), each in its int and _64
// form, in every uplo/trans/side/diag combination. Run under LD_PRELOAD=libozdgemm.so with
// OZDGEMM_MODE=emulate and a small OZDGEMM_LEVEL3_BLOCK, so that the calls split into emulated
// GEMMs. Each result is checked against the same call on a handle in CUBLAS_PEDANTIC_MATH, which
// the library forwards unchanged (native cuBLAS): within a normwise tolerance, every element
// the routine must not write bit for bit untouched (the other triangle, HERK's input, TRMM's B).
// Also: calls captured into a CUDA graph (before anything else); invalid arguments get cuBLAS's
// status and write nothing; scalars in device memory (forwarded) give native's result.
// check_log.sh then finds every entry emulated in the log.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "client_support.hpp"

namespace {

constexpr int64_t kOrder = 200, kOther = 150, kDepth = 120;

// A call on device buffers A, B, C (doubles; complex data interleaved).
using launch = std::function<cublasStatus_t(cublasHandle_t, double*, double*, double*)>;

// A triangular operand that is well conditioned: off-diagonal entries of order 1/order, the
// diagonal 2 (also where a unit diagonal makes it unread).
std::vector<double> triangular_operand(int64_t order, int64_t lda, bool complex, unsigned seed) {
  const int w = complex ? 2 : 1;
  std::vector<double> a = random_doubles(static_cast<size_t>(lda * order * w), seed);
  for (double& x : a) x /= static_cast<double>(order);
  for (int64_t i = 0; i < order; ++i) a[static_cast<size_t>((i + i * lda) * w)] = 2.0;
  return a;
}

struct results {
  std::vector<double> a, b, c;
  cublasStatus_t status;
};

results run(cublasHandle_t h, const launch& f, const std::vector<double>& a,
            const std::vector<double>& b, const std::vector<double>& c) {
  double *da = nullptr, *db = nullptr, *dc = nullptr;
  cudaMalloc(&da, std::max<size_t>(a.size(), 1) * sizeof(double));
  cudaMalloc(&db, std::max<size_t>(b.size(), 1) * sizeof(double));
  cudaMalloc(&dc, std::max<size_t>(c.size(), 1) * sizeof(double));
  cudaMemcpy(da, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), c.size() * sizeof(double), cudaMemcpyHostToDevice);
  results r{a, b, c, f(h, da, db, dc)};
  cudaDeviceSynchronize();
  cudaMemcpy(r.a.data(), da, a.size() * sizeof(double), cudaMemcpyDeviceToHost);
  cudaMemcpy(r.b.data(), db, b.size() * sizeof(double), cudaMemcpyDeviceToHost);
  cudaMemcpy(r.c.data(), dc, c.size() * sizeof(double), cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return r;
}

int cases = 0;

// The call on both handles from the same inputs: same status; every element native leaves
// untouched is untouched; the rest within tol of native, normwise.
void compare(const std::string& what, cublasHandle_t emulated, cublasHandle_t native,
             const launch& f, const std::vector<double>& a, const std::vector<double>& b,
             const std::vector<double>& c, double tol = 1e-12) {
  ++cases;
  const results want = run(native, f, a, b, c);
  const results got = run(emulated, f, a, b, c);
  CHECK(got.status == want.status, "%s: status %d, native %d", what.c_str(), int(got.status),
        int(want.status));
  const auto check = [&](const char* name, const std::vector<double>& in,
                         const std::vector<double>& g, const std::vector<double>& w) {
    double diff = 0, scale = 0;
    size_t touched = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const bool untouched_by_native = std::memcmp(&w[i], &in[i], sizeof(double)) == 0;
      if (untouched_by_native && std::memcmp(&g[i], &in[i], sizeof(double)) != 0) {
        CHECK(false, "%s: %s[%zu] written (%.17g, was %.17g)", what.c_str(), name, i, g[i], in[i]);
        return;
      }
      if (!untouched_by_native) ++touched;
      diff = std::max(diff, std::fabs(g[i] - w[i]));
      scale = std::max(scale, std::fabs(w[i]));
    }
    CHECK(!(diff > tol * std::max(scale, 1.0)), "%s: %s differs from native by %.3g (scale %.3g)",
          what.c_str(), name, diff, scale);
  };
  check("A", a, got.a, want.a);
  check("B", b, got.b, want.b);
  check("C", c, got.c, want.c);
}

const char* op_name(cublasOperation_t t) {
  return t == CUBLAS_OP_N ? "N" : t == CUBLAS_OP_T ? "T" : "C";
}
const char* fill_name(cublasFillMode_t u) { return u == CUBLAS_FILL_MODE_LOWER ? "L" : "U"; }

template <class... Args>
std::string label(const char* routine, Args... parts) {
  std::string s = routine;
  for (const char* p : {parts...}) s += std::string(" ") + p;
  return s;
}

// The cuBLAS element type and its size in doubles.
template <class T>
constexpr int width() {
  return sizeof(T) / sizeof(double);
}

template <class T>
const T* as(const double* p) {
  return reinterpret_cast<const T*>(p);
}
template <class T>
T* as(double* p) {
  return reinterpret_cast<T*>(p);
}

// SYRK, HERK (alpha, beta of type S) and SYR2K, HER2K, SYRKX, HERKX (beta of type SB).
template <class T, class S, class Fn, class Fn64>
void rank_k(const char* name, cublasHandle_t h, cublasHandle_t nat, Fn fn, Fn64 fn64,
            std::vector<cublasOperation_t> ops, S alpha, S beta) {
  const int w = width<T>();
  for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
    for (cublasOperation_t trans : ops)
      for (bool wide : {false, true}) {
        const int64_t n = kOrder, k = kDepth;
        const int64_t rows = trans == CUBLAS_OP_N ? n : k, cols = trans == CUBLAS_OP_N ? k : n;
        const int64_t lda = rows + 3, ldc = n + 2;
        const auto a = random_doubles(static_cast<size_t>(lda * cols * w), 1);
        const auto c = random_doubles(static_cast<size_t>(ldc * n * w), 3);
        launch f = [=](cublasHandle_t hh, double* A, double*, double* C) {
          return wide ? fn64(hh, uplo, trans, n, k, &alpha, as<T>(A), lda, &beta, as<T>(C), ldc)
                      : fn(hh, uplo, trans, int(n), int(k), &alpha, as<T>(A), int(lda), &beta,
                           as<T>(C), int(ldc));
        };
        compare(label(name, fill_name(uplo), op_name(trans), wide ? "_64" : "int"), h, nat, f, a,
                {}, c);
      }
}

template <class T, class SB, class Fn, class Fn64>
void rank_2k(const char* name, cublasHandle_t h, cublasHandle_t nat, Fn fn, Fn64 fn64,
             std::vector<cublasOperation_t> ops, T alpha, SB beta) {
  const int w = width<T>();
  for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
    for (cublasOperation_t trans : ops)
      for (bool wide : {false, true}) {
        const int64_t n = kOrder, k = kDepth;
        const int64_t rows = trans == CUBLAS_OP_N ? n : k, cols = trans == CUBLAS_OP_N ? k : n;
        const int64_t lda = rows + 3, ldb = rows + 1, ldc = n + 2;
        const auto a = random_doubles(static_cast<size_t>(lda * cols * w), 1);
        const auto b = random_doubles(static_cast<size_t>(ldb * cols * w), 2);
        const auto c = random_doubles(static_cast<size_t>(ldc * n * w), 3);
        launch f = [=](cublasHandle_t hh, double* A, double* B, double* C) {
          return wide ? fn64(hh, uplo, trans, n, k, &alpha, as<T>(A), lda, as<T>(B), ldb, &beta,
                             as<T>(C), ldc)
                      : fn(hh, uplo, trans, int(n), int(k), &alpha, as<T>(A), int(lda), as<T>(B),
                           int(ldb), &beta, as<T>(C), int(ldc));
        };
        compare(label(name, fill_name(uplo), op_name(trans), wide ? "_64" : "int"), h, nat, f, a,
                b, c);
      }
}

template <class T, class Fn, class Fn64>
void symm(const char* name, cublasHandle_t h, cublasHandle_t nat, Fn fn, Fn64 fn64, T alpha,
          T beta) {
  const int w = width<T>();
  for (cublasSideMode_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (bool wide : {false, true}) {
        const bool left = side == CUBLAS_SIDE_LEFT;
        const int64_t m = left ? kOrder : kOther, n = left ? kOther : kOrder;
        const int64_t ka = left ? m : n, lda = ka + 1, ldb = m + 2, ldc = m + 3;
        const auto a = random_doubles(static_cast<size_t>(lda * ka * w), 4);
        const auto b = random_doubles(static_cast<size_t>(ldb * n * w), 5);
        const auto c = random_doubles(static_cast<size_t>(ldc * n * w), 6);
        launch f = [=](cublasHandle_t hh, double* A, double* B, double* C) {
          return wide ? fn64(hh, side, uplo, m, n, &alpha, as<T>(A), lda, as<T>(B), ldb, &beta,
                             as<T>(C), ldc)
                      : fn(hh, side, uplo, int(m), int(n), &alpha, as<T>(A), int(lda), as<T>(B),
                           int(ldb), &beta, as<T>(C), int(ldc));
        };
        compare(label(name, left ? "left" : "right", fill_name(uplo), wide ? "_64" : "int"), h,
                nat, f, a, b, c);
      }
}

// TRMM (out of place into C, and in place with C = B) and TRSM.
template <bool solve, class T, class Fn, class Fn64>
void triangular(const char* name, cublasHandle_t h, cublasHandle_t nat, Fn fn, Fn64 fn64,
                std::vector<cublasOperation_t> ops, T alpha) {
  const int w = width<T>();
  for (cublasSideMode_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (cublasOperation_t trans : ops)
        for (cublasDiagType_t diag : {CUBLAS_DIAG_NON_UNIT, CUBLAS_DIAG_UNIT})
          for (int form = 0; form < (solve ? 2 : 3); ++form) {
            // form: 0 int, 1 _64; TRMM 2: _64 in place (C = B)
            const bool left = side == CUBLAS_SIDE_LEFT;
            const int64_t m = left ? kOrder : kOther, n = left ? kOther : kOrder;
            const int64_t ka = left ? m : n, lda = ka + 1, ldb = m + 2, ldc = m + 3;
            const auto a = triangular_operand(ka, lda, w == 2, 7);
            const auto b = random_doubles(static_cast<size_t>(ldb * n * w), 8);
            const auto c = solve || form == 2 ? std::vector<double>()
                                              : random_doubles(static_cast<size_t>(ldc * n * w), 9);
            launch f = [=](cublasHandle_t hh, double* A, double* B, double* C) -> cublasStatus_t {
              if constexpr (solve) {
                (void)C;
                return form == 1 ? fn64(hh, side, uplo, trans, diag, m, n, &alpha, as<T>(A), lda,
                                        as<T>(B), ldb)
                                 : fn(hh, side, uplo, trans, diag, int(m), int(n), &alpha,
                                      as<T>(A), int(lda), as<T>(B), int(ldb));
              } else {
                if (form == 2)
                  return fn64(hh, side, uplo, trans, diag, m, n, &alpha, as<T>(A), lda, as<T>(B),
                              ldb, as<T>(B), ldb);
                return form == 1 ? fn64(hh, side, uplo, trans, diag, m, n, &alpha, as<T>(A), lda,
                                        as<T>(B), ldb, as<T>(C), ldc)
                                 : fn(hh, side, uplo, trans, diag, int(m), int(n), &alpha,
                                      as<T>(A), int(lda), as<T>(B), int(ldb), as<T>(C), int(ldc));
              }
            };
            compare(label(name, left ? "left" : "right", fill_name(uplo), op_name(trans),
                          diag == CUBLAS_DIAG_UNIT ? "unit" : "non-unit",
                          form == 0 ? "int" : form == 1 ? "_64" : "_64 in place"),
                    h, nat, f, a, b, c);
          }
}

void every_routine(cublasHandle_t h, cublasHandle_t nat) {
  using cz = cuDoubleComplex;
  const std::vector<cublasOperation_t> real_ops{CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  const cz za{0.75, 0.5}, zb{-0.5, 0.25};
  rank_k<double>("cublasDsyrk_v2", h, nat, cublasDsyrk_v2, cublasDsyrk_v2_64, real_ops, 0.75, -0.5);
  rank_k<cz>("cublasZsyrk_v2", h, nat, cublasZsyrk_v2, cublasZsyrk_v2_64, {CUBLAS_OP_N, CUBLAS_OP_T},
             za, zb);
  rank_k<cz>("cublasZherk_v2", h, nat, cublasZherk_v2, cublasZherk_v2_64, {CUBLAS_OP_N, CUBLAS_OP_C},
             0.75, -0.5);
  rank_2k<double>("cublasDsyr2k_v2", h, nat, cublasDsyr2k_v2, cublasDsyr2k_v2_64, real_ops, 0.75,
                  -0.5);
  rank_2k<cz>("cublasZsyr2k_v2", h, nat, cublasZsyr2k_v2, cublasZsyr2k_v2_64,
              {CUBLAS_OP_N, CUBLAS_OP_T}, za, zb);
  rank_2k<cz>("cublasZher2k_v2", h, nat, cublasZher2k_v2, cublasZher2k_v2_64,
              {CUBLAS_OP_N, CUBLAS_OP_C}, za, -0.5);
  rank_2k<double>("cublasDsyrkx", h, nat, cublasDsyrkx, cublasDsyrkx_64, real_ops, 0.75, -0.5);
  rank_2k<cz>("cublasZsyrkx", h, nat, cublasZsyrkx, cublasZsyrkx_64, {CUBLAS_OP_N, CUBLAS_OP_T}, za,
              zb);
  rank_2k<cz>("cublasZherkx", h, nat, cublasZherkx, cublasZherkx_64, {CUBLAS_OP_N, CUBLAS_OP_C}, za,
              -0.5);
  symm<double>("cublasDsymm_v2", h, nat, cublasDsymm_v2, cublasDsymm_v2_64, 0.75, -0.5);
  symm<cz>("cublasZsymm_v2", h, nat, cublasZsymm_v2, cublasZsymm_v2_64, za, zb);
  symm<cz>("cublasZhemm_v2", h, nat, cublasZhemm_v2, cublasZhemm_v2_64, za, zb);
  triangular<false, double>("cublasDtrmm_v2", h, nat, cublasDtrmm_v2, cublasDtrmm_v2_64, real_ops,
                            0.75);
  triangular<false, cz>("cublasZtrmm_v2", h, nat, cublasZtrmm_v2, cublasZtrmm_v2_64, real_ops, za);
  triangular<true, double>("cublasDtrsm_v2", h, nat, cublasDtrsm_v2, cublasDtrsm_v2_64, real_ops,
                           0.75);
  triangular<true, cz>("cublasZtrsm_v2", h, nat, cublasZtrsm_v2, cublasZtrsm_v2_64, real_ops, za);
}

// The call captured into a CUDA graph (global mode) on a stream of its own, then the graph
// launched once: everything the library enqueues for a split call (GEMM blocks, TRSM's diagonal
// solve) must be capturable.
launch captured(launch f) {
  return [f](cublasHandle_t hh, double* A, double* B, double* C) -> cublasStatus_t {
    cudaStream_t before = nullptr, s = nullptr;
    cublasGetStream(hh, &before);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cublasSetStream(hh, s);
    cublasStatus_t st = CUBLAS_STATUS_EXECUTION_FAILED;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t e = nullptr;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess) {
      st = f(hh, A, B, C);
      if (cudaStreamEndCapture(s, &g) != cudaSuccess ||
          cudaGraphInstantiate(&e, g, 0) != cudaSuccess || cudaGraphLaunch(e, s) != cudaSuccess ||
          cudaStreamSynchronize(s) != cudaSuccess)
        st = CUBLAS_STATUS_EXECUTION_FAILED;
    }
    if (e != nullptr) cudaGraphExecDestroy(e);
    if (g != nullptr) cudaGraphDestroy(g);
    cublasSetStream(hh, before);
    cudaStreamDestroy(s);
    return st;
  };
}

// Captured calls, first in the process (the library's kernels not yet loaded): TRSM on both
// sides (the diagonal solve's kernels), SYRK.
void graph_capture(cublasHandle_t h, cublasHandle_t nat) {
  const double alpha = 0.75, beta = -0.5;
  const cuDoubleComplex za{0.75, 0.5};
  const int64_t n = kOrder, m = kOther, k = kDepth;
  {
    const auto a = triangular_operand(n, n + 1, false, 7);
    const auto b = random_doubles(static_cast<size_t>((n + 2) * m), 8);
    compare("cublasDtrsm_v2 left L N non-unit, captured", h, nat,
            captured([=](cublasHandle_t hh, double* A, double* B, double*) {
              return cublasDtrsm_v2(hh, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                    CUBLAS_DIAG_NON_UNIT, int(n), int(m), &alpha, A, int(n + 1), B,
                                    int(n + 2));
            }),
            a, b, {});
  }
  {
    const auto a = triangular_operand(n, n + 1, true, 7);
    const auto b = random_doubles(static_cast<size_t>((m + 2) * n * 2), 8);
    compare("cublasZtrsm_v2 right U C unit, captured", h, nat,
            captured([=](cublasHandle_t hh, double* A, double* B, double*) {
              return cublasZtrsm_v2(hh, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C,
                                    CUBLAS_DIAG_UNIT, int(m), int(n), &za, as<cuDoubleComplex>(A),
                                    int(n + 1), as<cuDoubleComplex>(B), int(m + 2));
            }),
            a, b, {});
  }
  {
    const auto a = random_doubles(static_cast<size_t>(n * k), 1);
    const auto c = random_doubles(static_cast<size_t>(n * n), 3);
    compare("cublasDsyrk_v2 L N, captured", h, nat,
            captured([=](cublasHandle_t hh, double* A, double*, double* C) {
              return cublasDsyrk_v2(hh, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, int(n), int(k), &alpha,
                                    A, int(n), &beta, C, int(n));
            }),
            a, {}, c);
  }
}

// Invalid arguments (cuBLAS's status, nothing written), the trivial calls, and scalars in device
// memory (forwarded): the same as native.
void semantics(cublasHandle_t h, cublasHandle_t nat) {
  const int64_t n = kOrder, k = kDepth, lda = n, ldc = n;
  const auto a = random_doubles(static_cast<size_t>(lda * k), 1);
  const auto c = random_doubles(static_cast<size_t>(ldc * n), 3);
  const double alpha = 0.75, beta = -0.5, zero = 0.0, one = 1.0;
  const auto syrk = [&](const char* what, int nn, int kk, int ld, cublasFillMode_t u,
                        const double* al, const double* be) {
    launch f = [=](cublasHandle_t hh, double* A, double*, double* C) {
      return cublasDsyrk_v2(hh, u, CUBLAS_OP_N, nn, kk, al, A, ld, be, C, int(ldc));
    };
    compare(what, h, nat, f, a, {}, c);
  };
  syrk("DSYRK n < 0", -1, int(k), int(lda), CUBLAS_FILL_MODE_LOWER, &alpha, &beta);
  syrk("DSYRK lda < n", int(n), int(k), int(n) - 1, CUBLAS_FILL_MODE_LOWER, &alpha, &beta);
  syrk("DSYRK uplo full", int(n), int(k), int(lda), CUBLAS_FILL_MODE_FULL, &alpha, &beta);
  syrk("DSYRK alpha = 0", int(n), int(k), int(lda), CUBLAS_FILL_MODE_LOWER, &zero, &beta);
  syrk("DSYRK beta = 0", int(n), int(k), int(lda), CUBLAS_FILL_MODE_UPPER, &alpha, &zero);
  syrk("DSYRK k = 0", int(n), 0, int(lda), CUBLAS_FILL_MODE_LOWER, &alpha, &one);
  {
    const auto b = random_doubles(static_cast<size_t>(n * n), 8);
    launch f = [=](cublasHandle_t hh, double* A, double* B, double*) {
      return cublasDtrsm_v2(hh, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                            static_cast<cublasDiagType_t>(7), int(n), int(n), &alpha, A, int(n), B,
                            int(n));
    };
    compare("DTRSM invalid diag", h, nat, f, triangular_operand(n, n, false, 7), b, {});
  }
  // Scalars in device memory: forwarded, native's bits.
  double* dscalars = nullptr;
  cudaMalloc(&dscalars, 2 * sizeof(double));
  const double host_scalars[2] = {alpha, beta};
  cudaMemcpy(dscalars, host_scalars, sizeof host_scalars, cudaMemcpyHostToDevice);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
  cublasSetPointerMode(nat, CUBLAS_POINTER_MODE_DEVICE);
  syrk("DSYRK scalars on the device", int(n), int(k), int(lda), CUBLAS_FILL_MODE_LOWER, dscalars,
       dscalars + 1);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  cublasSetPointerMode(nat, CUBLAS_POINTER_MODE_HOST);
  cudaFree(dscalars);
}

}  // namespace

int main() {
  cublasHandle_t h = nullptr, nat = nullptr;
  if (const int status = test_and_native_handles(&h, &nat)) return status;
  graph_capture(h, nat);
  every_routine(h, nat);
  semantics(h, nat);
  cublasDestroy(h);
  cublasDestroy(nat);
  std::printf("%d cases, %d failures\n", cases, failures.load());
  return failures == 0 ? 0 : 1;
}
