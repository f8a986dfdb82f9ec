#include "interpose/level3_device.hpp"

#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/cublas_api.hpp"
#include "common/logging.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/gpu_model.hpp"
#include "dispatch/level3_efficiency.hpp"
#include "dispatch/settings.hpp"
#include "engine/complex_gemm.hpp"
#include "interpose/cublas_next.hpp"
#include "interpose/device_gemm.hpp"
#include "interpose/level3_model.hpp"
#include "interpose/real_symbol.hpp"
#include "level3/blocked.hpp"
#include "small_trsm.cuh"

namespace ozdgemm::detail {
namespace {

using zd = std::complex<double>;

// How fast the native routines run on the current GPU, the one the call's blocks run on.
native_efficiency efficiency_here() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return native_efficiency{};
  }
  return level3_native_efficiency(model_of_device(device, calibrate_mode::off).id.cc_major);
}

// cuBLAS's element type of T.
template <class T>
using cu_t = std::conditional_t<std::is_same_v<T, double>, double, cuDoubleComplex>;

template <class T>
const cu_t<T>* cu(const T* p) {
  return reinterpret_cast<const cu_t<T>*>(p);
}
template <class T>
cu_t<T>* cu(T* p) {
  return reinterpret_cast<cu_t<T>*>(p);
}
// A scalar as cuBLAS's type: copied, not dereferenced through a cast (std::complex<double> is
// 8-byte aligned, cuDoubleComplex 16).
template <class T>
cu_t<T> cu_value(const T& v) {
  cu_t<T> out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

cublasOperation_t op_of(trans_kind t) {
  return t == trans_kind::n ? CUBLAS_OP_N : t == trans_kind::t ? CUBLAS_OP_T : CUBLAS_OP_C;
}
cublasFillMode_t fill_of(uplo_kind u) {
  return u == uplo_kind::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
}
cublasSideMode_t side_of(side_kind s) {
  return s == side_kind::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
}
cublasDiagType_t diag_of(diag_kind d) {
  return d == diag_kind::unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
}

// libcublas's own 64-bit routine that runs a call's diagonal blocks (never this library's hook
// of the same name).
template <class T>
const char* native_name(const rank_k_call<T>& x) {
  constexpr bool real = std::is_same_v<T, double>;
  switch (x.kind) {
    case rank_k_kind::syrk:
      return real ? "cublasDsyrk_v2_64" : "cublasZsyrk_v2_64";
    case rank_k_kind::herk:
      return "cublasZherk_v2_64";
    case rank_k_kind::syr2k:
      return real ? "cublasDsyr2k_v2_64" : "cublasZsyr2k_v2_64";
    case rank_k_kind::her2k:
      return "cublasZher2k_v2_64";
    case rank_k_kind::syrkx:
      return real ? "cublasDsyrkx_64" : "cublasZsyrkx_64";
    case rank_k_kind::herkx:
      return "cublasZherkx_64";
  }
  return "";
}
template <class T>
const char* native_name(const symm_call<T>& x) {
  if (x.hermitian) return "cublasZhemm_v2_64";
  return std::is_same_v<T, double> ? "cublasDsymm_v2_64" : "cublasZsymm_v2_64";
}
template <class T>
const char* native_name(const triangular_call<T>& x) {
  constexpr bool real = std::is_same_v<T, double>;
  if (x.solve) return real ? "cublasDtrsm_v2_64" : "cublasZtrsm_v2_64";
  return real ? "cublasDtrmm_v2_64" : "cublasZtrmm_v2_64";
}

// libcublas's routine `name` (a literal of native_name's or a GEMM's), looked up once per name:
// a lookup costs microseconds, which a small call would feel. A missing routine stays missing.
void* next_routine(const char* name) {
  static std::mutex mutex;
  static std::vector<std::pair<const char*, void*>> found;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [n, p] : found)
    if (std::strcmp(n, name) == 0) return p;
  found.emplace_back(name, resolve_next(name, kCublasLibrary));
  return found.back().second;
}

// The routines' signatures, scalars and matrices untyped (pointers of every type pass alike).
using gemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                   int64_t, int64_t, const void*, const void*, int64_t, const void*,
                                   int64_t, const void*, void*, int64_t);
using rank_k_fn = cublasStatus_t (*)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int64_t,
                                     int64_t, const void*, const void*, int64_t, const void*, void*,
                                     int64_t);
using rank_2k_fn = cublasStatus_t (*)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int64_t,
                                      int64_t, const void*, const void*, int64_t, const void*,
                                      int64_t, const void*, void*, int64_t);
using symm_fn = cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, int64_t,
                                   int64_t, const void*, const void*, int64_t, const void*, int64_t,
                                   const void*, void*, int64_t);
using trmm_fn = cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                   cublasOperation_t, cublasDiagType_t, int64_t, int64_t,
                                   const void*, const void*, int64_t, const void*, int64_t, void*,
                                   int64_t);
using trsm_fn = cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                   cublasOperation_t, cublasDiagType_t, int64_t, int64_t,
                                   const void*, const void*, int64_t, void*, int64_t);

// The call on libcublas's routine f, scalars from host memory (the handle is in host pointer
// mode). HERK's alpha and beta, HER2K's and HERKX's beta: double.
template <class T>
cublasStatus_t run_native(void* f, cublasHandle_t h, const rank_k_call<T>& x) {
  const double alpha_re = std::real(x.alpha), beta_re = std::real(x.beta);
  const void* alpha = x.kind == rank_k_kind::herk ? static_cast<const void*>(&alpha_re) : &x.alpha;
  const void* beta = x.hermitian() ? static_cast<const void*>(&beta_re) : &x.beta;
  if (x.has_b())
    return reinterpret_cast<rank_2k_fn>(f)(h, fill_of(x.uplo), op_of(x.trans), x.n, x.k, alpha, x.a,
                                           x.lda, x.b, x.ldb, beta, x.c, x.ldc);
  return reinterpret_cast<rank_k_fn>(f)(h, fill_of(x.uplo), op_of(x.trans), x.n, x.k, alpha, x.a,
                                        x.lda, beta, x.c, x.ldc);
}
template <class T>
cublasStatus_t run_native(void* f, cublasHandle_t h, const symm_call<T>& x) {
  return reinterpret_cast<symm_fn>(f)(h, side_of(x.side), fill_of(x.uplo), x.m, x.n, &x.alpha, x.a,
                                      x.lda, x.b, x.ldb, &x.beta, x.c, x.ldc);
}
template <class T>
cublasStatus_t run_native(void* f, cublasHandle_t h, const triangular_call<T>& x) {
  if (x.solve)
    return reinterpret_cast<trsm_fn>(f)(h, side_of(x.side), fill_of(x.uplo), op_of(x.trans),
                                        diag_of(x.diag), x.m, x.n, &x.alpha, x.a, x.lda, x.b,
                                        x.ldb);
  // cuBLAS's TRMM writes C; B in place of C is its in-place form.
  return reinterpret_cast<trmm_fn>(f)(h, side_of(x.side), fill_of(x.uplo), op_of(x.trans),
                                      diag_of(x.diag), x.m, x.n, &x.alpha, x.a, x.lda, x.b, x.ldb,
                                      x.b, x.ldb);
}

// TRSM on a diagonal block, solved by the library in FP64: halved recursively as the blocked
// form halves (level3/blocked.hpp) with libcublas's GEMM for the updates, down to blocks of
// small_trsm_order, which the substitution kernel solves (kernels/small_trsm.cuh). cuBLAS's
// TRSM on a block of order 64 to 2048 with 16384 right-hand sides takes time proportional to
// the order (H100: 2.0 ms at 1024, 4.7 ms at 2048: bench/results/level3/README.md), so a
// diagonal block solved by cuBLAS cost as much as the GEMM updates around it; its own updates
// here run at GEMM speed. Every operation is FP64 (native GEMM, substitution with the
// diagonal's reciprocals): the error bound of a blocked TRSM (docs/level3.md); the bits are
// not cuBLAS's. A leaf the kernel cannot take (a failed launch) runs cuBLAS's TRSM.
template <class T>
class diagonal_solver final : public level3_executor<T> {
 public:
  diagonal_solver(cublasHandle_t handle, void* gemm, void* trsm)
      : handle_(handle), gemm_(gemm), trsm_(trsm) {}

  void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    if (status_ == CUBLAS_STATUS_SUCCESS)
      status_ = reinterpret_cast<gemm_fn>(gemm_)(handle_, op_of(ta), op_of(tb), m, n, k, &alpha, a,
                                                 lda, b, ldb, &beta, c, ldc);
  }
  bool splits(int64_t order, int64_t, int64_t, int64_t) override {
    return order > small_trsm_order<cu_t<T>>();
  }
  // blocked() of a triangular call reaches only native(triangular_call); the other two are
  // the interface's.
  void native(const rank_k_call<T>&) override { status_ = CUBLAS_STATUS_INTERNAL_ERROR; }
  void native(const symm_call<T>&) override { status_ = CUBLAS_STATUS_INTERNAL_ERROR; }
  void native(const triangular_call<T>& x) override {
    if (status_ != CUBLAS_STATUS_SUCCESS) return;
    if ((x.side == side_kind::left ? x.m : x.n) > small_trsm_order<cu_t<T>>()) {
      status_ = run_native(trsm_, handle_, x);  // alpha == 0 (blocked() does not split it)
      return;
    }
    cudaStream_t stream = nullptr;
    status_ = cublas_get_stream(handle_, &stream);
    if (status_ != CUBLAS_STATUS_SUCCESS) return;
    const cu_t<T> alpha = cu_value(x.alpha);
    const small_trsm_args<cu_t<T>> args{x.side == side_kind::left,
                                        x.uplo == uplo_kind::lower,
                                        x.trans != trans_kind::n,
                                        x.trans == trans_kind::c,
                                        x.diag == diag_kind::unit,
                                        x.m,
                                        x.n,
                                        alpha,
                                        cu(x.a),
                                        x.lda,
                                        cu(x.b),
                                        x.ldb};
    const cudaError_t e = launch_small_trsm(args, stream);
    if (e == cudaSuccess) return;
    try {  // after the split nothing may throw (serve)
      logger().warn(
          "TRSM diagonal block: the substitution kernel did not launch ({}); cuBLAS's "
          "TRSM solves it",
          cudaGetErrorString(e));
    } catch (...) {
    }
    status_ = run_native(trsm_, handle_, x);
  }

  cublasStatus_t status() const { return status_; }

 private:
  cublasHandle_t handle_;
  void* gemm_;
  void* trsm_;
  cublasStatus_t status_ = CUBLAS_STATUS_SUCCESS;
};

// A GEMM block of shape m x n x k as a request whose route is asked for (nothing runs on it):
// the route depends on the shape, the handle and the settings only.
template <class T>
device_request<cu_t<T>> block_request(const char* entry, cublasHandle_t handle, int64_t m,
                                      int64_t n, int64_t k) {
  static const cu_t<T> one{};
  return {entry,   handle, CUBLAS_OP_N, CUBLAS_OP_N, m,    n,       k, &one,
          nullptr, m,      nullptr,     k,           &one, nullptr, m};
}

// GEMMs through serve_device (emulated where the route says so, libcublas's GEMM otherwise),
// diagonal blocks on libcublas's routine `native` (TRSM's: diagonal_solver), all on the caller's
// handle. Until a block splits nothing runs; then `prepare` (if any) runs once first. After the
// first failed status nothing more is enqueued.
template <class T>
class device_executor final : public level3_executor<T> {
 public:
  device_executor(const char* entry, cublasHandle_t handle, int64_t block, void* native, void* gemm,
                  std::function<bool()> prepare)
      : entry_(entry),
        handle_(handle),
        block_(block),
        native_(native),
        gemm_(gemm),
        prepare_(std::move(prepare)) {}

  void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
            int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    if (status_ != CUBLAS_STATUS_SUCCESS) return;
    const cu_t<T> al = cu_value(alpha), be = cu_value(beta);
    const device_request<cu_t<T>> r{entry_, handle_, op_of(ta), op_of(tb), m,   n,     k,  &al,
                                    cu(a),  lda,     cu(b),     ldb,       &be, cu(c), ldc};
    auto native = [&] {
      return reinterpret_cast<gemm_fn>(gemm_)(handle_, r.ta, r.tb, m, n, k, &al, a, lda, b, ldb,
                                              &be, c, ldc);
    };
    status_ = serve_device(r, native);
  }

  bool splits(int64_t order, int64_t m, int64_t n, int64_t k) override {
    const char* why = nullptr;
    if (order <= block_) {
      why = "below OZDGEMM_LEVEL3_BLOCK";
    } else {
      why = device_gemm_declines(block_request<T>(entry_, handle_, m, n, k));
    }
    if (why == nullptr && !split_ && prepare_ && !prepare_()) why = "copying B into C failed";
    if (why == nullptr) split_ = true;
    if (!split_) why_ = why;
    return why == nullptr;
  }

  void native(const rank_k_call<T>& x) override { run(x); }
  void native(const symm_call<T>& x) override { run(x); }
  void native(const triangular_call<T>& x) override { run(x); }

  bool split() const { return split_; }
  const char* why() const { return why_; }
  cublasStatus_t status() const { return status_; }

 private:
  template <class Call>
  void run(const Call& x) {
    if (split_ && status_ == CUBLAS_STATUS_SUCCESS) status_ = run_native(native_, handle_, x);
  }
  // A TRSM's diagonal blocks: the library's own solve (diagonal_solver).
  void run(const triangular_call<T>& x) {
    if (!split_ || status_ != CUBLAS_STATUS_SUCCESS) return;
    if (!x.solve) {
      status_ = run_native(native_, handle_, x);
      return;
    }
    diagonal_solver<T> solver(handle_, gemm_, native_);
    blocked(x, solver);
    status_ = solver.status();
  }

  const char* entry_;
  cublasHandle_t handle_;
  int64_t block_;
  void* native_;
  void* gemm_;
  std::function<bool()> prepare_;
  bool split_ = false;
  const char* why_ = "small or trivial call";
  cublasStatus_t status_ = CUBLAS_STATUS_SUCCESS;
};

// SYRK, HERK and SYRKX as one emulated GEMM of C's triangle (docs/level3.md, "One
// emulation"): op(A) op(Y)^T (^H) with Y = A or B, as blocked() forms its off-diagonal blocks.
template <class T>
device_request<cu_t<T>> triangle_request(const rank_k_call<T>& x, const char* entry,
                                         cublasHandle_t handle, const cu_t<T>* alpha,
                                         const cu_t<T>* beta) {
  const trans_kind t = x.hermitian() ? trans_kind::c : trans_kind::t;
  const bool by_rows = x.trans == trans_kind::n;
  const T* y = x.has_b() ? x.b : x.a;
  const int64_t ldy = x.has_b() ? x.ldb : x.lda;
  device_request<cu_t<T>> r{entry,
                            handle,
                            op_of(by_rows ? trans_kind::n : x.trans),
                            op_of(by_rows ? t : trans_kind::n),
                            x.n,
                            x.n,
                            x.k,
                            alpha,
                            cu(x.a),
                            x.lda,
                            cu(y),
                            ldy,
                            beta,
                            cu(x.c),
                            x.ldc};
  r.triangle.part = x.uplo == uplo_kind::lower ? c_part::lower : c_part::upper;
  r.triangle.real_diagonal = x.hermitian();
  return r;
}

// Whether the call may run as one emulation of its triangle (plan_level3 prices it): SYRK, HERK
// or SYRKX (not SYR2K or HER2K, two products; nor HERKX, whose diagonal cuBLAS may treat as
// HERK's or not) with something to multiply, a complex one in the Karatsuba form.
template <class T>
bool may_run_as_triangle(const rank_k_call<T>& x, const config& cfg) {
  if (x.two() || x.kind == rank_k_kind::herkx || x.n < 2 || x.k == 0 || x.alpha == T(0))
    return false;
  return std::is_same_v<T, double> ||
         uses_karatsuba(complex_form::setting, cfg.scaling, x.n, x.n, x.k);
}

// The call as one emulation of its triangle, its native routine where the engine declines.
template <class T>
cublasStatus_t serve_triangle(const rank_k_call<T>& x, cublasHandle_t handle, const char* entry,
                              void* native) {
  const cu_t<T> alpha = cu_value(x.alpha), beta = cu_value(x.beta);
  const device_request<cu_t<T>> r = triangle_request(x, entry, handle, &alpha, &beta);
  auto run = [&] { return run_native(native, handle, x); };
  return serve_device(r, run);
}

template <class T, class Call>
bool serve(const Call& x, cublasHandle_t handle, const char* entry, std::function<bool()> prepare,
           cublasStatus_t* status) noexcept {
  try {
    // Every routine a block may run must exist before anything is enqueued.
    void* const gemm =
        next_routine(std::is_same_v<T, double> ? "cublasDgemm_v2_64" : "cublasZgemm_v2_64");
    void* const native = next_routine(native_name(x));
    call_record rec{entry, 0, 0, 0, outcome::native, nullptr, 0, 0.0, 0.0, 0.0};
    gemm_shape(x, &rec.m, &rec.n, &rec.k);
    if (gemm == nullptr || native == nullptr) {
      rec.reason = "libcublas lacks a routine";
      log_call(rec);
      return false;
    }
    const config& cfg = settings();
    const native_efficiency e =
        cfg.mode == run_mode::native ? native_efficiency{} : efficiency_here();
    constexpr bool rank_k = std::is_same_v<Call, rank_k_call<T>>;
    bool triangle_ok = false;
    if constexpr (rank_k) triangle_ok = may_run_as_triangle(x, cfg);
    const level3_plan plan = plan_level3(
        x, cfg,
        [&](int64_t m, int64_t n, int64_t k) {
          return device_gemm_route(block_request<T>(entry, handle, m, n, k));
        },
        &rec, e, triangle_ok);
    if constexpr (rank_k) {
      if (plan.declined == nullptr && plan.triangle) {
        *status = serve_triangle(x, handle, entry, native);
        return true;
      }
    }
    rec.reason = plan.declined;
    if (rec.reason == nullptr) {
      device_executor<T> ex(entry, handle, plan.block, native, gemm, std::move(prepare));
      blocked(x, ex);
      if (ex.split()) {
        *status = ex.status();
        return true;
      }
      rec.reason = ex.why();
    }
    log_call(rec);
    return false;
  } catch (...) {
    // Only before any block ran (nothing after the split throws): nothing enqueued.
    try {
      logger().error("{}: internal error; running the native routine", entry);
    } catch (...) {
    }
    return false;
  }
}

}  // namespace

template <class Call>
bool serve_on_device(const Call& x, cublasHandle_t handle, const char* entry,
                     cublasStatus_t* status) noexcept {
  using T = std::remove_const_t<std::remove_pointer_t<decltype(x.a)>>;
  return serve<T>(x, handle, entry, {}, status);
}

// cuBLAS's out-of-place TRMM: C = alpha op(A) B as B copied into C (once the call splits, on the
// handle's stream), then the in-place blocked TRMM on C.
template <class T>
bool serve_trmm_on_device(const triangular_call<T>& x, const T* b, int64_t ldb,
                          cublasHandle_t handle, const char* entry,
                          cublasStatus_t* status) noexcept {
  auto copy = [&]() -> bool {
    cudaStream_t stream = nullptr;
    if (cublas_get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS) return false;
    if (cudaMemcpy2DAsync(x.b, x.ldb * sizeof(T), b, ldb * sizeof(T), x.m * sizeof(T), x.n,
                          cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return true;
  };
  return serve<T>(x, handle, entry, b == x.b ? std::function<bool()>() : copy, status);
}

#define OZDGEMM_LEVEL3_DEVICE(CALL)                                                      \
  template bool serve_on_device(const CALL& x, cublasHandle_t handle, const char* entry, \
                                cublasStatus_t* status) noexcept;
OZDGEMM_LEVEL3_DEVICE(rank_k_call<double>)
OZDGEMM_LEVEL3_DEVICE(rank_k_call<zd>)
OZDGEMM_LEVEL3_DEVICE(symm_call<double>)
OZDGEMM_LEVEL3_DEVICE(symm_call<zd>)
OZDGEMM_LEVEL3_DEVICE(triangular_call<double>)
OZDGEMM_LEVEL3_DEVICE(triangular_call<zd>)
#undef OZDGEMM_LEVEL3_DEVICE
template bool serve_trmm_on_device(const triangular_call<double>&, const double*, int64_t,
                                   cublasHandle_t, const char*, cublasStatus_t*) noexcept;
template bool serve_trmm_on_device(const triangular_call<zd>&, const zd*, int64_t, cublasHandle_t,
                                   const char*, cublasStatus_t*) noexcept;

}  // namespace ozdgemm::detail
