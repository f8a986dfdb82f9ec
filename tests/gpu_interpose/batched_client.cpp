// A plain cuBLAS program calling the batched GEMMs, run under LD_PRELOAD=libozdgemm.so with
// OZDGEMM_MODE=emulate and a fixed OZDGEMM_MODULI: every matrix of a strided batch
// (cublasDgemmStridedBatched, cublasZgemmStridedBatched, cublasGemmStridedBatchedEx, int and
// _64) must equal the single cublasDgemm_v2 / cublasZgemm_v2 call on that matrix bit for bit,
// random and adversarial matrices mixed in one batch (wide exponents, a NaN, an Inf), with
// padded leading dimensions, broadcast operands (stride 0) and every op pair; and be within a
// normwise tolerance of native cuBLAS (a pedantic handle, which the library forwards). Invalid
// batches get cuBLAS's status and write nothing; overlapping C runs native, and a small
// pointer-array and grouped batch match native's values. The C API's batched forms equal
// ozdgemm_dgemm per matrix. check_log.sh then finds the strided entries emulated in the log.
// `batched_client pointers` (pointer arrays served, the default of OZDGEMM_POINTER_BATCHES): the
// same for pointer-array batches (cublas[DZ]gemmBatched, cublasGemmBatchedEx, int and _64), A
// broadcast by a repeated pointer, graph capture, alpha = 0 in device pointer mode with null
// matrices, and grouped batches of two shapes.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "client_support.hpp"

namespace {

constexpr int kBatch = 5;

// Matrix i of a batch of `count` doubles each (complex: interleaved): 1 wide exponents,
// 2 one NaN, 3 one Inf, others random as drawn.
void adversarial(std::vector<double>& v, size_t per_matrix, int count) {
  for (int i = 1; i < count && i < 4; ++i) {
    double* m = v.data() + static_cast<size_t>(i) * per_matrix;
    if (i == 1)
      for (size_t j = 0; j < per_matrix; ++j)
        m[j] = std::ldexp(m[j], static_cast<int>(j % 61) - 30);
    if (i == 2) m[per_matrix / 3] = NAN;
    if (i == 3) m[per_matrix / 2] = INFINITY;
  }
}

int cases = 0;

enum class form { typed, typed_64, ex, ex_64 };
const char* form_name(form f) {
  return f == form::typed ? "typed" : f == form::typed_64 ? "_64" : f == form::ex ? "Ex" : "Ex_64";
}

// One strided batch (real when w == 1, complex when w == 2) on handle h.
cublasStatus_t strided(form f, int w, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                       int64_t m, int64_t n, int64_t k, const double* alpha, const double* A,
                       int64_t lda, int64_t sa, const double* B, int64_t ldb, int64_t sb,
                       const double* beta, double* C, int64_t ldc, int64_t sc, int64_t count) {
  using cz = cuDoubleComplex;
  const auto* za = reinterpret_cast<const cz*>(A);
  const auto* zb = reinterpret_cast<const cz*>(B);
  auto* zc = reinterpret_cast<cz*>(C);
  const auto* zal = reinterpret_cast<const cz*>(alpha);
  const auto* zbe = reinterpret_cast<const cz*>(beta);
  const cudaDataType t = w == 1 ? CUDA_R_64F : CUDA_C_64F;
  switch (f) {
    case form::typed:
      return w == 1
                 ? cublasDgemmStridedBatched(h, ta, tb, int(m), int(n), int(k), alpha, A, int(lda),
                                             sa, B, int(ldb), sb, beta, C, int(ldc), sc, int(count))
                 : cublasZgemmStridedBatched(h, ta, tb, int(m), int(n), int(k), zal, za, int(lda),
                                             sa, zb, int(ldb), sb, zbe, zc, int(ldc), sc,
                                             int(count));
    case form::typed_64:
      return w == 1 ? cublasDgemmStridedBatched_64(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb,
                                                   sb, beta, C, ldc, sc, count)
                    : cublasZgemmStridedBatched_64(h, ta, tb, m, n, k, zal, za, lda, sa, zb, ldb,
                                                   sb, zbe, zc, ldc, sc, count);
    case form::ex:
      return cublasGemmStridedBatchedEx(h, ta, tb, int(m), int(n), int(k), alpha, A, t, int(lda),
                                        sa, B, t, int(ldb), sb, beta, C, t, int(ldc), sc,
                                        int(count), CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    case form::ex_64:
      return cublasGemmStridedBatchedEx_64(h, ta, tb, m, n, k, alpha, A, t, lda, sa, B, t, ldb, sb,
                                           beta, C, t, ldc, sc, count, CUBLAS_COMPUTE_64F,
                                           CUBLAS_GEMM_DEFAULT);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t single(int w, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                      int64_t m, int64_t n, int64_t k, const double* alpha, const double* A,
                      int64_t lda, const double* B, int64_t ldb, const double* beta, double* C,
                      int64_t ldc) {
  using cz = cuDoubleComplex;
  if (w == 1)
    return cublasDgemm_v2(h, ta, tb, int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta,
                          C, int(ldc));
  return cublasZgemm_v2(h, ta, tb, int(m), int(n), int(k), reinterpret_cast<const cz*>(alpha),
                        reinterpret_cast<const cz*>(A), int(lda), reinterpret_cast<const cz*>(B),
                        int(ldb), reinterpret_cast<const cz*>(beta), reinterpret_cast<cz*>(C),
                        int(ldc));
}

// Normwise closeness of the finite entries, and the same non-finite pattern.
void close_to(const std::string& what, const std::vector<double>& got,
              const std::vector<double>& want, double tol) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isfinite(want[i]) != std::isfinite(got[i])) {
      CHECK(false, "%s: element %zu is %.17g, native %.17g", what.c_str(), i, got[i], want[i]);
      return;
    }
    if (!std::isfinite(want[i])) continue;
    diff = std::max(diff, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  CHECK(!(diff > tol * std::max(scale, 1.0)), "%s: differs from native by %.3g (scale %.3g)",
        what.c_str(), diff, scale);
}

// The matrices of batch_case and pointer_case: padded leading dimensions, and strides in elements
// with a gap between matrices (0 broadcasts).
struct batch_layout {
  static constexpr int64_t m = 130, n = 97, k = 150;
  int64_t lda, ldb, ldc, cols_a, cols_b, sa, sb, sc;
};

batch_layout layout_of(cublasOperation_t ta, cublasOperation_t tb, bool broadcast_a,
                       bool broadcast_b) {
  batch_layout l{};
  l.lda = (ta == CUBLAS_OP_N ? l.m : l.k) + 3;
  l.ldb = (tb == CUBLAS_OP_N ? l.k : l.n) + 1;
  l.ldc = l.m + 2;
  l.cols_a = ta == CUBLAS_OP_N ? l.k : l.m;
  l.cols_b = tb == CUBLAS_OP_N ? l.n : l.k;
  l.sa = broadcast_a ? 0 : l.lda * l.cols_a + 5;
  l.sb = broadcast_b ? 0 : l.ldb * l.cols_b + 7;
  l.sc = l.ldc * l.n + 11;
  return l;
}

// Each matrix of C (with the gap after it) as the batch left it, `got`, equals its single call's,
// `one`, bit for bit, and is within the tolerance of native's, `want` (except matrix 1 when
// `skip_second`: its wide exponents make native's own error no scale).
void compare_matrices(const std::string& what, const std::vector<double>& got,
                      const std::vector<double>& want, const std::vector<double>& one, int64_t sc,
                      int w, bool skip_second) {
  for (int i = 0; i < kBatch; ++i) {
    const size_t at = static_cast<size_t>(i * sc * w), len = static_cast<size_t>(sc * w);
    CHECK(std::memcmp(got.data() + at, one.data() + at, len * sizeof(double)) == 0,
          "%s: matrix %d (or the gap after it) differs from its single call", what.c_str(), i);
    if (!(i == 1 && skip_second))
      close_to(what + " matrix " + std::to_string(i),
               std::vector<double>(got.begin() + at, got.begin() + at + len),
               std::vector<double>(want.begin() + at, want.begin() + at + len), 1e-12);
  }
}

void batch_case(form f, int w, cublasHandle_t h, cublasHandle_t nat, cublasOperation_t ta,
                cublasOperation_t tb, bool broadcast_a, bool broadcast_b) {
  ++cases;
  const batch_layout l = layout_of(ta, tb, broadcast_a, broadcast_b);
  const int64_t m = l.m, n = l.n, k = l.k, lda = l.lda, ldb = l.ldb, ldc = l.ldc;
  const int64_t sa = l.sa, sb = l.sb, sc = l.sc;
  const size_t na = static_cast<size_t>((broadcast_a ? lda * l.cols_a : sa * kBatch) * w);
  const size_t nb = static_cast<size_t>((broadcast_b ? ldb * l.cols_b : sb * kBatch) * w);
  const size_t nc = static_cast<size_t>(sc * kBatch * w);
  std::vector<double> a = random_doubles(na, 1), b = random_doubles(nb, 2),
                      c = random_doubles(nc, 3);
  if (!broadcast_a) adversarial(a, static_cast<size_t>(sa * w), kBatch);
  const double alpha[2] = {0.75, 0.25}, beta[2] = {-0.5, 0.125};
  double *da = to_device(a), *db = to_device(b), *dc = to_device(c), *dn = to_device(c);
  double* ds = to_device(c);
  const std::string what = std::string(w == 1 ? "real " : "complex ") + form_name(f) + " ta " +
                           std::to_string(int(ta)) + " tb " + std::to_string(int(tb)) +
                           (broadcast_a ? " A broadcast" : "") +
                           (broadcast_b ? " B broadcast" : "");
  const cublasStatus_t st =
      strided(f, w, h, ta, tb, m, n, k, alpha, da, lda, sa, db, ldb, sb, beta, dc, ldc, sc, kBatch);
  CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: status %d", what.c_str(), int(st));
  strided(f, w, nat, ta, tb, m, n, k, alpha, da, lda, sa, db, ldb, sb, beta, dn, ldc, sc, kBatch);
  for (int i = 0; i < kBatch; ++i)
    single(w, h, ta, tb, m, n, k, alpha, da + i * sa * w, lda, db + i * sb * w, ldb, beta,
           ds + i * sc * w, ldc);
  compare_matrices(what, to_host(dc, nc), to_host(dn, nc), to_host(ds, nc), sc, w, !broadcast_a);
  for (double* p : {da, db, dc, dn, ds}) cudaFree(p);
}

// A device array holding `ptrs` (freed by the caller with cudaFree).
template <class P>
P* device_array(const std::vector<P>& ptrs) {
  P* d = nullptr;
  cudaMalloc(&d, ptrs.size() * sizeof(P));
  cudaMemcpy(d, ptrs.data(), ptrs.size() * sizeof(P), cudaMemcpyHostToDevice);
  return d;
}

// One pointer-array batch (cublas[DZ]gemmBatched or cublasGemmBatchedEx, int or _64), real when
// w == 1, complex when w == 2, the arrays in device memory.
cublasStatus_t pointers(form f, int w, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                        int64_t m, int64_t n, int64_t k, const double* alpha,
                        const double* const* A, int64_t lda, const double* const* B, int64_t ldb,
                        const double* beta, double* const* C, int64_t ldc, int64_t count) {
  using cz = cuDoubleComplex;
  const auto* za = reinterpret_cast<const cz* const*>(A);
  const auto* zb = reinterpret_cast<const cz* const*>(B);
  const auto* zc = reinterpret_cast<cz* const*>(C);
  const auto* zal = reinterpret_cast<const cz*>(alpha);
  const auto* zbe = reinterpret_cast<const cz*>(beta);
  const auto* va = reinterpret_cast<const void* const*>(A);
  const auto* vb = reinterpret_cast<const void* const*>(B);
  const auto* vc = reinterpret_cast<void* const*>(C);
  const cudaDataType t = w == 1 ? CUDA_R_64F : CUDA_C_64F;
  switch (f) {
    case form::typed:
      return w == 1 ? cublasDgemmBatched(h, ta, tb, int(m), int(n), int(k), alpha, A, int(lda), B,
                                         int(ldb), beta, C, int(ldc), int(count))
                    : cublasZgemmBatched(h, ta, tb, int(m), int(n), int(k), zal, za, int(lda), zb,
                                         int(ldb), zbe, zc, int(ldc), int(count));
    case form::typed_64:
      return w == 1 ? cublasDgemmBatched_64(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                                            count)
                    : cublasZgemmBatched_64(h, ta, tb, m, n, k, zal, za, lda, zb, ldb, zbe, zc, ldc,
                                            count);
    case form::ex:
      return cublasGemmBatchedEx(h, ta, tb, int(m), int(n), int(k), alpha, va, t, int(lda), vb, t,
                                 int(ldb), beta, vc, t, int(ldc), int(count), CUBLAS_COMPUTE_64F,
                                 CUBLAS_GEMM_DEFAULT);
    case form::ex_64:
      return cublasGemmBatchedEx_64(h, ta, tb, m, n, k, alpha, va, t, lda, vb, t, ldb, beta, vc, t,
                                    ldc, count, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

// A pointer-array batch over matrices laid out as batch_case's
// (gaps between them, padded leading dimensions, adversarial matrices, A broadcast by repeating
// its pointer) equals the single call on each matrix bit for bit and leaves the gaps alone; and
// is within the tolerance of native cuBLAS. capture: the batch is captured into a CUDA graph on
// the handle's stream and replayed instead of called.
void pointer_case(form f, int w, cublasHandle_t h, cublasHandle_t nat, cublasOperation_t ta,
                  cublasOperation_t tb, bool broadcast_a, bool capture) {
  ++cases;
  const batch_layout l = layout_of(ta, tb, false, false);  // A broadcast by its pointer
  const int64_t m = l.m, n = l.n, k = l.k, lda = l.lda, ldb = l.ldb, ldc = l.ldc;
  const int64_t sa = l.sa, sb = l.sb, sc = l.sc;
  const size_t na = static_cast<size_t>(sa * kBatch * w), nb = static_cast<size_t>(sb * kBatch * w);
  const size_t nc = static_cast<size_t>(sc * kBatch * w);
  std::vector<double> a = random_doubles(na, 11), b = random_doubles(nb, 12),
                      c = random_doubles(nc, 13);
  adversarial(b, static_cast<size_t>(sb * w), kBatch);
  const double alpha[2] = {0.75, -0.25}, beta[2] = {0.5, 0.375};
  double *da = to_device(a), *db = to_device(b), *dc = to_device(c), *dn = to_device(c);
  double* ds = to_device(c);
  std::vector<const double*> pa, pb;
  std::vector<double*> pc, pn;
  for (int i = 0; i < kBatch; ++i) {
    pa.push_back(da + (broadcast_a ? 0 : i * sa * w));
    pb.push_back(db + i * sb * w);
    pc.push_back(dc + i * sc * w);
    pn.push_back(dn + i * sc * w);
  }
  const double** dpa = device_array(pa);
  const double** dpb = device_array(pb);
  double** dpc = device_array(pc);
  double** dpn = device_array(pn);
  const std::string what = std::string("pointer array ") + (w == 1 ? "real " : "complex ") +
                           form_name(f) + " ta " + std::to_string(int(ta)) + " tb " +
                           std::to_string(int(tb)) + (broadcast_a ? " A broadcast" : "") +
                           (capture ? " captured" : "");
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  if (capture) {
    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cublasSetStream(h, stream);
    // One eager call on this stream first: the engine's workspace cannot grow under capture.
    pointers(f, w, h, ta, tb, m, n, k, alpha, dpa, lda, dpb, ldb, beta, dpc, ldc, kBatch);
    cudaStreamSynchronize(stream);
    cudaMemcpy(dc, c.data(), nc * sizeof(double), cudaMemcpyHostToDevice);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    st = pointers(f, w, h, ta, tb, m, n, k, alpha, dpa, lda, dpb, ldb, beta, dpc, ldc, kBatch);
    CHECK(cudaStreamEndCapture(stream, &graph) == cudaSuccess, "%s: capture", what.c_str());
    CHECK(graph != nullptr && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess &&
              cudaGraphLaunch(exec, stream) == cudaSuccess &&
              cudaStreamSynchronize(stream) == cudaSuccess,
          "%s: graph", what.c_str());
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cublasSetStream(h, nullptr);
    cudaStreamDestroy(stream);
  } else {
    st = pointers(f, w, h, ta, tb, m, n, k, alpha, dpa, lda, dpb, ldb, beta, dpc, ldc, kBatch);
  }
  CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: status %d", what.c_str(), int(st));
  pointers(f, w, nat, ta, tb, m, n, k, alpha, dpa, lda, dpb, ldb, beta, dpn, ldc, kBatch);
  for (int i = 0; i < kBatch; ++i)
    single(w, h, ta, tb, m, n, k, alpha, pa[static_cast<size_t>(i)], lda,
           pb[static_cast<size_t>(i)], ldb, beta, ds + i * sc * w, ldc);
  compare_matrices(what, to_host(dc, nc), to_host(dn, nc), to_host(ds, nc), sc, w, true);
  for (void* p : {static_cast<void*>(dpa), static_cast<void*>(dpb), static_cast<void*>(dpc),
                  static_cast<void*>(dpn)})
    cudaFree(p);
  for (double* p : {da, db, dc, dn, ds}) cudaFree(p);
}

// A grouped batch (cublasDgemmGroupedBatched, or cublasGemmGroupedBatchedEx with CUDA_R_64F:
// cuBLAS documents no complex grouped batch) of two groups of their own shapes, ops and scalars
// (beta 0 in the second): every matrix equals its single call bit for bit.
void grouped_case(bool ex, cublasHandle_t h) {
  ++cases;
  const cublasOperation_t ta[2] = {CUBLAS_OP_N, CUBLAS_OP_T}, tb[2] = {CUBLAS_OP_T, CUBLAS_OP_N};
  const int m[2] = {64, 48}, n[2] = {72, 40}, k[2] = {80, 56}, sizes[2] = {3, 2};
  const int lda[2] = {64, 56}, ldb[2] = {72, 56}, ldc[2] = {64, 48};
  const double alpha[2] = {0.75, -1.25}, beta[2] = {0.5, 0.0};
  std::vector<double*> owned;
  std::vector<const double*> pa, pb;
  std::vector<double*> pc, ps;
  std::vector<size_t> c_len;
  unsigned seed = 30;
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < sizes[g]; ++i) {
      const size_t la = static_cast<size_t>(m[g]) * k[g], lb = static_cast<size_t>(k[g]) * n[g],
                   lc = static_cast<size_t>(m[g]) * n[g];
      double* da = to_device(random_doubles(la, seed++));
      double* db = to_device(random_doubles(lb, seed++));
      const std::vector<double> c = random_doubles(lc, seed++);
      double *dc = to_device(c), *ds = to_device(c);
      owned.insert(owned.end(), {da, db, dc, ds});
      pa.push_back(da);
      pb.push_back(db);
      pc.push_back(dc);
      ps.push_back(ds);
      c_len.push_back(lc);
    }
  const double** dpa = device_array(pa);
  const double** dpb = device_array(pb);
  double** dpc = device_array(pc);
  const cublasStatus_t st =
      !ex ? cublasDgemmGroupedBatched(h, ta, tb, m, n, k, alpha, dpa, lda, dpb, ldb, beta, dpc, ldc,
                                      2, sizes)
          : cublasGemmGroupedBatchedEx(
                h, ta, tb, m, n, k, alpha, reinterpret_cast<const void* const*>(dpa), CUDA_R_64F,
                lda, reinterpret_cast<const void* const*>(dpb), CUDA_R_64F, ldb, beta,
                reinterpret_cast<void* const*>(dpc), CUDA_R_64F, ldc, 2, sizes, CUBLAS_COMPUTE_64F);
  const char* what = ex ? "grouped Ex" : "grouped";
  CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: status %d", what, int(st));
  size_t at = 0;
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < sizes[g]; ++i, ++at) {
      single(1, h, ta[g], tb[g], m[g], n[g], k[g], alpha + g, pa[at], lda[g], pb[at], ldb[g],
             beta + g, ps[at], ldc[g]);
      const std::vector<double> got = to_host(pc[at], c_len[at]), one = to_host(ps[at], c_len[at]);
      CHECK(std::memcmp(got.data(), one.data(), got.size() * sizeof(double)) == 0,
            "%s: group %d matrix %d differs from its single call", what, g, i);
    }
  for (void* p : {static_cast<void*>(dpa), static_cast<void*>(dpb), static_cast<void*>(dpc)})
    cudaFree(p);
  for (double* p : owned) cudaFree(p);
}

// alpha = 0 in device pointer mode with null matrices in the A and B arrays: BLAS reads neither,
// so C = beta C (exact here: beta = -2) with nothing read from them. Checked against beta C
// computed on the host, not against native cuBLAS, whose batched kernels need not accept null
// matrices when alpha is only known on the device.
void pointer_alpha_zero(cublasHandle_t h) {
  ++cases;
  const int64_t m = 64, n = 48, k = 32;
  const std::vector<double> c = random_doubles(static_cast<size_t>(m * n * kBatch), 21);
  double* dc = to_device(c);
  const std::vector<double> scalars = {0.0, -2.0};  // alpha, beta
  double* dscalars = to_device(scalars);
  std::vector<const double*> none(kBatch, nullptr);
  std::vector<double*> pc;
  for (int i = 0; i < kBatch; ++i) pc.push_back(dc + i * m * n);
  const double** dnone = device_array(none);
  double** dpc = device_array(pc);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
  const cublasStatus_t st = cublasDgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, dscalars,
                                               dnone, m, dnone, k, dscalars + 1, dpc, m, kBatch);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  CHECK(st == CUBLAS_STATUS_SUCCESS, "pointer array alpha 0: status %d", int(st));
  CHECK(cudaDeviceSynchronize() == cudaSuccess, "pointer array alpha 0: a fault");
  std::vector<double> want = c;
  for (double& x : want) x *= -2.0;
  const std::vector<double> got = to_host(dc, c.size());
  CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0,
        "pointer array alpha 0: C is not beta C");
  for (void* p : {static_cast<void*>(dnone), static_cast<void*>(dpc)}) cudaFree(p);
  for (double* p : {dc, dscalars}) cudaFree(p);
}

// Invalid arguments (cuBLAS's status, C untouched), batch 0, overlapping C, pointer arrays.
void semantics(cublasHandle_t h, cublasHandle_t nat) {
  const int64_t m = 64, n = 64, k = 64, ld = 64, s = ld * n;
  const std::vector<double> a = random_doubles(static_cast<size_t>(s * 3), 4);
  const std::vector<double> c = random_doubles(static_cast<size_t>(s * 3), 5);
  double *da = to_device(a), *dc = to_device(c), *dn = to_device(c);
  const double alpha = 1.5, beta = 0.5;
  // values: compare C with native's (not where C's matrices overlap: cuBLAS's own result then
  // depends on the order its kernels run in).
  const auto both = [&](const char* what, int64_t lda, int64_t sc, int64_t count,
                        bool values = true) {
    ++cases;
    cudaMemcpy(dc, c.data(), c.size() * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(dn, c.data(), c.size() * sizeof(double), cudaMemcpyHostToDevice);
    const cublasStatus_t got =
        cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, lda, s, da, ld,
                                  s, &beta, dc, ld, sc, count);
    const cublasStatus_t want =
        cublasDgemmStridedBatched(nat, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, lda, s, da,
                                  ld, s, &beta, dn, ld, sc, count);
    CHECK(got == want, "%s: status %d, native %d", what, int(got), int(want));
    if (values) close_to(what, to_host(dc, c.size()), to_host(dn, c.size()), 1e-12);
  };
  both("batch count -1", ld, s, -1);
  both("batch count 0", ld, s, 0);
  both("lda < m", m - 1, s, 3);
  both("overlapping C (stride ldc)", ld, ld, 3, false);
  {
    ++cases;
    std::vector<const double*> pa(3), pb(3);
    std::vector<double*> pc(3), pn(3);
    for (int i = 0; i < 3; ++i) {
      pa[i] = pb[i] = da + i * s;
      pc[i] = dc + i * s;
      pn[i] = dn + i * s;
    }
    cudaMemcpy(dc, c.data(), c.size() * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(dn, c.data(), c.size() * sizeof(double), cudaMemcpyHostToDevice);
    const double** dpa = nullptr;
    double** dpc = nullptr;
    double** dpn = nullptr;
    cudaMalloc(&dpa, 3 * sizeof(double*));
    cudaMalloc(&dpc, 3 * sizeof(double*));
    cudaMalloc(&dpn, 3 * sizeof(double*));
    cudaMemcpy(dpa, pa.data(), 3 * sizeof(double*), cudaMemcpyHostToDevice);
    cudaMemcpy(dpc, pc.data(), 3 * sizeof(double*), cudaMemcpyHostToDevice);
    cudaMemcpy(dpn, pn.data(), 3 * sizeof(double*), cudaMemcpyHostToDevice);
    const cublasStatus_t got = cublasDgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, dpa,
                                                  ld, dpa, ld, &beta, dpc, ld, 3);
    cublasDgemmBatched(nat, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, dpa, ld, dpa, ld, &beta, dpn,
                       ld, 3);
    CHECK(got == CUBLAS_STATUS_SUCCESS, "pointer array: status %d", int(got));
    close_to("pointer array", to_host(dc, c.size()), to_host(dn, c.size()), 1e-12);
    // The same three matrices as one group of a grouped batch: native's values.
    ++cases;
    cudaMemcpy(dc, c.data(), c.size() * sizeof(double), cudaMemcpyHostToDevice);
    const cublasOperation_t gta[1] = {CUBLAS_OP_N}, gtb[1] = {CUBLAS_OP_T};
    const int gm[1] = {static_cast<int>(m)}, gn[1] = {static_cast<int>(n)},
              gk[1] = {static_cast<int>(k)}, gld[1] = {static_cast<int>(ld)}, gsize[1] = {3};
    const double galpha[1] = {alpha}, gbeta[1] = {beta};
    const cublasStatus_t grouped = cublasDgemmGroupedBatched(
        h, gta, gtb, gm, gn, gk, galpha, dpa, gld, dpa, gld, gbeta, dpc, gld, 1, gsize);
    CHECK(grouped == CUBLAS_STATUS_SUCCESS, "grouped batch: status %d", int(grouped));
    close_to("grouped batch", to_host(dc, c.size()), to_host(dn, c.size()), 1e-12);
    cudaFree(dpa);
    cudaFree(dpc);
    cudaFree(dpn);
  }
  for (double* p : {da, dc, dn}) cudaFree(p);
}

// The C API's strided and pointer-array forms (found with dlsym) against ozdgemm_dgemm on each
// matrix, bit for bit, at a fixed s (a per-call count may differ between two calls on the same
// data: the speculated count follows the shape's history); an invalid batch writes nothing.
void c_api(cublasHandle_t h) {
  using strided_fn = decltype(&ozdgemm_dgemm_strided_batched);
  using array_fn = decltype(&ozdgemm_dgemm_batched);
  using defaults_fn = decltype(&ozdgemm_default_options);
  const auto strided_api = preloaded_symbol<strided_fn>("ozdgemm_dgemm_strided_batched");
  const auto array_api = preloaded_symbol<array_fn>("ozdgemm_dgemm_batched");
  const auto single_api = preloaded_symbol<api_fn>("ozdgemm_dgemm");
  const auto defaults = preloaded_symbol<defaults_fn>("ozdgemm_default_options");
  if (strided_api == nullptr || array_api == nullptr || single_api == nullptr ||
      defaults == nullptr)
    return;
  ++cases;
  ozdgemm_options_t o = defaults();
  o.num_moduli = 15;
  const int64_t m = 300, n = 200, k = 257, count = 4, sa = m * k, sb = k * n, sc = m * n;
  std::vector<double> a = random_doubles(static_cast<size_t>(sa * count), 6);
  adversarial(a, static_cast<size_t>(sa), static_cast<int>(count));
  const std::vector<double> b = random_doubles(static_cast<size_t>(sb * count), 7);
  const std::vector<double> c = random_doubles(static_cast<size_t>(sc * count), 8);
  double *da = to_device(a), *db = to_device(b), *d1 = to_device(c), *d2 = to_device(c),
         *d3 = to_device(c);
  const double alpha = 1.25, beta = -0.75;
  ozdgemm_status_t st = strided_api(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, sa, db, k,
                                    sb, &beta, d1, m, sc, count, o);
  CHECK(st == OZDGEMM_STATUS_SUCCESS, "ozdgemm_dgemm_strided_batched: status %d", int(st));
  std::vector<const double*> pa, pb;
  std::vector<double*> pc;
  for (int64_t i = 0; i < count; ++i) {
    single_api(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da + i * sa, m, db + i * sb, k, &beta,
               d2 + i * sc, m, o);
    pa.push_back(da + i * sa);
    pb.push_back(db + i * sb);
    pc.push_back(d3 + i * sc);
  }
  st = array_api(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, pa.data(), m, pb.data(), k, &beta,
                 pc.data(), m, count, o);
  CHECK(st == OZDGEMM_STATUS_SUCCESS, "ozdgemm_dgemm_batched: status %d", int(st));
  const auto r1 = to_host(d1, c.size()), r2 = to_host(d2, c.size()), r3 = to_host(d3, c.size());
  CHECK(std::memcmp(r1.data(), r2.data(), r1.size() * sizeof(double)) == 0,
        "ozdgemm_dgemm_strided_batched differs from ozdgemm_dgemm per matrix");
  CHECK(std::memcmp(r3.data(), r2.data(), r3.size() * sizeof(double)) == 0,
        "ozdgemm_dgemm_batched differs from ozdgemm_dgemm per matrix");
  st = strided_api(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m - 1, sa, db, k, sb, &beta,
                   d1, m, sc, count, o);
  CHECK(st == OZDGEMM_STATUS_INVALID_VALUE, "lda < m: status %d", int(st));
  CHECK(std::memcmp(to_host(d1, c.size()).data(), r1.data(), r1.size() * sizeof(double)) == 0,
        "an invalid batch wrote C");
  for (double* p : {da, db, d1, d2, d3}) cudaFree(p);
}

}  // namespace

// Every form of every element type and op pair (conjugation only where the form takes it).
template <class Case>
void every_form_and_op(Case run) {
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  for (int w : {1, 2})
    for (form f : {form::typed, form::typed_64, form::ex, form::ex_64})
      for (cublasOperation_t ta : ops)
        for (cublasOperation_t tb : ops) {
          if (w == 1 && (ta == CUBLAS_OP_C || tb == CUBLAS_OP_C) && f != form::typed) continue;
          run(f, w, ta, tb);
        }
}

int main(int argc, char** argv) {
  cublasHandle_t h = nullptr, nat = nullptr;
  if (const int status = test_and_native_handles(&h, &nat)) return status;
  // `pointers`: the pointer-array and grouped batches (served by default).
  const bool pointer_batches = argc > 1 && std::strcmp(argv[1], "pointers") == 0;
  if (pointer_batches) {
    every_form_and_op([&](form f, int w, cublasOperation_t ta, cublasOperation_t tb) {
      pointer_case(f, w, h, nat, ta, tb, false, false);
    });
    for (int w : {1, 2}) {
      pointer_case(form::typed, w, h, nat, CUBLAS_OP_T, CUBLAS_OP_N, true, false);
      pointer_case(form::ex, w, h, nat, CUBLAS_OP_N, CUBLAS_OP_T, false, true);
    }
    pointer_alpha_zero(h);
    grouped_case(false, h);
    grouped_case(true, h);
  } else {
    every_form_and_op([&](form f, int w, cublasOperation_t ta, cublasOperation_t tb) {
      batch_case(f, w, h, nat, ta, tb, false, false);
    });
    for (int w : {1, 2}) {
      batch_case(form::typed, w, h, nat, CUBLAS_OP_N, CUBLAS_OP_N, true, false);
      batch_case(form::ex, w, h, nat, CUBLAS_OP_T, CUBLAS_OP_N, false, true);
    }
  }
  semantics(h, nat);
  if (!pointer_batches) c_api(h);
  cublasDestroy(h);
  cublasDestroy(nat);
  std::printf("%d cases, %d failures\n", cases, failures.load());
  return failures == 0 ? 0 : 1;
}
