// The batched entries, on the GPU and their host references: the whole batch's arguments are
// checked first, then each matrix goes through the single call's entry (ozdgemm_dgemm or
// ozdgemm_dgemm_reference, and the complex ones), so that matrix i's result is the single call's
// on matrix i by construction.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "api/call_checks.hpp"
#include "api/status.hpp"
#include "api/zgemm_internal.hpp"
#include "common/logging.hpp"
#include "core/checked_math.hpp"
#include "engine/batched_complex.hpp"
#include "engine/batched_emulate.hpp"
#include "engine/handle_context.hpp"
#include "engine/run.hpp"
#include "ozdgemm/ozdgemm.h"

namespace ozdgemm::detail {
namespace {

// The workspace one chunk of a batch may take (dgemm_strided_batch_device): the batch budget
// (engine/handle_context.hpp), at most 2 GiB without a cap: beyond that larger chunks only hold
// memory (a chunk of 2 GiB has long filled the GPU).
size_t batch_budget(cudaStream_t stream) {
  constexpr size_t kMaxBudget = size_t{2} << 30;
  const size_t budget = batch_workspace_budget(stream);
  return workspace_cap() != 0 ? budget : std::min(budget, kMaxBudget);
}

// The L2 cache of the current device, in bytes (0 when it cannot be read: no batch then), read
// from CUDA once per device.
size_t l2_cache_bytes() {
  constexpr int kDevices = 64;
  static std::atomic<int> cached[kDevices] = {};  // bytes + 1; 0: not read yet
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  const bool slot = device >= 0 && device < kDevices;
  if (slot && cached[device].load(std::memory_order_relaxed) > 0)
    return static_cast<size_t>(cached[device].load(std::memory_order_relaxed) - 1);
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  bytes = bytes > 0 ? bytes : 0;
  if (slot && bytes < INT32_MAX) cached[device].store(bytes + 1, std::memory_order_relaxed);
  return static_cast<size_t>(bytes);
}

// Matrix i of a strided operand (strides >= 0, the last matrix addressable: no overflow).
template <class T>
T* matrix_at(T* base, int64_t i, int64_t stride) {
  return base + i * stride;
}

// Matrix i of a strided batch: base + i stride elements.
template <class T>
struct strided_operands {
  const T* a;
  int64_t stride_a;
  const T* b;
  int64_t stride_b;
  T* c;
  int64_t stride_c;

  bool present() const { return true; }
  bool at(int64_t i, const T** ai, const T** bi, T** ci) const {
    const void *pa = nullptr, *pb = nullptr, *pc = nullptr;
    if (!strided_element(a, i, stride_a, sizeof(T), &pa) ||
        !strided_element(b, i, stride_b, sizeof(T), &pb) ||
        !strided_element(c, i, stride_c, sizeof(T), &pc))
      return false;
    *ai = static_cast<const T*>(pa);
    *bi = static_cast<const T*>(pb);
    *ci = static_cast<T*>(const_cast<void*>(pc));
    return true;
  }
};

// Matrix i of a pointer-array batch.
template <class T>
struct array_operands {
  const T* const* a;
  const T* const* b;
  T* const* c;

  bool present() const { return a != nullptr && b != nullptr && c != nullptr; }
  bool at(int64_t i, const T** ai, const T** bi, T** ci) const {
    *ai = a[i];
    *bi = b[i];
    *ci = c[i];
    return true;
  }
};

// No step over the whole batch: every matrix through the single call.
constexpr auto matrix_by_matrix = [] { return int64_t{0}; };

// Checks every argument of the batch (`checked`, the single call's rules with `args`;
// batch_count >= 0, the arrays, every matrix in the address space), then runs whole(), a step
// over the whole batch that returns how many matrices, from the first, it has served (the
// batched engine), and single(A_i, B_i, C_i) for each remaining i in order. reads_ab: A and B
// are read (alpha != 0, or alpha not readable on the host).
template <class T, class Operands, class Whole, class Single>
ozdgemm_status_t run_batch(ozdgemm_status_t checked, const checked_args& args, int64_t m, int64_t n,
                           int64_t k, int64_t lda, int64_t ldb, int64_t ldc, bool reads_ab,
                           int64_t batch_count, const Operands& operands, Whole&& whole,
                           Single&& single) {
  if (checked != OZDGEMM_STATUS_SUCCESS) return checked;
  if (batch_count < 0) return OZDGEMM_STATUS_INVALID_VALUE;
  if (batch_count == 0 || m == 0 || n == 0) return OZDGEMM_STATUS_SUCCESS;
  if (!operands.present()) return OZDGEMM_STATUS_INVALID_VALUE;
  for (int64_t i = 0; i < batch_count; ++i) {
    const T *a = nullptr, *b = nullptr;
    T* c = nullptr;
    if (!operands.at(i, &a, &b, &c) ||
        !addressable(args, m, n, k, a, lda, b, ldb, c, ldc, reads_ab, sizeof(T)))
      return OZDGEMM_STATUS_INVALID_VALUE;
  }
  for (int64_t i = whole(); i < batch_count; ++i) {
    const T *a = nullptr, *b = nullptr;
    T* c = nullptr;
    operands.at(i, &a, &b, &c);
    const ozdgemm_status_t st = single(a, b, c);
    if (st != OZDGEMM_STATUS_SUCCESS) return st;
  }
  return OZDGEMM_STATUS_SUCCESS;
}

template <class Operands>
ozdgemm_status_t dgemm_batch(const char* entry, char transa, char transb, int64_t m, int64_t n,
                             int64_t k, double alpha, int64_t lda, int64_t ldb, double beta,
                             int64_t ldc, int64_t batch_count, const ozdgemm_options_t& options,
                             const Operands& operands) {
  return guarded(entry, [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked =
        check_reference_args(transa, transb, m, n, k, lda, ldb, ldc, options, &args);
    return run_batch<double>(checked, args, m, n, k, lda, ldb, ldc, alpha != 0.0, batch_count,
                             operands, matrix_by_matrix,
                             [&](const double* a, const double* b, double* c) {
                               return ozdgemm_dgemm_reference(transa, transb, m, n, k, alpha, a,
                                                              lda, b, ldb, beta, c, ldc, options);
                             });
  });
}

template <class Operands>
ozdgemm_status_t zgemm_batch(const char* entry, char transa, char transb, int64_t m, int64_t n,
                             int64_t k, cuDoubleComplex alpha, int64_t lda, int64_t ldb,
                             cuDoubleComplex beta, int64_t ldc, int64_t batch_count,
                             const ozdgemm_options_t& options, const Operands& operands) {
  const bool reads_ab = cuCreal(alpha) != 0.0 || cuCimag(alpha) != 0.0;
  return guarded(entry, [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked =
        check_reference_args(transa, transb, m, n, k, lda, ldb, ldc, options, &args);
    return run_batch<cuDoubleComplex>(
        checked, args, m, n, k, lda, ldb, ldc, reads_ab, batch_count, operands, matrix_by_matrix,
        [&](const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* c) {
          return ozdgemm_zgemm_reference(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                         ldc, options);
        });
  });
}

// The device forms: cuBLAS's rules for the single call; alpha may be in device memory, so A and
// B are taken as read. `whole` as run_batch's.
template <class T, class Operands, class Whole, class Single>
ozdgemm_status_t device_batch(const char* entry, cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                              const T* alpha, int64_t lda, int64_t ldb, const T* beta, int64_t ldc,
                              int64_t batch_count, const ozdgemm_options_t& options,
                              const Operands& operands, Whole&& whole, Single&& single) {
  return guarded(entry, [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked = check_device_args(handle, transa, transb, m, n, k, lda, ldb,
                                                       ldc, alpha, beta, options, &args);
    return run_batch<T>(checked, args, m, n, k, lda, ldb, ldc, true, batch_count, operands, whole,
                        single);
  });
}

}  // namespace

namespace {

// What a strided batch of T takes from the engine: real matrices the batched engine, complex ones
// its embedding (engine/batched_complex.hpp), whose real batch is what the cache rule weighs.
template <class T>
struct batch_kind;
template <>
struct batch_kind<double> {
  static const char* refusal(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                             scaling_mode mode, int8_gemm_backend gemm) {
    return batch_engine_refusal(m, n, k, moduli, mode, gemm);
  }
  static batch_dims engine_dims(const batch_dims& d) { return d; }
  static bool bytes(const batch_dims& d, int64_t q, size_t* out) {
    return batched_emulation_workspace_bytes(d, q, out);
  }
  static int64_t chunk(const batch_dims& d, int64_t count, size_t budget) {
    return batch_chunk(d, count, budget);
  }
  static bool zero(const double* alpha) { return *alpha == 0.0; }
};
template <>
struct batch_kind<cuDoubleComplex> {
  static const char* refusal(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                             scaling_mode mode, int8_gemm_backend gemm) {
    return complex_batch_engine_refusal(m, n, k, moduli, mode, gemm);
  }
  static batch_dims engine_dims(const batch_dims& d) { return embedded_dims(d); }
  static bool bytes(const batch_dims& d, int64_t q, size_t* out) {
    return batched_complex_workspace_bytes(d, q, out);
  }
  static int64_t chunk(const batch_dims& d, int64_t count, size_t budget) {
    return complex_batch_chunk(d, count, budget);
  }
  static bool zero(const cuDoubleComplex* alpha) {
    return cuCreal(*alpha) == 0.0 && cuCimag(*alpha) == 0.0;
  }
};

// The engine's scope and the cache rule (products_fit_cache, which depends on no broadcast) for
// one matrix's shape.
template <class T>
const char* engine_shape_refusal(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                                 scaling_mode mode, int8_gemm_backend gemm) {
  if (const char* why = batch_kind<T>::refusal(m, n, k, moduli, mode, gemm)) return why;
  const batch_dims dims{m, n, k, moduli.count(), false, false, gemm, mode};
  if (!products_fit_cache(batch_kind<T>::engine_dims(dims), l2_cache_bytes()))
    return "one matrix's products exceed half the L2 cache (one call per matrix is faster)";
  return nullptr;
}

// Matrices [first, first + q) of the batch through the engine on the caller's context.
run_outcome run_chunk(cublasHandle_t handle, const device_gemm& call, int64_t first, int64_t q,
                      const double* A, int64_t stride_a, const double* B, int64_t stride_b,
                      double* C, int64_t stride_c, size_t bytes) {
  device_gemm_batch batch{call, q, stride_a, stride_b, stride_c};
  batch.call.p.a.ptr = matrix_at(A, first, stride_a);
  batch.call.p.b.ptr = matrix_at(B, first, stride_b);
  batch.call.p.c = matrix_at(C, first, stride_c);
  return run_batch_for_handle(handle, batch, bytes);
}
run_outcome run_chunk(cublasHandle_t handle, const complex_gemm& call, int64_t first, int64_t q,
                      const cuDoubleComplex* A, int64_t stride_a, const cuDoubleComplex* B,
                      int64_t stride_b, cuDoubleComplex* C, int64_t stride_c, size_t bytes) {
  complex_gemm_batch batch{call, q, stride_a, stride_b, stride_c};
  batch.call.p.a.ptr = reinterpret_cast<const double*>(matrix_at(A, first, stride_a));
  batch.call.p.b.ptr = reinterpret_cast<const double*>(matrix_at(B, first, stride_b));
  batch.call.p.c = reinterpret_cast<double*>(matrix_at(C, first, stride_c));
  return run_complex_batch_for_handle(handle, batch, bytes);
}

// The call of matrix 0 as the engine takes it (device or host scalars as the handle says).
device_gemm engine_call(const checked_args& args, int64_t m, int64_t n, int64_t k,
                        const double* alpha, const double* A, int64_t lda, const double* B,
                        int64_t ldb, const double* beta, double* C, int64_t ldc, bool dev) {
  const gemm_problem p{m, n, k, operand_a(args.oa, A, lda), operand_b(args.ob, B, ldb), C, ldc};
  return device_gemm{p,
                     scalar_arg{dev ? alpha : nullptr, dev ? 0.0 : *alpha},
                     scalar_arg{dev ? beta : nullptr, dev ? 0.0 : *beta},
                     args.moduli,
                     scaling_mode::fast,
                     nullptr,
                     nullptr,
                     nullptr};
}
complex_gemm engine_call(const checked_args& args, int64_t m, int64_t n, int64_t k,
                         const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
                         const cuDoubleComplex* B, int64_t ldb, const cuDoubleComplex* beta,
                         cuDoubleComplex* C, int64_t ldc, bool dev) {
  const auto scalar = [dev](const cuDoubleComplex* v) {
    return complex_scalar_arg{
        dev ? reinterpret_cast<const double*>(v) : nullptr,
        dev ? complex_value{0.0, 0.0} : complex_value{cuCreal(*v), cuCimag(*v)}};
  };
  complex_gemm call{};
  call.p = complex_problem_of(args, m, n, k, A, lda, B, ldb, C, ldc);
  call.alpha = scalar(alpha);
  call.beta = scalar(beta);
  call.real.moduli = args.moduli;
  return call;
}
device_gemm& real_of(device_gemm& call) { return call; }
device_gemm& real_of(complex_gemm& call) { return call.real; }

template <class T>
strided_batch_result strided_batch_device(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                          const T* alpha, const T* A, int64_t lda, int64_t stride_a,
                                          const T* B, int64_t ldb, int64_t stride_b, const T* beta,
                                          T* C, int64_t ldc, int64_t stride_c, int64_t count,
                                          const ozdgemm_options_t& options) noexcept {
  strided_batch_result out;
  try {
    checked_args args;
    if (check_device_args(handle, transa, transb, m, n, k, lda, ldb, ldc, alpha, beta, options,
                          &args) != OZDGEMM_STATUS_SUCCESS ||
        count < 1) {
      out.declined = "invalid arguments";
      return out;
    }
    const scaling_mode mode = to_mode(options.scaling);
    const int8_gemm_backend gemm = resolve_int8_gemm(int8_gemm_backend::setting);
    out.declined = engine_shape_refusal<T>(m, n, k, args.moduli, mode, gemm);
    if (out.declined != nullptr) return out;
    if (!engine_strides(n, ldc, stride_a, stride_b, stride_c, count)) {
      out.declined = "negative strides or overlapping C matrices";
      return out;
    }
    // Every matrix lies between the first and the last (strides >= 0).
    const void *last_a = nullptr, *last_b = nullptr, *last_c = nullptr;
    if (!addressable(args, m, n, k, A, lda, B, ldb, C, ldc, true, sizeof(T)) ||
        !strided_element(A, count - 1, stride_a, sizeof(T), &last_a) ||
        !strided_element(B, count - 1, stride_b, sizeof(T), &last_b) ||
        !strided_element(C, count - 1, stride_c, sizeof(T), &last_c) ||
        !addressable(args, m, n, k, last_a, lda, last_b, ldb, last_c, ldc, true, sizeof(T))) {
      out.declined = "matrices outside the address space";
      return out;
    }
    cudaStream_t stream = nullptr;
    const bool dev = caller_stream(handle, &stream);
    if (!dev && batch_kind<T>::zero(alpha)) {  // C = beta C without reading A or B
      out.declined = "alpha = 0";
      return out;
    }
    auto call = engine_call(args, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, dev);
    real_of(call).mode = mode;
    real_of(call).stream = stream;
    real_of(call).int8_gemm = gemm;
    const batch_dims dims{
        m,    n,   k, args.moduli.count(), count > 1 && stride_a == 0, count > 1 && stride_b == 0,
        gemm, mode};
    out.per_chunk = batch_kind<T>::chunk(dims, count, batch_budget(stream));
    size_t bytes = 0;
    if (out.per_chunk == 0 || !batch_kind<T>::bytes(dims, out.per_chunk, &bytes)) {
      out.declined = "one matrix's workspace exceeds the batch budget";
      return out;
    }
    while (out.done < count) {
      const int64_t q = std::min(out.per_chunk, count - out.done);
      // The chunk's workspace is at most the first's: the context grows once.
      const run_outcome r =
          run_chunk(handle, call, out.done, q, A, stride_a, B, stride_b, C, stride_c, bytes);
      if (r.refused != nullptr) {
        out.declined = r.refused;
        return out;
      }
      out.s = r.s;
      out.done += q;
    }
    out.declined = nullptr;
  } catch (const std::exception& e) {
    out.declined = "batched engine failed";
    try {
      logger().warn(
          "strided batch: the batched engine failed after {} matrices ({}); the rest "
          "run matrix by matrix",
          out.done, e.what());
    } catch (...) {
    }
  } catch (...) {
    out.declined = "batched engine failed";
  }
  return out;
}

// The C API's whole-batch step (run_batch's `whole`): at a fixed count the batched engine, which
// returns how many matrices, from the first, it served; else none.
template <class T>
auto engine_step(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                 int64_t m, int64_t n, int64_t k, const T* alpha, const T* A, int64_t lda,
                 int64_t stride_a, const T* B, int64_t ldb, int64_t stride_b, const T* beta, T* C,
                 int64_t ldc, int64_t stride_c, int64_t count, const ozdgemm_options_t& options) {
  return [=, &options] {
    if (options.num_moduli <= 0) return int64_t{0};
    return strided_batch_device(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb,
                                stride_b, beta, C, ldc, stride_c, count, options)
        .done;
  };
}

template <class T>
const char* shape_refusal(int64_t m, int64_t n, int64_t k, int64_t count,
                          const ozdgemm_options_t& options) noexcept {
  if (count < 2) return "one matrix";
  if (options.num_moduli <= 0) return "the moduli count is chosen per call";
  return engine_shape_refusal<T>(m, n, k, moduli_setting::fixed(options.num_moduli),
                                 to_mode(options.scaling),
                                 resolve_int8_gemm(int8_gemm_backend::setting));
}

}  // namespace

bool engine_strides(int64_t n, int64_t ldc, int64_t stride_a, int64_t stride_b, int64_t stride_c,
                    int64_t count) noexcept {
  if (stride_a < 0 || stride_b < 0 || stride_c < 0) return false;
  return count <= 1 || (stride_c != 0 && n > 0 && stride_c / n >= ldc);
}

const char* batch_engine_shape_refusal(int64_t m, int64_t n, int64_t k, int64_t count,
                                       const ozdgemm_options_t& options, bool complex) noexcept {
  return complex ? shape_refusal<cuDoubleComplex>(m, n, k, count, options)
                 : shape_refusal<double>(m, n, k, count, options);
}

strided_batch_result dgemm_strided_batch_device(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const double* alpha, const double* A, int64_t lda, int64_t stride_a, const double* B,
    int64_t ldb, int64_t stride_b, const double* beta, double* C, int64_t ldc, int64_t stride_c,
    int64_t count, const ozdgemm_options_t& options) noexcept {
  return strided_batch_device(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb,
                              stride_b, beta, C, ldc, stride_c, count, options);
}

strided_batch_result zgemm_strided_batch_device(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
    int64_t stride_a, const cuDoubleComplex* B, int64_t ldb, int64_t stride_b,
    const cuDoubleComplex* beta, cuDoubleComplex* C, int64_t ldc, int64_t stride_c, int64_t count,
    const ozdgemm_options_t& options) noexcept {
  return strided_batch_device(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb,
                              stride_b, beta, C, ldc, stride_c, count, options);
}

}  // namespace ozdgemm::detail

using ozdgemm::detail::array_operands;
using ozdgemm::detail::strided_operands;

extern "C" {

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_strided_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A,
    int64_t lda, int64_t stride_a, const double* B, int64_t ldb, int64_t stride_b, double beta,
    double* C, int64_t ldc, int64_t stride_c, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::dgemm_batch(
      "ozdgemm_dgemm_strided_batched_reference", transa, transb, m, n, k, alpha, lda, ldb, beta,
      ldc, batch_count, options, strided_operands<double>{A, stride_a, B, stride_b, C, stride_c});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
    const double* const A[], int64_t lda, const double* const B[], int64_t ldb, double beta,
    double* const C[], int64_t ldc, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::dgemm_batch("ozdgemm_dgemm_batched_reference", transa, transb, m, n, k,
                                      alpha, lda, ldb, beta, ldc, batch_count, options,
                                      array_operands<double>{A, B, C});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_strided_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, cuDoubleComplex alpha,
    const cuDoubleComplex* A, int64_t lda, int64_t stride_a, const cuDoubleComplex* B, int64_t ldb,
    int64_t stride_b, cuDoubleComplex beta, cuDoubleComplex* C, int64_t ldc, int64_t stride_c,
    int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::zgemm_batch(
      "ozdgemm_zgemm_strided_batched_reference", transa, transb, m, n, k, alpha, lda, ldb, beta,
      ldc, batch_count, options,
      strided_operands<cuDoubleComplex>{A, stride_a, B, stride_b, C, stride_c});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, cuDoubleComplex alpha,
    const cuDoubleComplex* const A[], int64_t lda, const cuDoubleComplex* const B[], int64_t ldb,
    cuDoubleComplex beta, cuDoubleComplex* const C[], int64_t ldc, int64_t batch_count,
    ozdgemm_options_t options) {
  return ozdgemm::detail::zgemm_batch("ozdgemm_zgemm_batched_reference", transa, transb, m, n, k,
                                      alpha, lda, ldb, beta, ldc, batch_count, options,
                                      array_operands<cuDoubleComplex>{A, B, C});
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_strided_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const double* alpha, const double* A, int64_t lda, int64_t stride_a, const double* B,
    int64_t ldb, int64_t stride_b, const double* beta, double* C, int64_t ldc, int64_t stride_c,
    int64_t batch_count, ozdgemm_options_t options) {
  // A fixed count runs the batched engine over the checked batch where it takes it (the
  // matrices it returns as done, from the first); the rest, and every other batch, matrix by
  // matrix.
  return ozdgemm::detail::device_batch<double>(
      "ozdgemm_dgemm_strided_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options, strided_operands<double>{A, stride_a, B, stride_b, C, stride_c},
      ozdgemm::detail::engine_step(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb,
                                   stride_b, beta, C, ldc, stride_c, batch_count, options),
      [&](const double* a, const double* b, double* c) {
        return ozdgemm_dgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const double* alpha, const double* const A[], int64_t lda, const double* const B[],
    int64_t ldb, const double* beta, double* const C[], int64_t ldc, int64_t batch_count,
    ozdgemm_options_t options) {
  return ozdgemm::detail::device_batch<double>(
      "ozdgemm_dgemm_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options, array_operands<double>{A, B, C}, ozdgemm::detail::matrix_by_matrix,
      [&](const double* a, const double* b, double* c) {
        return ozdgemm_dgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_strided_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
    int64_t stride_a, const cuDoubleComplex* B, int64_t ldb, int64_t stride_b,
    const cuDoubleComplex* beta, cuDoubleComplex* C, int64_t ldc, int64_t stride_c,
    int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::device_batch<cuDoubleComplex>(
      "ozdgemm_zgemm_strided_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options,
      strided_operands<cuDoubleComplex>{A, stride_a, B, stride_b, C, stride_c},
      ozdgemm::detail::engine_step(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb,
                                   stride_b, beta, C, ldc, stride_c, batch_count, options),
      [&](const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* c) {
        return ozdgemm_zgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* const A[], int64_t lda,
    const cuDoubleComplex* const B[], int64_t ldb, const cuDoubleComplex* beta,
    cuDoubleComplex* const C[], int64_t ldc, int64_t batch_count, ozdgemm_options_t options) {
  return ozdgemm::detail::device_batch<cuDoubleComplex>(
      "ozdgemm_zgemm_batched", handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
      batch_count, options, array_operands<cuDoubleComplex>{A, B, C},
      ozdgemm::detail::matrix_by_matrix,
      [&](const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* c) {
        return ozdgemm_zgemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             options);
      });
}

}  // extern "C"
