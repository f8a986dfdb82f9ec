// The blocked Level-3 form on the GPU against the host reference, bit for bit. A plain cuBLAS
// program run under LD_PRELOAD=libozdgemm.so with OZDGEMM_MODE=emulate, a fixed OZDGEMM_MODULI
// and a small OZDGEMM_LEVEL3_BLOCK calls cublasDsyrk, cublasDsyr2k and cublasZherk on order-200
// matrices. The same calls are then split on the host by the library's own blocking
// (src/level3/blocked.hpp) with every GEMM block computed by the preloaded library's host
// reference (ozdgemm_dgemm_reference, ozdgemm_zgemm_reference) under the same options: each
// off-diagonal block of C, which one emulated GEMM writes from A, B and the caller's C alone, must
// hold the reference's bits. The diagonal blocks are the native routine's (cuBLAS's bits, not the
// CPU's) and are checked against native cuBLAS by level3_client instead.
// Without OZDGEMM_LEVEL3_BLOCK, SYRK, HERK, SYRKX and complex SYRK run as one emulation of C's
// triangle (docs/level3.md): then every element of the triangle, the diagonal included, must hold
// the bits of the host reference's GEMM of the whole square (HERK: its diagonal's imaginary parts
// zero), and the other triangle the caller's C.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "client_support.hpp"
#include "level3/blocked.hpp"

namespace {

using ozdgemm::detail::level3_executor;
using ozdgemm::detail::rank_k_call;
using ozdgemm::detail::rank_k_kind;
using ozdgemm::detail::symm_call;
using ozdgemm::detail::trans_kind;
using ozdgemm::detail::triangular_call;
using ozdgemm::detail::uplo_kind;
using zd = std::complex<double>;
using zref_fn = decltype(&ozdgemm_zgemm_reference);

constexpr int64_t kOrder = 200, kDepth = 120, kPadLd = 3;

char op_char(trans_kind t) { return t == trans_kind::n ? 'N' : t == trans_kind::t ? 'T' : 'C'; }

// Runs the blocked form on host arrays as the device executor would split it in emulate mode
// (every block above `block` with a non-empty GEMM splits), each GEMM by the host reference;
// records the regions of C those GEMMs wrote. The diagonal blocks are left as they were.
template <class T>
class reference_executor final : public level3_executor<T> {
 public:
  struct region {
    const T* c;
    int64_t m, n, ldc;
  };
  reference_executor(int64_t block, ozdgemm_options_t options) : block_(block), options_(options) {}

  void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    ozdgemm_status_t st = OZDGEMM_STATUS_SUCCESS;
    if constexpr (std::is_same_v<T, double>) {
      static const auto ref = preloaded_symbol<ref_fn>("ozdgemm_dgemm_reference");
      st = ref(op_char(ta), op_char(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, options_);
    } else {
      static const auto ref = preloaded_symbol<zref_fn>("ozdgemm_zgemm_reference");
      const auto cz = [](const zd* p) { return reinterpret_cast<const cuDoubleComplex*>(p); };
      st = ref(op_char(ta), op_char(tb), m, n, k, make_cuDoubleComplex(alpha.real(), alpha.imag()),
               cz(a), lda, cz(b), ldb, make_cuDoubleComplex(beta.real(), beta.imag()),
               reinterpret_cast<cuDoubleComplex*>(c), ldc, options_);
    }
    CHECK(st == OZDGEMM_STATUS_SUCCESS, "host reference GEMM failed (%d)", static_cast<int>(st));
    regions.push_back({c, m, n, ldc});
  }
  bool splits(int64_t order, int64_t m, int64_t n, int64_t k) override {
    return order > block_ && m > 0 && n > 0 && k > 0;
  }
  void native(const rank_k_call<T>&) override {}
  void native(const symm_call<T>&) override {}
  void native(const triangular_call<T>&) override {}

  std::vector<region> regions;

 private:
  int64_t block_;
  ozdgemm_options_t options_;
};

// One rank-k call on the GPU (the tested handle) with random op(A), op(B) (n x k, w doubles an
// element, leading dimensions padded) and C: the host copies and C as the call left it.
struct gpu_run {
  std::vector<double> a, b, c, got;
  int64_t ld, ldc;
};
template <class Launch>
gpu_run run_on_gpu(const char* name, int w, trans_kind trans, unsigned seed, Launch&& launch) {
  const int64_t n = kOrder, k = kDepth;
  const int64_t rows = trans == trans_kind::n ? n : k, cols = trans == trans_kind::n ? k : n;
  gpu_run r;
  r.ld = rows + kPadLd;
  r.ldc = n + kPadLd;
  r.a = random_doubles(static_cast<size_t>(r.ld * cols * w), seed);
  r.b = random_doubles(static_cast<size_t>(r.ld * cols * w), seed + 1);
  r.c = random_doubles(static_cast<size_t>(r.ldc * n * w), seed + 2);
  double* da = to_device(r.a);
  double* db = to_device(r.b);
  double* dc = to_device(r.c);
  const cublasStatus_t st = launch(da, r.ld, db, r.ld, dc, r.ldc);
  r.got = to_host(dc, r.c.size());
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: cuBLAS status %d", name, static_cast<int>(st));
  return r;
}

// One rank-k case: its call on the GPU (the tested handle), then on the host; returns the number
// of elements compared.
template <class T, class Launch>
int64_t check_rank_k(const char* name, rank_k_kind kind, uplo_kind uplo, trans_kind trans,
                     int64_t block, const ozdgemm_options_t& options, unsigned seed,
                     Launch&& launch) {
  constexpr int w = std::is_same_v<T, double> ? 1 : 2;
  const int64_t n = kOrder, k = kDepth;
  gpu_run r = run_on_gpu(name, w, trans, seed, launch);
  const int64_t ld = r.ld, ldc = r.ldc;
  const std::vector<double>&a = r.a, &b = r.b, &got = r.got;
  std::vector<double>& c = r.c;

  const auto* ha = reinterpret_cast<const T*>(a.data());
  const auto* hb = reinterpret_cast<const T*>(b.data());
  auto* hc = reinterpret_cast<T*>(c.data());
  const bool reads_b = kind != rank_k_kind::syrk && kind != rank_k_kind::herk;
  const rank_k_call<T> x{kind, uplo,    trans, n,  k, T(0.75), ha, ld, reads_b ? hb : nullptr,
                         ld,   T(-0.5), hc,    ldc};
  reference_executor<T> ref(block, options);
  ozdgemm::detail::blocked(x, ref);
  CHECK(!ref.regions.empty(), "%s: the blocked form did not split", name);
  int64_t compared = 0, differ = 0;
  for (const auto& r : ref.regions)
    for (int64_t j = 0; j < r.n; ++j)
      for (int64_t i = 0; i < r.m; ++i) {
        const size_t at = static_cast<size_t>((r.c - hc) + i + j * r.ldc) * w;
        for (int part = 0; part < w; ++part, ++compared)
          if (std::memcmp(&got[at + part], &c[at + part], sizeof(double)) != 0 && ++differ <= 3)
            std::printf("  %s: element %zu: GPU %.17g, host reference %.17g\n", name, at + part,
                        got[at + part], c[at + part]);
      }
  CHECK(differ == 0, "%s: %lld of %lld off-diagonal values differ from the host reference", name,
        static_cast<long long>(differ), static_cast<long long>(compared));
  std::printf("%s: %zu GEMM blocks, %lld values compared, %lld differ\n", name, ref.regions.size(),
              static_cast<long long>(compared), static_cast<long long>(differ));
  return compared;
}

// One rank-k case run as one emulation of the triangle: every element of C against the host
// reference's GEMM of the whole square (the caller's C outside the triangle).
template <class T, class Launch>
int64_t check_triangle(const char* name, rank_k_kind kind, uplo_kind uplo, trans_kind trans,
                       const ozdgemm_options_t& options, unsigned seed, Launch&& launch) {
  constexpr int w = std::is_same_v<T, double> ? 1 : 2;
  const int64_t n = kOrder, k = kDepth;
  const gpu_run r = run_on_gpu(name, w, trans, seed, launch);
  const int64_t ld = r.ld, ldc = r.ldc;
  const std::vector<double>&a = r.a, &b = r.b, &c = r.c, &got = r.got;

  // The square as blocked() forms its off-diagonal blocks: op(A) op(Y)^T (^H), Y = A or B.
  const bool herm = kind == rank_k_kind::herk, reads_b = kind == rank_k_kind::syrkx;
  const trans_kind t = herm ? trans_kind::c : trans_kind::t;
  const bool by_rows = trans == trans_kind::n;
  reference_executor<T> ref(0, options);
  std::vector<double> want = c;
  ref.gemm(by_rows ? trans_kind::n : trans, by_rows ? t : trans_kind::n, n, n, k, T(0.75),
           reinterpret_cast<const T*>(a.data()), ld,
           reinterpret_cast<const T*>(reads_b ? b.data() : a.data()), ld, T(-0.5),
           reinterpret_cast<T*>(want.data()), ldc);
  int64_t compared = 0, differ = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const bool inside = uplo == uplo_kind::lower ? i >= j : i <= j;
      const size_t at = static_cast<size_t>(i + j * ldc) * w;
      for (int part = 0; part < w; ++part, ++compared) {
        double expect = inside ? want[at + part] : c[at + part];
        if (inside && herm && i == j && part == 1) expect = 0.0;
        if (std::memcmp(&got[at + part], &expect, sizeof(double)) != 0 && ++differ <= 3)
          std::printf("  %s: (%lld, %lld) part %d: GPU %.17g, expected %.17g\n", name,
                      static_cast<long long>(i), static_cast<long long>(j), part, got[at + part],
                      expect);
      }
    }
  CHECK(differ == 0, "%s: %lld of %lld values differ", name, static_cast<long long>(differ),
        static_cast<long long>(compared));
  std::printf("%s (%s, %s): triangle as one emulation, %lld values compared, %lld differ\n", name,
              uplo == uplo_kind::lower ? "lower" : "upper", op_char(trans) == 'N' ? "N" : "T/C",
              static_cast<long long>(compared), static_cast<long long>(differ));
  return compared;
}

cublasFillMode_t fill(uplo_kind u) {
  return u == uplo_kind::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
}
cublasOperation_t op(trans_kind t) {
  return t == trans_kind::n ? CUBLAS_OP_N : t == trans_kind::t ? CUBLAS_OP_T : CUBLAS_OP_C;
}

}  // namespace

int main() {
  cublasHandle_t h = nullptr, native = nullptr;
  if (const int rc = test_and_native_handles(&h, &native); rc != 0) return rc;
  const char* block_env = std::getenv("OZDGEMM_LEVEL3_BLOCK");
  const ozdgemm_options_t options = env_options();
  if (preloaded_symbol<ref_fn>("ozdgemm_dgemm_reference") == nullptr || options.num_moduli <= 0) {
    std::printf(
        "FAIL: run preloaded with OZDGEMM_MODE=emulate and a fixed OZDGEMM_MODULI (and "
        "OZDGEMM_LEVEL3_BLOCK for the blocked form)\n");
    return 1;
  }
  const double alpha = 0.75, beta = -0.5;
  const cuDoubleComplex zalpha = make_cuDoubleComplex(alpha, 0.0);
  const cuDoubleComplex zbeta = make_cuDoubleComplex(beta, 0.0);
  unsigned seed = 100;
  const auto z = [](double* p) { return reinterpret_cast<cuDoubleComplex*>(p); };
  if (block_env == nullptr) {
    for (uplo_kind u : {uplo_kind::lower, uplo_kind::upper})
      for (trans_kind t : {trans_kind::n, trans_kind::t}) {
        const trans_kind th = t == trans_kind::n ? trans_kind::n : trans_kind::c;
        check_triangle<double>(
            "cublasDsyrk", rank_k_kind::syrk, u, t, options, seed += 10,
            [&](double* a, int64_t lda, double*, int64_t, double* c, int64_t ldc) {
              return cublasDsyrk(h, fill(u), op(t), kOrder, kDepth, &alpha, a, lda, &beta, c, ldc);
            });
        check_triangle<double>(
            "cublasDsyrkx", rank_k_kind::syrkx, u, t, options, seed += 10,
            [&](double* a, int64_t lda, double* b, int64_t ldb, double* c, int64_t ldc) {
              return cublasDsyrkx(h, fill(u), op(t), kOrder, kDepth, &alpha, a, lda, b, ldb, &beta,
                                  c, ldc);
            });
        check_triangle<zd>("cublasZherk", rank_k_kind::herk, u, th, options, seed += 10,
                           [&](double* a, int64_t lda, double*, int64_t, double* c, int64_t ldc) {
                             return cublasZherk(h, fill(u), op(th), kOrder, kDepth, &alpha, z(a),
                                                lda, &beta, z(c), ldc);
                           });
        check_triangle<zd>("cublasZsyrk", rank_k_kind::syrk, u, t, options, seed += 10,
                           [&](double* a, int64_t lda, double*, int64_t, double* c, int64_t ldc) {
                             return cublasZsyrk(h, fill(u), op(t), kOrder, kDepth, &zalpha, z(a),
                                                lda, &zbeta, z(c), ldc);
                           });
      }
    cublasDestroy(h);
    cublasDestroy(native);
    std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
    return failures == 0 ? 0 : 1;
  }
  const int64_t block = std::atoll(block_env);
  for (uplo_kind u : {uplo_kind::lower, uplo_kind::upper})
    for (trans_kind t : {trans_kind::n, trans_kind::t}) {
      check_rank_k<double>("cublasDsyrk", rank_k_kind::syrk, u, t, block, options, seed += 10,
                           [&](double* a, int64_t lda, double*, int64_t, double* c, int64_t ldc) {
                             return cublasDsyrk(h, fill(u), op(t), kOrder, kDepth, &alpha, a, lda,
                                                &beta, c, ldc);
                           });
      check_rank_k<double>(
          "cublasDsyr2k", rank_k_kind::syr2k, u, t, block, options, seed += 10,
          [&](double* a, int64_t lda, double* b, int64_t ldb, double* c, int64_t ldc) {
            return cublasDsyr2k(h, fill(u), op(t), kOrder, kDepth, &alpha, a, lda, b, ldb, &beta, c,
                                ldc);
          });
      const trans_kind th = t == trans_kind::n ? trans_kind::n : trans_kind::c;
      check_rank_k<zd>("cublasZherk", rank_k_kind::herk, u, th, block, options, seed += 10,
                       [&](double* a, int64_t lda, double*, int64_t, double* c, int64_t ldc) {
                         return cublasZherk(h, fill(u), op(th), kOrder, kDepth, &alpha,
                                            reinterpret_cast<const cuDoubleComplex*>(a), lda, &beta,
                                            reinterpret_cast<cuDoubleComplex*>(c), ldc);
                       });
      check_rank_k<zd>("cublasZsyr2k", rank_k_kind::syr2k, u, t, block, options, seed += 10,
                       [&](double* a, int64_t lda, double* b, int64_t ldb, double* c, int64_t ldc) {
                         return cublasZsyr2k(h, fill(u), op(t), kOrder, kDepth, &zalpha,
                                             reinterpret_cast<const cuDoubleComplex*>(a), lda,
                                             reinterpret_cast<const cuDoubleComplex*>(b), ldb,
                                             &zbeta, reinterpret_cast<cuDoubleComplex*>(c), ldc);
                       });
    }
  cublasDestroy(h);
  cublasDestroy(native);
  std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
