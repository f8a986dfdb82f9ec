// cublasLtMatmul for programs that take cuBLASLt's entry points with dlsym (XLA, and so JAX):
// the audit module (src/audit/audit.c) answers their lookups of `cublasLtMatmul` with
// ozdgemm_audit_cublasLtMatmul. It is deliberately not exported under cuBLASLt's name: libcublas
// calls cuBLASLt's cublasLtMatmul through its PLT, and a preloaded definition of that name would
// take libcublas's internal calls too.
//
// A plain FP64 call (lt_matmul_call.hpp) is served as a strided batch of cuBLAS GEMMs is
// (batched_cublas_hooks.cpp): routed once on its first matrix, then matrix by matrix through the
// device GEMM service, on a cuBLAS handle of the library's own (one per device) bound to the
// call's stream. D is
// computed in place: where C is another array and beta is not zero, C is first copied into D on
// the stream. Anything else is forwarded to cuBLASLt unchanged, and so is every call with
// OZDGEMM_CUBLASLT=off (docs/python.md).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <type_traits>

#include "api/dgemm_internal.hpp"
#include "common/cublas_api.hpp"
#include "common/stream_capture.hpp"
#include "dispatch/call_log.hpp"
#include "dispatch/settings.hpp"
#include "interpose/device_gemm.hpp"
#include "interpose/lt_matmul_call.hpp"
#include "interpose/real_symbol.hpp"

#define OZDGEMM_API __attribute__((visibility("default")))

namespace ozdgemm::detail {
namespace {

constexpr const char* kEntry = "cublasLtMatmul";
constexpr const char* kLtLibrary = "libcublasLt.so.13";

const lt_getters* getters() noexcept {
  static const lt_getters g{reinterpret_cast<decltype(&cublasLtMatmulDescGetAttribute)>(
                                resolve_next("cublasLtMatmulDescGetAttribute", kLtLibrary)),
                            reinterpret_cast<decltype(&cublasLtMatrixLayoutGetAttribute)>(
                                resolve_next("cublasLtMatrixLayoutGetAttribute", kLtLibrary))};
  return g.desc != nullptr && g.layout != nullptr ? &g : nullptr;
}

// The library's cuBLAS handle for cuBLASLt calls on the current device, bound to `stream`,
// scalars in host memory, with its lock held while the caller enqueues the call. One per device
// for the whole process, not one per thread: a workspace belongs to a handle
// (engine/handle_context.hpp), and XLA calls cuBLASLt from more than one thread (its autotuner and
// its executor), where per-thread handles would each grow a workspace of their own; at 16384^3
// a second one does not fit beside JAX's preallocated memory pool. The handle's context orders a
// call on a new stream after the previous call's work, so the streams may differ from call to
// call. Never destroyed (CUDA must not be called at thread or process exit). `handle` is null
// when none can be had now: making one allocates, which a stream capture forbids.
struct proxy {
  std::unique_lock<std::mutex> lock;
  cublasHandle_t handle = nullptr;
};

proxy proxy_handle(cudaStream_t stream) {
  struct per_device {
    std::mutex mutex;
    cublasHandle_t handle = nullptr;
  };
  static std::mutex map_mutex;
  static std::map<int, per_device> devices;  // nodes never move or go away
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  per_device* slot = nullptr;
  {
    std::lock_guard<std::mutex> guard(map_mutex);
    slot = &devices[device];
  }
  proxy p{std::unique_lock<std::mutex>(slot->mutex), nullptr};
  if (slot->handle == nullptr) {
    if (stream_capturing(stream)) return {};  // throws when CUDA cannot say: forwarded
    cublasHandle_t made = nullptr;
    if (cublas_create(&made) != CUBLAS_STATUS_SUCCESS) return {};
    if (cublas_set_pointer_mode(made, CUBLAS_POINTER_MODE_HOST) != CUBLAS_STATUS_SUCCESS) {
      cublas_destroy(made);
      return {};
    }
    slot->handle = made;
  }
  if (cublas_set_stream(slot->handle, stream) != CUBLAS_STATUS_SUCCESS) return {};
  p.handle = slot->handle;
  return p;
}

bool nonzero(const double& x) { return x != 0.0; }
bool nonzero(const cuDoubleComplex& x) { return x.x != 0.0 || x.y != 0.0; }

cublasStatus_t gemm_64(cublasHandle_t h, const device_request<double>& r) {
  return cublas_dgemm_64(h, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda, r.b, r.ldb, r.beta, r.c,
                         r.ldc);
}
cublasStatus_t gemm_64(cublasHandle_t h, const device_request<cuDoubleComplex>& r) {
  return cublas_zgemm_64(h, r.ta, r.tb, r.m, r.n, r.k, r.alpha, r.a, r.lda, r.b, r.ldb, r.beta, r.c,
                         r.ldc);
}

// Bytes from the first element of a layout's first matrix to past its last matrix's last one.
int64_t extent(const lt_layout& l, int32_t batch, int64_t elem) {
  return ((batch - 1) * l.stride + (static_cast<int64_t>(l.cols) - 1) * l.ld +
          static_cast<int64_t>(l.rows)) *
         elem;
}

// Why this call, read as g, cannot be served on D in place (null when it can): D matrices that
// may overlap, C at D's address laid out otherwise, or C read from an array overlapping D's.
const char* in_place_problem(const lt_gemm& g, const void* c, const void* d, bool reads_c,
                             int64_t elem) {
  if (g.batch > 1 && g.d.stride < g.d.ld * g.n) return "D matrices that may overlap";
  if (!reads_c) return nullptr;
  if (c == d)
    return g.c.ld == g.d.ld && g.c.stride == g.d.stride ? nullptr
                                                        : "C and D at one address, laid out apart";
  const auto* c0 = static_cast<const char*>(c);
  const auto* d0 = static_cast<const char*>(d);
  if (c0 < d0 + extent(g.d, g.batch, elem) && d0 < c0 + extent(g.c, g.batch, elem))
    return "C and D overlapping";
  return nullptr;
}

template <class T>
cublasStatus_t serve(const lt_gemm& g, const void* alpha_p, const void* a, const void* b,
                     const void* beta_p, const void* c, void* d, cudaStream_t stream,
                     native_call lt_native) {
  const T& alpha = *static_cast<const T*>(alpha_p);
  const T& beta = *static_cast<const T*>(beta_p);
  constexpr int64_t elem = sizeof(T);
  call_record rec{kEntry, g.m, g.n, g.k, outcome::native, nullptr, 0, 0.0, 0.0, 0.0};
  const auto forward = [&](const char* why) {
    rec.reason = why;
    log_call(rec);
    return lt_native();
  };
  if (!settings().serve_cublaslt) return forward("OZDGEMM_CUBLASLT=off");
  if (g.m == 0 || g.n == 0) return forward("empty call");
  const bool reads_c = nonzero(beta), copy_c = reads_c && c != d;
  if (const char* why = in_place_problem(g, c, d, reads_c, elem)) return forward(why);
  const proxy held = proxy_handle(stream);
  const cublasHandle_t h = held.handle;
  if (h == nullptr) return forward("no cuBLAS handle for the call's stream");
  const auto request = [&](int32_t i) {
    return device_request<T>{kEntry,
                             h,
                             g.ta,
                             g.tb,
                             g.m,
                             g.n,
                             g.k,
                             &alpha,
                             static_cast<const T*>(a) + i * g.a.stride,
                             g.a.ld,
                             static_cast<const T*>(b) + i * g.b.stride,
                             g.b.ld,
                             &beta,
                             static_cast<T*>(d) + i * g.d.stride,
                             g.d.ld};
  };
  const route rt = device_gemm_route(request(0));
  if (!rt.emulate) {
    rec.predicted_native_ms = rt.predicted.native_ms;
    rec.predicted_emulated_ms = rt.predicted.emulated_ms;
    return forward(rt.reason != nullptr ? rt.reason : "native");
  }
  if (copy_c)
    for (int32_t i = 0; i < g.batch; ++i)
      if (cudaMemcpy2DAsync(static_cast<char*>(d) + i * g.d.stride * elem, g.d.ld * elem,
                            static_cast<const char*>(c) + i * g.c.stride * elem, g.c.ld * elem,
                            g.m * elem, g.n, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
        (void)cudaGetLastError();
        // D is cuBLASLt's to write from the untouched C.
        return forward("copying C into D failed");
      }
  for (int32_t i = 0; i < g.batch; ++i) {
    const device_request<T> r = request(i);
    auto native = [&] { return gemm_64(h, r); };
    const cublasStatus_t st = serve_device(r, native);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace
}  // namespace ozdgemm::detail

extern "C" OZDGEMM_API cublasStatus_t ozdgemm_audit_cublasLtMatmul(
    cublasLtHandle_t light, cublasLtMatmulDesc_t desc, const void* alpha, const void* a,
    cublasLtMatrixLayout_t a_desc, const void* b, cublasLtMatrixLayout_t b_desc, const void* beta,
    const void* c, cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
    const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
    cudaStream_t stream) noexcept {
  using namespace ozdgemm::detail;
  static const auto next =
      reinterpret_cast<decltype(&cublasLtMatmul)>(resolve_next(kEntry, kLtLibrary));
  auto native = [&]() -> cublasStatus_t {
    return next != nullptr ? next(light, desc, alpha, a, a_desc, b, b_desc, beta, c, c_desc, d,
                                  d_desc, algo, workspace, workspace_bytes, stream)
                           : CUBLAS_STATUS_NOT_INITIALIZED;
  };
  if (inside_interception() || in_native_fallback()) return native();
  try {
    const lt_getters* g = getters();
    // cuBLASLt reports a null handle or scalar itself.
    if (g == nullptr || light == nullptr || alpha == nullptr || beta == nullptr) return native();
    lt_gemm call;
    bool fp64 = false;
    const char* why = read_lt_matmul(*g, desc, a_desc, b_desc, c_desc, d_desc, &fp64, &call);
    if (!fp64) return native();  // other types: not the library's, not logged
    if (why != nullptr) {
      log_call({kEntry, call.m, call.n, call.k, outcome::native, why, 0, 0.0, 0.0, 0.0});
      return native();
    }
    return call.complex ? serve<cuDoubleComplex>(call, alpha, a, b, beta, c, d, stream, native)
                        : serve<double>(call, alpha, a, b, beta, c, d, stream, native);
  } catch (...) {
    return native();  // before anything was enqueued: nothing after the route throws
  }
}
