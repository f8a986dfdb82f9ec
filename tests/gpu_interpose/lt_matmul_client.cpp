// The library's cublasLtMatmul (ozdgemm_audit_cublasLtMatmul, what the audit module hands a
// program that takes cuBLASLt's entry points with dlsym), called as such a program would, under
// LD_PRELOAD=libozdgemm.so with OZDGEMM_CUBLASLT=on, OZDGEMM_MODE=emulate and a fixed
// OZDGEMM_MODULI. Every served call must equal, bit for bit, the intercepted cublasDgemm_v2_64 /
// cublasZgemm_v2_64 on the same data (the same engine): real and complex, every op pair, D
// apart from C with beta != 0 (C copied), beta = 0 with NaN in C (C not read), D in place of
// C, a strided batch. Calls the library does not serve (an epilogue, FP32) must equal cuBLASLt's
// own result bit for bit. check_log.sh then finds cublasLtMatmul emulated in the log.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "client_support.hpp"

namespace {

using lt_fn = decltype(&cublasLtMatmul);

cublasLtMatrixLayout_t layout(cudaDataType t, int64_t rows, int64_t cols, int64_t ld, int32_t batch,
                              int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld);
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                   sizeof stride);
  return l;
}

struct lt_case {
  const char* name;
  bool complex;
  cublasOperation_t ta, tb;
  int64_t m, n, k;
  int32_t batch;
  bool in_place;  // D is C
  double beta;    // real part; complex beta is (beta, 0.25 beta)
  bool nan_in_c;  // C holds NaN (read only when beta != 0)
};

int cases = 0;

// One case through `lt` (the library's entry point) against the intercepted GEMM per matrix on
// handle h (emulated at the same fixed s): bitwise.
void run_case(const lt_case& c, lt_fn lt, cublasLtHandle_t light, cublasHandle_t h) {
  ++cases;
  const int w = c.complex ? 2 : 1;
  const cudaDataType t = c.complex ? CUDA_C_64F : CUDA_R_64F;
  const int64_t ar = c.ta == CUBLAS_OP_N ? c.m : c.k, ac = c.ta == CUBLAS_OP_N ? c.k : c.m;
  const int64_t br = c.tb == CUBLAS_OP_N ? c.k : c.n, bc = c.tb == CUBLAS_OP_N ? c.n : c.k;
  const int64_t lda = ar + 1, ldb = br + 2, ldc = c.m + 3;
  const int64_t sa = lda * ac, sb = ldb * bc, sc = ldc * c.n;
  std::vector<double> a = random_doubles(size_t(sa * c.batch * w), 11);
  std::vector<double> b = random_doubles(size_t(sb * c.batch * w), 12);
  std::vector<double> cc = random_doubles(size_t(sc * c.batch * w), 13);
  if (c.nan_in_c)
    for (double& x : cc) x = NAN;
  double* da = to_device(a);
  double* db = to_device(b);
  double* dc = to_device(cc);
  double* dd = c.in_place ? dc : to_device(std::vector<double>(cc.size(), -7.0));
  double* expect = to_device(cc);  // the per-matrix GEMMs' C, in place

  const double alpha[2] = {1.5, -0.5}, beta[2] = {c.beta, 0.25 * c.beta};
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_64F, t);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &c.ta, sizeof c.ta);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &c.tb, sizeof c.tb);
  cublasLtMatrixLayout_t la = layout(t, ar, ac, lda, c.batch, sa);
  cublasLtMatrixLayout_t lb = layout(t, br, bc, ldb, c.batch, sb);
  cublasLtMatrixLayout_t lc = layout(t, c.m, c.n, ldc, c.batch, sc);
  const cublasStatus_t st =
      lt(light, desc, alpha, da, la, db, lb, beta, dc, lc, dd, lc, nullptr, nullptr, 0, nullptr);
  CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: cublasLtMatmul status %d", c.name, int(st));
  for (int32_t i = 0; i < c.batch; ++i) {
    const int64_t oa = i * sa * w, ob = i * sb * w, oc = i * sc * w;
    const cublasStatus_t s =
        c.complex ? cublasZgemm_v2_64(h, c.ta, c.tb, c.m, c.n, c.k,
                                      reinterpret_cast<const cuDoubleComplex*>(alpha),
                                      reinterpret_cast<const cuDoubleComplex*>(da + oa), lda,
                                      reinterpret_cast<const cuDoubleComplex*>(db + ob), ldb,
                                      reinterpret_cast<const cuDoubleComplex*>(beta),
                                      reinterpret_cast<cuDoubleComplex*>(expect + oc), ldc)
                  : cublasDgemm_v2_64(h, c.ta, c.tb, c.m, c.n, c.k, alpha, da + oa, lda, db + ob,
                                      ldb, beta, expect + oc, ldc);
    CHECK(s == CUBLAS_STATUS_SUCCESS, "%s: single GEMM status %d", c.name, int(s));
  }
  const std::vector<double> got = to_host(dd, cc.size()), want = to_host(expect, cc.size());
  int64_t differ = 0;
  for (int32_t i = 0; i < c.batch; ++i)
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t r = 0; r < c.m * w; ++r) {
        const size_t at = size_t(i * sc * w + j * ldc * w + r);
        if (std::memcmp(&got[at], &want[at], sizeof(double)) != 0) ++differ;
      }
  CHECK(differ == 0, "%s: %lld elements differ from the single GEMMs", c.name, (long long)differ);
  std::printf("%-40s %s\n", c.name, differ == 0 ? "bitwise equal to the single GEMMs" : "FAIL");
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  for (double* p : {da, db, dc, expect}) cudaFree(p);
  if (!c.in_place) cudaFree(dd);
}

// A call the library forwards (an epilogue): the library's entry and cuBLASLt's own give the
// same bits.
void forwarded(lt_fn lt, cublasLtHandle_t light) {
  ++cases;
  const int64_t n = 256;
  std::vector<double> a = random_doubles(size_t(n * n), 21), b = random_doubles(size_t(n * n), 22);
  double* da = to_device(a);
  double* db = to_device(b);
  double* d1 = to_device(std::vector<double>(size_t(n * n), 0.0));
  double* d2 = to_device(std::vector<double>(size_t(n * n), 0.0));
  const double one = 1.0, zero = 0.0;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_64F, CUDA_R_64F);
  const cublasLtEpilogue_t relu = CUBLASLT_EPILOGUE_RELU;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &relu, sizeof relu);
  cublasLtMatrixLayout_t l = layout(CUDA_R_64F, n, n, n, 1, 0);
  const cublasStatus_t s1 =
      lt(light, desc, &one, da, l, db, l, &zero, d1, l, d1, l, nullptr, nullptr, 0, nullptr);
  const cublasStatus_t s2 = cublasLtMatmul(light, desc, &one, da, l, db, l, &zero, d2, l, d2, l,
                                           nullptr, nullptr, 0, nullptr);
  CHECK(s1 == s2, "epilogue: status %d against cuBLASLt's %d", int(s1), int(s2));
  const std::vector<double> g1 = to_host(d1, a.size()), g2 = to_host(d2, a.size());
  CHECK(std::memcmp(g1.data(), g2.data(), g1.size() * sizeof(double)) == 0,
        "epilogue: the forwarded call differs from cuBLASLt's");
  std::printf("%-40s %s\n", "RELU epilogue (forwarded)", s1 == s2 ? "as cuBLASLt" : "FAIL");
  cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(desc);
  for (double* p : {da, db, d1, d2}) cudaFree(p);
}

}  // namespace

int main() {
  cublasHandle_t h = nullptr, native = nullptr;
  if (const int rc = test_and_native_handles(&h, &native)) return rc;
  const auto lt = preloaded_symbol<lt_fn>("ozdgemm_audit_cublasLtMatmul");
  if (lt == nullptr) {
    std::printf("FAIL: ozdgemm_audit_cublasLtMatmul not found: run under LD_PRELOAD\n");
    return 1;
  }
  cublasLtHandle_t light = nullptr;
  if (cublasLtCreate(&light) != CUBLAS_STATUS_SUCCESS) {
    std::printf("FAIL: cublasLtCreate\n");
    return 1;
  }
  const lt_case all[] = {
      {"real NN, D apart, beta 0.5", false, CUBLAS_OP_N, CUBLAS_OP_N, 300, 200, 260, 1, false, 0.5,
       false},
      {"real TN, D apart, beta 0, NaN in C", false, CUBLAS_OP_T, CUBLAS_OP_N, 257, 300, 129, 1,
       false, 0.0, true},
      {"real NT, in place, beta 1", false, CUBLAS_OP_N, CUBLAS_OP_T, 256, 256, 256, 1, true, 1.0,
       false},
      {"real TT, batch 3, D apart", false, CUBLAS_OP_T, CUBLAS_OP_T, 260, 270, 280, 3, false, -1.0,
       false},
      {"complex NN, D apart", true, CUBLAS_OP_N, CUBLAS_OP_N, 260, 258, 256, 1, false, 0.5, false},
      {"complex CT, in place, batch 2", true, CUBLAS_OP_C, CUBLAS_OP_T, 256, 300, 270, 2, true, 1.0,
       false},
  };
  for (const lt_case& c : all) run_case(c, lt, light, h);
  forwarded(lt, light);
  cublasLtDestroy(light);
  cublasDestroy(h);
  cublasDestroy(native);
  std::printf("%d cases, %d failures\n", cases, failures.load());
  return failures != 0;
}
