// Intercepted cuBLAS batched GEMM entry points. Strided batches (cublasDgemmStridedBatched,
// cublasZgemmStridedBatched, cublasGemmStridedBatchedEx with plain FP64 types, each also _64)
// are routed once per batch on the shape of one matrix: the whole batch runs native when that
// matrix would, else a real batch at a fixed moduli count runs as one emulation per chunk of
// matrices (the batched engine, engine/batched_emulate.hpp) and any other batch (or what the
// engine declined) matrix by matrix, each as its own GEMM (device_gemm.hpp): either way each
// matrix equals the single call on it. Pointer-array batches (cublasDgemmBatched,
// cublasZgemmBatched, cublasGemmBatchedEx, each also _64) hold their pointers in device memory,
// which the host would have to wait for: unless OZDGEMM_POINTER_BATCHES=off they are routed the
// same way and a routed batch is served in chunks copied into a packed buffer and back
// (engine/packed_batch.hpp; each chunk a strided batch as above), and
// grouped batches (cublasDgemmGroupedBatched, cublasGemmGroupedBatchedEx, each also _64) group
// by group likewise; otherwise both are forwarded with a decision line (per group).
// Invalid arguments, empty batches and batches whose C matrices overlap are forwarded unchanged,
// so cuBLAS gives its own status. No exception leaves these functions.
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "api/dgemm_internal.hpp"
#include "api/zgemm_internal.hpp"
#include "common/cublas_api.hpp"
#include "common/logging.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/settings.hpp"
#include "engine/handle_context.hpp"
#include "engine/packed_batch.hpp"
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

// cuBLAS's argument rules for one matrix of a batch of `count` (not empty).
template <class T>
bool valid_matrix(const device_request<T>& r, int64_t count) {
  const auto op_ok = [](cublasOperation_t t) {
    return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C;
  };
  if (!op_ok(r.ta) || !op_ok(r.tb) || r.m <= 0 || r.n <= 0 || r.k < 0 || count <= 0) return false;
  const int64_t rows_a = r.ta == CUBLAS_OP_N ? r.m : r.k;
  const int64_t rows_b = r.tb == CUBLAS_OP_N ? r.k : r.n;
  return r.lda >= std::max<int64_t>(1, rows_a) && r.ldb >= std::max<int64_t>(1, rows_b) &&
         r.ldc >= std::max<int64_t>(1, r.m) && r.alpha != nullptr && r.beta != nullptr;
}

// ... and a strided batch whose C matrices are apart: consecutive matrices at least one
// matrix's span (ldc n elements) apart.
template <class T>
bool servable(const strided_batch<T>& x) {
  const device_request<T>& r = x.first;
  return valid_matrix(r, x.count) &&
         (x.count == 1 || (x.stride_c > 0 && x.stride_c / r.n >= r.ldc));
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

strided_batch_result strided_batch_device(const device_request<double>& r, int64_t stride_a,
                                          int64_t stride_b, int64_t stride_c, int64_t count,
                                          const ozdgemm_options_t& o) {
  return dgemm_strided_batch_device(r.handle, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda,
                                    stride_a, r.b, r.ldb, stride_b, r.beta, r.c, r.ldc, stride_c,
                                    count, o);
}
strided_batch_result strided_batch_device(const device_request<cuDoubleComplex>& r,
                                          int64_t stride_a, int64_t stride_b, int64_t stride_c,
                                          int64_t count, const ozdgemm_options_t& o) {
  return zgemm_strided_batch_device(r.handle, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda,
                                    stride_a, r.b, r.ldb, stride_b, r.beta, r.c, r.ldc, stride_c,
                                    count, o);
}

// The batched engine (api/dgemm_internal.hpp, dgemm_strided_batch_device, and its complex twin)
// on a routed strided batch when the settings give a fixed count: returns how many
// matrices, from the first, it enqueued (one decision line for them); the caller serves the rest
// matrix by matrix, or, for a route priced as the engine (route::engine), runs them native.
template <class T>
int64_t serve_batch_engine(const device_request<T>& r, int64_t stride_a, int64_t stride_b,
                           int64_t stride_c, int64_t count, const route& rt) noexcept {
  try {
    const ozdgemm_options_t o = api_options(settings());
    if (o.num_moduli <= 0) return 0;  // a count per call: the per-matrix path
    const auto t0 = std::chrono::steady_clock::now();
    strided_batch_result b;
    {
      interception_scope scope;
      b = strided_batch_device(r, stride_a, stride_b, stride_c, count, o);
    }
    if (b.done == 0) {
      logger().debug(
          "{}: {} matrices of m={} n={} k={}: not for the batched engine ({}); "
          "served {}",
          r.entry, count, r.m, r.n, r.k, b.declined,
          rt.engine ? "by the native batched routine" : "matrix by matrix");
      return 0;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    logger().debug("{}: {} of {} matrices by the batched engine, {} per chunk", r.entry, b.done,
                   count, b.per_chunk);
    log_call({r.entry, r.m, r.n, r.k, outcome::emulated, "batched engine: one emulation per chunk",
              b.s, rt.predicted.native_ms, rt.predicted.emulated_ms, seconds});
    return b.done;
  } catch (...) {
    return 0;  // before anything was enqueued (settings, logging)
  }
}

// Serves the batch through the batched engine where it can (serve_batch_engine), the rest matrix
// by matrix, or runs `native` (the batched call unchanged).
template <class T, class Native>
cublasStatus_t serve_strided(const strided_batch<T>& x, Native&& native) noexcept {
  if (inside_interception() || in_native_fallback()) return native();
  try {
    if (!servable(x)) return native();
    static const auto gemm = cublas_next<gemm_fn<T>>(gemm_name<T>());
    const device_request<T>& r = x.first;
    const bool engine_may =
        engine_strides(r.n, r.ldc, x.stride_a, x.stride_b, x.stride_c, x.count);
    const route rt = gemm == nullptr ? route{false, "libcublas lacks its GEMM", {0.0, 0.0}}
                                     : device_batch_route(r, x.count, engine_may);
    if (!rt.emulate) {
      log_call({r.entry, r.m, r.n, r.k, outcome::native, rt.reason, 0, rt.predicted.native_ms,
                rt.predicted.emulated_ms, 0.0});
      return native();
    }
    const int64_t served = serve_batch_engine(r, x.stride_a, x.stride_b, x.stride_c, x.count, rt);
    // Priced as the engine's run, which did not take the batch: one emulation per matrix was
    // not priced, so the native routine runs it. (A chunk that failed part-way leaves its
    // matrices and the rest to the per-matrix path.)
    if (rt.engine && served == 0) {
      log_call({r.entry, r.m, r.n, r.k, outcome::native, "the batched engine declined the batch", 0,
                rt.predicted.native_ms, rt.predicted.emulated_ms, 0.0});
      return native();
    }
    for (int64_t i = served; i < x.count; ++i) {
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

// A pointer-array batch: matrix i's operands at a[i], b[i], c[i], the arrays in device memory.
template <class T>
struct pointer_batch {
  device_request<T> shape;  // entry, handle, ops, sizes, scalars, leading dimensions; no matrix
  const T* const* a;
  const T* const* b;
  T* const* c;
  int64_t count;
};

// How many matrices one packed chunk holds: what the batch budget allows
// (engine/handle_context.hpp), and at least one matrix.
int64_t chunk_matrices(size_t matrix_bytes, int64_t count, cudaStream_t stream) {
  return packed_batch::per_chunk(matrix_bytes, batch_workspace_budget(stream), count);
}

// OZDGEMM_POINTER_BATCHES (settings may throw: false then).
bool settings_pointer_batches() noexcept {
  try {
    return settings().pointer_batches;
  } catch (...) {
    return false;
  }
}

bool is_zero(const double& v) { return v == 0.0; }
bool is_zero(const cuDoubleComplex& v) { return v.x == 0.0 && v.y == 0.0; }

// Serves a pointer-array batch chunk by chunk through packed copies, each matrix as its own GEMM
// (so it equals the single call on it), or runs native_range(first, count): the batched routine
// unchanged on matrices [first, first + count).
template <class T, class NativeRange>
cublasStatus_t serve_pointers(const pointer_batch<T>& x, NativeRange&& native_range) noexcept {
  const auto all = [&] { return native_range(0, x.count); };
  if (inside_interception() || in_native_fallback()) return all();
  const device_request<T>& r = x.shape;
  int64_t done = 0;  // matrices [0, done) have their results (or are enqueued)
  try {
    if (!valid_matrix(r, x.count) || x.a == nullptr || x.b == nullptr || x.c == nullptr)
      return all();
    static const auto gemm = cublas_next<gemm_fn<T>>(gemm_name<T>());
    const route rt =
        !settings_pointer_batches()
            ? route{false, "pointer arrays in device memory (OZDGEMM_POINTER_BATCHES=off)", {0, 0}}
        : gemm == nullptr ? route{false, "libcublas lacks its GEMM", {0.0, 0.0}}
                          : device_batch_route(r, x.count, true);
    const char* why = rt.emulate ? nullptr : rt.reason;
    cudaStream_t stream = nullptr;
    cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
    if (why == nullptr && (cublas_get_stream(r.handle, &stream) != CUBLAS_STATUS_SUCCESS ||
                           cublas_get_pointer_mode(r.handle, &mode) != CUBLAS_STATUS_SUCCESS))
      why = "unreadable handle";
    if (why != nullptr) {
      log_call({r.entry, r.m, r.n, r.k, outcome::native, why, 0, rt.predicted.native_ms,
                rt.predicted.emulated_ms, 0.0});
      return all();
    }
    const bool device_scalars = mode == CUBLAS_POINTER_MODE_DEVICE;
    const int elem = static_cast<int>(sizeof(T));
    const int64_t rows_a = r.ta == CUBLAS_OP_N ? r.m : r.k, cols_a = r.ta == CUBLAS_OP_N ? r.k : r.m;
    const int64_t rows_b = r.tb == CUBLAS_OP_N ? r.k : r.n, cols_b = r.tb == CUBLAS_OP_N ? r.n : r.k;
    const auto ptrs = [](const void* p) { return static_cast<const void* const*>(p); };
    const batch_operand a{ptrs(x.a), r.lda, rows_a, cols_a, elem};
    const batch_operand b{ptrs(x.b), r.ldb, rows_b, cols_b, elem};
    const batch_operand c{ptrs(x.c), r.ldc, r.m, r.n, elem};
    const int64_t per_chunk =
        chunk_matrices(packed_batch::matrix_bytes(a, b, c), x.count, stream);
    // BLAS reads neither A nor B when alpha is 0; in device pointer mode the kernels look.
    const bool read_ab = device_scalars || !is_zero(*r.alpha);
    logger().debug("{}: {} matrices of m={} n={} k={} from device pointer arrays, {} per packed "
                   "chunk, each served as its own GEMM",
                   r.entry, x.count, r.m, r.n, r.k, per_chunk);
    while (done < x.count) {
      const int64_t here = std::min(per_chunk, x.count - done);
      packed_batch pk(a, b, c, done, here, stream);
      if (!pk.ok()) {
        log_call({r.entry, r.m, r.n, r.k, outcome::fallback,
                  "no device memory for the packed chunk", 0, 0.0, 0.0, 0.0});
        const cublasStatus_t st = native_range(done, here);
        if (st != CUBLAS_STATUS_SUCCESS) return st;
        done += here;
        continue;
      }
      pk.gather(device_scalars ? reinterpret_cast<const double*>(r.alpha) : nullptr, read_ab);
      // The packed copies are a strided batch: the batched engine takes what it can.
      device_request<T> packed = r;
      packed.a = static_cast<const T*>(pk.a(0));
      packed.lda = std::max<int64_t>(1, rows_a);
      packed.b = static_cast<const T*>(pk.b(0));
      packed.ldb = std::max<int64_t>(1, rows_b);
      packed.c = static_cast<T*>(pk.c(0));
      packed.ldc = r.m;
      const auto stride = [&](void* (packed_batch::*at)(int64_t) const) {
        if (here == 1) return int64_t{0};
        return static_cast<int64_t>(static_cast<const T*>((pk.*at)(1)) -
                                    static_cast<const T*>((pk.*at)(0)));
      };
      const int64_t served =
          serve_batch_engine(packed, stride(&packed_batch::a), stride(&packed_batch::b),
                             stride(&packed_batch::c), here, rt);
      if (rt.engine && served == 0) {  // as serve_strided: the chunk runs native, unpacked
        log_call({r.entry, r.m, r.n, r.k, outcome::native, "the batched engine declined the chunk",
                  0, rt.predicted.native_ms, rt.predicted.emulated_ms, 0.0});
        const cublasStatus_t st = native_range(done, here);
        if (st != CUBLAS_STATUS_SUCCESS) return st;
        done += here;
        continue;
      }
      for (int64_t i = served; i < here; ++i) {
        device_request<T> ri = r;
        ri.a = static_cast<const T*>(pk.a(i));
        ri.lda = std::max<int64_t>(1, rows_a);
        ri.b = static_cast<const T*>(pk.b(i));
        ri.ldb = std::max<int64_t>(1, rows_b);
        ri.c = static_cast<T*>(pk.c(i));
        ri.ldc = r.m;
        auto one = [&] {
          return gemm(ri.handle, ri.ta, ri.tb, ri.m, ri.n, ri.k, ri.alpha, ri.a, ri.lda, ri.b,
                      ri.ldb, ri.beta, ri.c, ri.ldc);
        };
        const cublasStatus_t st = serve_device(ri, one);
        if (st != CUBLAS_STATUS_SUCCESS) return st;
      }
      pk.scatter();  // a failed launch writes nothing: the chunk then runs native below
      done += here;
    }
    return CUBLAS_STATUS_SUCCESS;
  } catch (...) {
    // A packing launch failed: what was not scattered yet is untouched.
    return done < x.count ? native_range(done, x.count - done) : CUBLAS_STATUS_SUCCESS;
  }
}

// The plain FP64 arguments of a pointer-array batch (Ex form: void arrays).
template <class T, class Int>
pointer_batch<T> pointers_of(const char* entry, cublasHandle_t h, cublasOperation_t ta,
                             cublasOperation_t tb, Int m, Int n, Int k, const void* alpha,
                             const void* const a[], Int lda, const void* const b[], Int ldb,
                             const void* beta, void* const c[], Int ldc, Int count) {
  return {{entry, h, ta, tb, m, n, k, static_cast<const T*>(alpha), nullptr, lda, nullptr, ldb,
           static_cast<const T*>(beta), nullptr, ldc},
          reinterpret_cast<const T* const*>(a),
          reinterpret_cast<const T* const*>(b),
          reinterpret_cast<T* const*>(c),
          count};
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

// A grouped batch: group g is a pointer-array batch of sizes[g] matrices of its own shape and
// scalars (alpha + g, beta + g: host or device memory as the pointer mode says), its matrices the
// next sizes[g] entries of the arrays.
template <class T, class Int>
struct grouped_batch {
  const char* entry;
  cublasHandle_t handle;
  const cublasOperation_t *ta, *tb;
  const Int *m, *n, *k;
  const T* alpha;
  const T* const* a;
  const Int* lda;
  const T* const* b;
  const Int* ldb;
  const T* beta;
  T* const* c;
  const Int* ldc;
  Int groups;
  const Int* sizes;
};

// With OZDGEMM_POINTER_BATCHES=on each group is served as a pointer-array batch
// (serve_pointers), its native runs being native_group(g, first, count): the grouped routine on
// matrices [first, first + count) of the arrays, as group g alone. A call cuBLAS would refuse
// (a missing array, a negative count or size, an invalid group) is forwarded whole (`native`).
template <class T, class Int, class NativeGroup, class Native>
cublasStatus_t serve_grouped(const grouped_batch<T, Int>& x, NativeGroup&& native_group,
                             Native&& native) noexcept {
  if (!settings_pointer_batches()) return forward_grouped(x.entry, x.m, x.n, x.k, x.groups,
                                                          x.sizes, native);
  if (inside_interception() || in_native_fallback()) return native();
  const auto shape = [&](Int g) {
    return device_request<T>{x.entry,  x.handle,   x.ta[g], x.tb[g],       x.m[g],
                             x.n[g],   x.k[g],     x.alpha + g, nullptr,   x.lda[g],
                             nullptr,  x.ldb[g],   x.beta + g,  nullptr,   x.ldc[g]};
  };
  if (x.ta == nullptr || x.tb == nullptr || x.m == nullptr || x.n == nullptr || x.k == nullptr ||
      x.lda == nullptr || x.ldb == nullptr || x.ldc == nullptr || x.sizes == nullptr ||
      x.alpha == nullptr || x.beta == nullptr || x.groups < 0)
    return native();
  for (Int g = 0; g < x.groups; ++g)
    if (x.sizes[g] < 0 || (x.sizes[g] > 0 && !valid_matrix(shape(g), x.sizes[g])))
      return native();
  int64_t offset = 0;
  for (Int g = 0; g < x.groups; ++g) {
    if (x.sizes[g] == 0) continue;
    const pointer_batch<T> group{shape(g), x.a + offset, x.b + offset, x.c + offset, x.sizes[g]};
    const cublasStatus_t st = serve_pointers(group, [&](int64_t first, int64_t q) {
      return native_group(static_cast<int64_t>(g), offset + first, q);
    });
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    offset += x.sizes[g];
  }
  return CUBLAS_STATUS_SUCCESS;
}

// The plain FP64 arguments of a grouped batch in its Ex form (void scalars and arrays).
template <class T, class Int>
grouped_batch<T, Int> grouped_of(const char* entry, cublasHandle_t h, const cublasOperation_t* ta,
                                 const cublasOperation_t* tb, const Int* m, const Int* n,
                                 const Int* k, const void* alpha, const void* const* a,
                                 const Int* lda, const void* const* b, const Int* ldb,
                                 const void* beta, void* const* c, const Int* ldc, Int groups,
                                 const Int* sizes) {
  return {entry, h, ta, tb, m, n, k, static_cast<const T*>(alpha),
          reinterpret_cast<const T* const*>(a), lda, reinterpret_cast<const T* const*>(b), ldb,
          static_cast<const T*>(beta), reinterpret_cast<T* const*>(c), ldc, groups, sizes};
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

// ---- cublas[DZ]gemmBatched[_64]: served through packed copies (OZDGEMM_POINTER_BATCHES=on),
// else forwarded with a decision line.
#define OZDGEMM_FORWARD next(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, count)
#define OZDGEMM_POINTERS(NAME, INT, T)                                                           \
  OZDGEMM_API cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,  \
                                  INT m, INT n, INT k, const T* alpha, const T* const A[],       \
                                  INT lda, const T* const B[], INT ldb, const T* beta,           \
                                  T* const C[], INT ldc, INT count) noexcept {                   \
    OZDGEMM_NEXT(#NAME, cublasHandle_t, cublasOperation_t, cublasOperation_t, INT, INT, INT,     \
                 const T*, const T* const*, INT, const T* const*, INT, const T*, T* const*, INT, \
                 INT);                                                                           \
    const pointer_batch<T> x{{#NAME, h, ta, tb, m, n, k, alpha, nullptr, lda, nullptr, ldb,      \
                              beta, nullptr, ldc},                                               \
                             A, B, C, count};                                                    \
    return serve_pointers(x, [&](int64_t first, int64_t q) {                                     \
      if (q == count || next == nullptr) return native();                                       \
      return next(h, ta, tb, m, n, k, alpha, A + first, lda, B + first, ldb, beta, C + first,    \
                  ldc, static_cast<INT>(q));                                                     \
    });                                                                                          \
  }
OZDGEMM_POINTERS(cublasDgemmBatched, int, double)
OZDGEMM_POINTERS(cublasDgemmBatched_64, int64_t, double)
OZDGEMM_POINTERS(cublasZgemmBatched, int, cuDoubleComplex)
OZDGEMM_POINTERS(cublasZgemmBatched_64, int64_t, cuDoubleComplex)
#undef OZDGEMM_POINTERS
#undef OZDGEMM_FORWARD

// ---- cublasGemmBatchedEx[_64]: plain FP64 as cublas[DZ]gemmBatched, anything else forwarded
// unchanged.
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
    const auto range = [&](int64_t first, int64_t q) {                                           \
      if (q == count || next == nullptr) return native();                                        \
      return next(h, ta, tb, m, n, k, alpha, A + first, at, lda, B + first, bt, ldb, beta,        \
                  C + first, ct, ldc, static_cast<INT>(q), compute, algo);                        \
    };                                                                                            \
    switch (gemm_ex_fp64_kind(at, bt, ct, compute, algo)) {                                      \
      case fp64_kind::real:                                                                       \
        return serve_pointers(pointers_of<double>(#NAME, h, ta, tb, m, n, k, alpha, A, lda, B,    \
                                                  ldb, beta, C, ldc, count),                      \
                              range);                                                             \
      case fp64_kind::complex:                                                                    \
        return serve_pointers(pointers_of<cuDoubleComplex>(#NAME, h, ta, tb, m, n, k, alpha, A,   \
                                                           lda, B, ldb, beta, C, ldc, count),     \
                              range);                                                             \
      case fp64_kind::none:                                                                       \
        break;                                                                                    \
    }                                                                                             \
    return native();                                                                              \
  }
OZDGEMM_POINTERS_EX(cublasGemmBatchedEx, int)
OZDGEMM_POINTERS_EX(cublasGemmBatchedEx_64, int64_t)
#undef OZDGEMM_POINTERS_EX
#undef OZDGEMM_FORWARD

// ---- cublasDgemmGroupedBatched[_64]: each group as a pointer-array batch
// (OZDGEMM_POINTER_BATCHES=on), else forwarded with a decision line per group.
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
    const grouped_batch<double, INT> x{#NAME, h,    ta,  tb,   m, n,    k,   alpha, A,     \
                                       lda,   B,    ldb, beta, C, ldc,  groups, sizes};    \
    const auto group = [&](int64_t g, int64_t first, int64_t q) {                               \
      const INT size = static_cast<INT>(q);                                                     \
      if (next == nullptr) return CUBLAS_STATUS_NOT_SUPPORTED;                                  \
      return next(h, ta + g, tb + g, m + g, n + g, k + g, alpha + g, A + first, lda + g,        \
                  B + first, ldb + g, beta + g, C + first, ldc + g, 1, &size);                  \
    };                                                                                          \
    return serve_grouped(x, group, native);                                                     \
  }
OZDGEMM_GROUPED(cublasDgemmGroupedBatched, int)
OZDGEMM_GROUPED(cublasDgemmGroupedBatched_64, int64_t)
#undef OZDGEMM_GROUPED
#undef OZDGEMM_FORWARD

// ---- cublasGemmGroupedBatchedEx[_64]: real FP64 as cublasDgemmGroupedBatched, complex FP64
// forwarded with a decision line per group, anything else forwarded unchanged.
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
    const fp64_kind kind = gemm_ex_fp64_kind(at, bt, ct, compute, CUBLAS_GEMM_DEFAULT);         \
    if (kind == fp64_kind::none) return native();                                                \
    /* Complex grouped batches: cuBLAS documents real types only; forwarded, its status. */     \
    if (kind == fp64_kind::complex) return forward_grouped(#NAME, m, n, k, groups, sizes, native); \
    const auto group = [&](int64_t g, int64_t first, int64_t q) {                                \
      const INT size = static_cast<INT>(q);                                                      \
      if (next == nullptr) return CUBLAS_STATUS_NOT_SUPPORTED;                                   \
      return next(h, ta + g, tb + g, m + g, n + g, k + g, static_cast<const double*>(alpha) + g, \
                  A + first, at, lda + g, B + first, bt, ldb + g,                                \
                  static_cast<const double*>(beta) + g, C + first, ct, ldc + g, 1, &size,        \
                  compute);                                                                      \
    };                                                                                           \
    return serve_grouped(grouped_of<double>(#NAME, h, ta, tb, m, n, k, alpha, A, lda, B, ldb,    \
                                            beta, C, ldc, groups, sizes),                        \
                         group, native);                                                         \
  }
OZDGEMM_GROUPED_EX(cublasGemmGroupedBatchedEx, int)
OZDGEMM_GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t)
#undef OZDGEMM_GROUPED_EX
#undef OZDGEMM_FORWARD

}  // extern "C"

