// Intercepted cuBLAS batched GEMM entry points. Strided batches (cublasDgemmStridedBatched,
// cublasZgemmStridedBatched, cublasGemmStridedBatchedEx with plain FP64 types, each also _64)
// are routed once per batch on the shape of one matrix: the whole batch runs native when that
// matrix would, else every matrix is served as its own GEMM (device_gemm.hpp), so each equals
// the single call on it. Pointer-array batches (cublasDgemmBatched, cublasZgemmBatched,
// cublasGemmBatchedEx, each also _64) and grouped batches (cublasDgemmGroupedBatched,
// cublasGemmGroupedBatchedEx, each also _64) hold their pointers in device memory, which the host
// would have to wait for: they are forwarded, with a decision line. Invalid arguments, empty
// batches and batches whose C matrices overlap are forwarded unchanged, so cuBLAS gives its own
// status. No exception leaves these functions.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "api/dgemm_internal.hpp"
#include "dispatch/call_log.hpp"
#include "interpose/cublas_next.hpp"
#include "interpose/device_gemm.hpp"
#include "interpose/real_symbol.hpp"
#include "ozdgemm/export.h"

namespace ozdgemm::detail {
namespace {

// One strided batch: matrix i at a + i stride_a (elements), likewise b and c.
template <class T>
struct strided_batch {
  device_request<T> first;  // matrix 0, entry name included
  int64_t stride_a, stride_b, stride_c, count;
};

// cuBLAS's argument rules for one matrix of the batch, and a batch whose C matrices are apart.
template <class T>
bool servable(const strided_batch<T>& x) {
  const device_request<T>& r = x.first;
  const auto op_ok = [](cublasOperation_t t) {
    return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C;
  };
  if (!op_ok(r.ta) || !op_ok(r.tb) || r.m <= 0 || r.n <= 0 || r.k < 0 || x.count <= 0)
    return false;
  const int64_t rows_a = r.ta == CUBLAS_OP_N ? r.m : r.k;
  const int64_t rows_b = r.tb == CUBLAS_OP_N ? r.k : r.n;
  if (r.lda < std::max<int64_t>(1, rows_a) || r.ldb < std::max<int64_t>(1, rows_b) ||
      r.ldc < std::max<int64_t>(1, r.m) || r.alpha == nullptr || r.beta == nullptr)
    return false;
  // C_i apart: consecutive matrices at least one matrix's span apart (ldc n elements).
  return x.count == 1 || (x.stride_c > 0 && x.stride_c / r.n >= r.ldc);
}

// libcublas's own 64-bit GEMM of the element type.
using dgemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                    int64_t, int64_t, const double*, const double*, int64_t,
                                    const double*, int64_t, const double*, double*, int64_t);
using zgemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                    int64_t, int64_t, const cuDoubleComplex*,
                                    const cuDoubleComplex*, int64_t, const cuDoubleComplex*,
                                    int64_t, const cuDoubleComplex*, cuDoubleComplex*, int64_t);
template <class T>
using gemm_fn = std::conditional_t<std::is_same_v<T, double>, dgemm_fn, zgemm_fn>;
template <class T>
const char* gemm_name() {
  return std::is_same_v<T, double> ? "cublasDgemm_v2_64" : "cublasZgemm_v2_64";
}

// Serves the batch matrix by matrix, or runs `native` (the batched call unchanged).
template <class T, class Native>
cublasStatus_t serve_strided(const strided_batch<T>& x, Native&& native) noexcept {
  if (inside_interception() || in_native_fallback()) return native();
  try {
    if (!servable(x)) return native();
    static const auto gemm = cublas_next<gemm_fn<T>>(gemm_name<T>());
    const device_request<T>& r = x.first;
    const char* why = gemm == nullptr ? "libcublas lacks its GEMM" : device_gemm_declines(r);
    if (why != nullptr) {
      log_call({r.entry, r.m, r.n, r.k, outcome::native, why, 0, 0.0, 0.0, 0.0});
      return native();
    }
    for (int64_t i = 0; i < x.count; ++i) {
      device_request<T> ri = r;
      ri.a += i * x.stride_a;
      ri.b += i * x.stride_b;
      ri.c += i * x.stride_c;
      auto one = [&] {
        return gemm(ri.handle, ri.ta, ri.tb, ri.m, ri.n, ri.k, ri.alpha, ri.a, ri.lda, ri.b,
                    ri.ldb, ri.beta, ri.c, ri.ldc);
      };
      const cublasStatus_t st = serve_device(ri, one);
      if (st != CUBLAS_STATUS_SUCCESS) return st;
    }
    return CUBLAS_STATUS_SUCCESS;
  } catch (...) {
    return native();  // only before the first matrix (nothing after it throws)
  }
}

// A pointer-array batch: forwarded, with one decision line when it is plain FP64.
template <class Native>
cublasStatus_t forward_pointer_array(const char* entry, int64_t m, int64_t n, int64_t k,
                                     Native&& native) noexcept {
  if (!inside_interception() && !in_native_fallback()) {
    log_call({entry, m, n, k, outcome::native, "pointer arrays in device memory (not served)", 0,
              0.0, 0.0, 0.0});
  }
  return native();
}

// A grouped batch: forwarded, with one decision line per group of plain FP64 matrices (the
// shapes are host arrays; cuBLAS validates them, so a missing array is not read here).
template <class Int, class Native>
cublasStatus_t forward_grouped(const char* entry, const Int* m, const Int* n, const Int* k,
                               Int groups, const Int* sizes, Native&& native) noexcept {
  if (!inside_interception() && !in_native_fallback() && m != nullptr && n != nullptr &&
      k != nullptr && sizes != nullptr) {
    for (Int g = 0; g < groups; ++g)
      if (sizes[g] > 0)
        log_call({entry, m[g], n[g], k[g], outcome::native,
                  "grouped batch: pointer arrays in device memory (not served)", 0, 0.0, 0.0,
                  0.0});
  }
  return native();
}

template <class T, class Int, class Native>
cublasStatus_t serve_ex(const char* entry, cublasHandle_t h, cublasOperation_t ta,
                        cublasOperation_t tb, Int m, Int n, Int k, const void* alpha,
                        const void* a, Int lda, long long sa, const void* b, Int ldb,
                        long long sb, const void* beta, void* c, Int ldc, long long sc, Int count,
                        Native&& native) noexcept {
  const strided_batch<T> x{{entry, h, ta, tb, m, n, k, static_cast<const T*>(alpha),
                            static_cast<const T*>(a), lda, static_cast<const T*>(b), ldb,
                            static_cast<const T*>(beta), static_cast<T*>(c), ldc},
                           sa, sb, sc, count};
  return serve_strided(x, native);
}

}  // namespace
}  // namespace ozdgemm::detail

using namespace ozdgemm::detail;

extern "C" {

// ---- cublas[DZ]gemmStridedBatched[_64]
#define OZDGEMM_FORWARD \
  next(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, count)
#define OZDGEMM_STRIDED(NAME, INT, T)                                                            \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,  \
                                  INT m, INT n, INT k, const T* alpha, const T* A, INT lda,      \
                                  long long sa, const T* B, INT ldb, long long sb, const T* beta, \
                                  T* C, INT ldc, long long sc, INT count) noexcept {             \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasOperation_t, cublasOperation_t, INT, INT, INT,     \
                 const T*, const T*, INT, long long, const T*, INT, long long, const T*, T*, INT, \
                 long long, INT);                                                                \
    const strided_batch<T> x{{#NAME, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc},   \
                             sa, sb, sc, count};                                                 \
    return serve_strided(x, native);                                                             \
  }
OZDGEMM_STRIDED(cublasDgemmStridedBatched, int, double)
OZDGEMM_STRIDED(cublasDgemmStridedBatched_64, int64_t, double)
OZDGEMM_STRIDED(cublasZgemmStridedBatched, int, cuDoubleComplex)
OZDGEMM_STRIDED(cublasZgemmStridedBatched_64, int64_t, cuDoubleComplex)
#undef OZDGEMM_STRIDED
#undef OZDGEMM_FORWARD

// ---- cublasGemmStridedBatchedEx[_64]: plain FP64 real or complex served, anything else
// forwarded unchanged and not logged.
#define OZDGEMM_FORWARD                                                                      \
  next(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc, sc, count, \
       compute, algo)
#define OZDGEMM_STRIDED_EX(NAME, INT)                                                             \
  OZDGEMM_API cublasStatus_t NAME(                                                                \
      cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m, INT n, INT k,          \
      const void* alpha, const void* A, cudaDataType at, INT lda, long long sa, const void* B,    \
      cudaDataType bt, INT ldb, long long sb, const void* beta, void* C, cudaDataType ct,         \
      INT ldc, long long sc, INT count, cublasComputeType_t compute, cublasGemmAlgo_t algo)       \
      noexcept {                                                                                  \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasOperation_t, cublasOperation_t, INT, INT, INT,      \
                 const void*, const void*, cudaDataType, INT, long long, const void*,             \
                 cudaDataType, INT, long long, const void*, void*, cudaDataType, INT, long long,  \
                 INT, cublasComputeType_t, cublasGemmAlgo_t);                                     \
    switch (gemm_ex_fp64_kind(at, bt, ct, compute, algo)) {                                                 \
      case fp64_kind::real:                                                                       \
        return serve_ex<double>(#NAME, h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta,   \
                                C, ldc, sc, count, native);                                       \
      case fp64_kind::complex:                                                                    \
        return serve_ex<cuDoubleComplex>(#NAME, h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb,    \
                                         sb, beta, C, ldc, sc, count, native);                    \
      case fp64_kind::none:                                                                       \
        break;                                                                                    \
    }                                                                                             \
    return native();                                                                              \
  }
OZDGEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
OZDGEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
#undef OZDGEMM_STRIDED_EX
#undef OZDGEMM_FORWARD

// ---- cublas[DZ]gemmBatched[_64]: forwarded with a decision line.
#define OZDGEMM_FORWARD next(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, count)
#define OZDGEMM_POINTERS(NAME, INT, T)                                                           \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,  \
                                  INT m, INT n, INT k, const T* alpha, const T* const A[],       \
                                  INT lda, const T* const B[], INT ldb, const T* beta,           \
                                  T* const C[], INT ldc, INT count) noexcept {                   \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasOperation_t, cublasOperation_t, INT, INT, INT,     \
                 const T*, const T* const*, INT, const T* const*, INT, const T*, T* const*, INT, \
                 INT);                                                                           \
    return forward_pointer_array(#NAME, m, n, k, native);                                        \
  }
OZDGEMM_POINTERS(cublasDgemmBatched, int, double)
OZDGEMM_POINTERS(cublasDgemmBatched_64, int64_t, double)
OZDGEMM_POINTERS(cublasZgemmBatched, int, cuDoubleComplex)
OZDGEMM_POINTERS(cublasZgemmBatched_64, int64_t, cuDoubleComplex)
#undef OZDGEMM_POINTERS
#undef OZDGEMM_FORWARD

// ---- cublasGemmBatchedEx[_64]: plain FP64 forwarded with a decision line, anything else
// forwarded unchanged.
#define OZDGEMM_FORWARD \
  next(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, count, compute, algo)
#define OZDGEMM_POINTERS_EX(NAME, INT)                                                            \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,   \
                                  INT m, INT n, INT k, const void* alpha, const void* const A[],  \
                                  cudaDataType at, INT lda, const void* const B[],                \
                                  cudaDataType bt, INT ldb, const void* beta, void* const C[],    \
                                  cudaDataType ct, INT ldc, INT count,                            \
                                  cublasComputeType_t compute, cublasGemmAlgo_t algo) noexcept {  \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasOperation_t, cublasOperation_t, INT, INT, INT,      \
                 const void*, const void* const*, cudaDataType, INT, const void* const*,          \
                 cudaDataType, INT, const void*, void* const*, cudaDataType, INT, INT,            \
                 cublasComputeType_t, cublasGemmAlgo_t);                                          \
    if (gemm_ex_fp64_kind(at, bt, ct, compute, algo) == fp64_kind::none) return native();                   \
    return forward_pointer_array(#NAME, m, n, k, native);                                         \
  }
OZDGEMM_POINTERS_EX(cublasGemmBatchedEx, int)
OZDGEMM_POINTERS_EX(cublasGemmBatchedEx_64, int64_t)
#undef OZDGEMM_POINTERS_EX
#undef OZDGEMM_FORWARD

// ---- cublasDgemmGroupedBatched[_64]: forwarded with a decision line per group.
#define OZDGEMM_FORWARD next(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, groups, sizes)
#define OZDGEMM_GROUPED(NAME, INT)                                                              \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, const cublasOperation_t ta[],               \
                                  const cublasOperation_t tb[], const INT m[], const INT n[],   \
                                  const INT k[], const double alpha[], const double* const A[], \
                                  const INT lda[], const double* const B[], const INT ldb[],    \
                                  const double beta[], double* const C[], const INT ldc[],      \
                                  INT groups, const INT sizes[]) noexcept {                     \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, const cublasOperation_t*, const cublasOperation_t*,     \
                 const INT*, const INT*, const INT*, const double*, const double* const*,       \
                 const INT*, const double* const*, const INT*, const double*, double* const*,   \
                 const INT*, INT, const INT*);                                                  \
    return forward_grouped(#NAME, m, n, k, groups, sizes, native);                              \
  }
OZDGEMM_GROUPED(cublasDgemmGroupedBatched, int)
OZDGEMM_GROUPED(cublasDgemmGroupedBatched_64, int64_t)
#undef OZDGEMM_GROUPED
#undef OZDGEMM_FORWARD

// ---- cublasGemmGroupedBatchedEx[_64]: plain FP64 forwarded with a decision line per group,
// anything else forwarded unchanged.
#define OZDGEMM_FORWARD \
  next(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, groups, sizes, compute)
#define OZDGEMM_GROUPED_EX(NAME, INT)                                                            \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, const cublasOperation_t ta[],                \
                                  const cublasOperation_t tb[], const INT m[], const INT n[],    \
                                  const INT k[], const void* alpha, const void* const A[],       \
                                  cudaDataType at, const INT lda[], const void* const B[],       \
                                  cudaDataType bt, const INT ldb[], const void* beta,            \
                                  void* const C[], cudaDataType ct, const INT ldc[], INT groups, \
                                  const INT sizes[], cublasComputeType_t compute) noexcept {     \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, const cublasOperation_t*, const cublasOperation_t*,      \
                 const INT*, const INT*, const INT*, const void*, const void* const*,            \
                 cudaDataType, const INT*, const void* const*, cudaDataType, const INT*,         \
                 const void*, void* const*, cudaDataType, const INT*, INT, const INT*,           \
                 cublasComputeType_t);                                                           \
    if (gemm_ex_fp64_kind(at, bt, ct, compute, CUBLAS_GEMM_DEFAULT) == fp64_kind::none)          \
      return native();                                                                           \
    return forward_grouped(#NAME, m, n, k, groups, sizes, native);                               \
  }
OZDGEMM_GROUPED_EX(cublasGemmGroupedBatchedEx, int)
OZDGEMM_GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t)
#undef OZDGEMM_GROUPED_EX
#undef OZDGEMM_FORWARD

}  // extern "C"

