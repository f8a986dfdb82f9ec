// The complex entry points: the argument checks of the real ones (call_checks.hpp), then one
// real GEMM on the embedding of core/complex_embedding.hpp: the engine (device) or the host
// reference.
#include "api/call_checks.hpp"
#include "api/status.hpp"
#include "api/zgemm_internal.hpp"
#include "common/cublas_api.hpp"
#include "common/error.hpp"
#include "common/logging.hpp"
#include "complex_pack.cuh"
#include "core/complex_embedding.hpp"
#include "core/moduli_choice.hpp"
#include "engine/run.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/complex_reference.hpp"

namespace ozdgemm::detail {
namespace {

const double* parts(const cuDoubleComplex* z) { return reinterpret_cast<const double*>(z); }

// The per-call choice's fallback: native cublasZgemm with the caller's own arguments on the
// caller's handle (its stream and pointer mode apply as they are; nothing is changed).
void native_zgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                  int64_t m, int64_t n, int64_t k, const cuDoubleComplex* alpha,
                  const cuDoubleComplex* A, int64_t lda, const cuDoubleComplex* B, int64_t ldb,
                  const cuDoubleComplex* beta, cuDoubleComplex* C, int64_t ldc) {
  OZDGEMM_CUBLAS_TRY(
      cublas_zgemm_64(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

}  // namespace

device_result zgemm_device(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                           const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
                           const cuDoubleComplex* B, int64_t ldb, const cuDoubleComplex* beta,
                           cuDoubleComplex* C, int64_t ldc, ozdgemm_options_t options,
                           bool run_native, bool choose_on_gpu, const moduli_gate* gate,
                           c_triangle triangle) {
  device_result r;
  checked_args args;
  r.status = check_device_args(handle, transa, transb, m, n, k, lda, ldb, ldc, alpha, beta, options,
                               &args);
  if (r.status != OZDGEMM_STATUS_SUCCESS) return r;
  if (m == 0 || n == 0) {
    r.s = args.trivial_s;
    return r;
  }
  if (!fits_gpu_path(m, n, k, true) ||
      !addressable(args, m, n, k, A, lda, B, ldb, C, ldc, true, sizeof(cuDoubleComplex))) {
    r.status = OZDGEMM_STATUS_INVALID_VALUE;
    return r;
  }
  complex_gemm call{};
  call.p = complex_problem_of(args, m, n, k, A, lda, B, ldb, C, ldc);
  call.real.moduli = args.moduli;
  call.real.mode = to_mode(options.scaling);
  call.real.target = complex_target(args.target, args.moduli);
  call.real.int8_gemm = int8_gemm_backend::setting;
  call.real.gate = gate;
  call.real.choose_on_gpu = choose_on_gpu;
  if (!take_triangle(triangle, m, n, &call.real)) {
    r.status = OZDGEMM_STATUS_INVALID_VALUE;
    return r;
  }
  call.real_diagonal = triangle.real_diagonal;
  const history_key shape = key_of_call(m, n, k, true, call.real.mode, options.accuracy);
  call.real.shape = &shape;
  // Sized before the handle is touched, with the engine's arrays for (m, 2n, 2k) and the packs.
  size_t ws_bytes = 0;
  if (k > 0 && !size_complex_workspace(&call, &ws_bytes))
    return unsized_workspace("ozdgemm_zgemm", m, n, k);
  if (call.real.part != c_part::all && (k == 0 || !call.real.karatsuba.on())) {
    r.not_emulated = k == 0 ? kTriangleNothingToMultiply : kTriangleNotKaratsuba;
    return r;
  }

  const bool dev = caller_stream(handle, &call.real.stream);
  call.alpha = complex_scalar_arg{
      dev ? parts(alpha) : nullptr,
      dev ? complex_value{0.0, 0.0} : complex_value{cuCreal(*alpha), cuCimag(*alpha)}};
  call.beta = complex_scalar_arg{
      dev ? parts(beta) : nullptr,
      dev ? complex_value{0.0, 0.0} : complex_value{cuCreal(*beta), cuCimag(*beta)}};

  // Nothing to multiply: C = beta C. (alpha == 0 in device mode is handled by the kernels:
  // the packs then read neither A nor B, and the epilogue no T.)
  if (k == 0 || (!dev && is_zero(call.alpha.host))) {
    if (call.real.part != c_part::all) {
      r.not_emulated = kTriangleNothingToMultiply;
      return r;
    }
    launch_complex_epilogue(call.p, nullptr, complex_scalar_arg{nullptr, {0.0, 0.0}}, call.beta,
                            call.real.stream);
    OZDGEMM_CHECK_LAUNCH();
    r.s = args.trivial_s;
    return r;
  }

  return settle_run(
      "ozdgemm_zgemm", "cublasZgemm", m, n, k, run_complex_for_handle(handle, call, ws_bytes),
      args.target, run_native,
      [&] { native_zgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });
}

}  // namespace ozdgemm::detail

using namespace ozdgemm::detail;

extern "C" {

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const cuDoubleComplex* alpha,
                                           const cuDoubleComplex* A, int64_t lda,
                                           const cuDoubleComplex* B, int64_t ldb,
                                           const cuDoubleComplex* beta, cuDoubleComplex* C,
                                           int64_t ldc, ozdgemm_options_t options) {
  return guarded("ozdgemm_zgemm", [&]() -> ozdgemm_status_t {
    return zgemm_device(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                        options, true, true)
        .status;
  });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_ex(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
    const cuDoubleComplex* B, int64_t ldb, const cuDoubleComplex* beta, cuDoubleComplex* C,
    int64_t ldc, ozdgemm_options_t options, int* num_moduli_used) {
  return reporting_moduli("ozdgemm_zgemm_ex", num_moduli_used, [&] {
    return zgemm_device(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                        options, true, false);
  });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_reference(char transa, char transb, int64_t m, int64_t n,
                                                     int64_t k, cuDoubleComplex alpha,
                                                     const cuDoubleComplex* A, int64_t lda,
                                                     const cuDoubleComplex* B, int64_t ldb,
                                                     cuDoubleComplex beta, cuDoubleComplex* C,
                                                     int64_t ldc, ozdgemm_options_t options) {
  return guarded("ozdgemm_zgemm_reference", [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked =
        check_reference_args(transa, transb, m, n, k, lda, ldb, ldc, options, &args);
    if (checked != OZDGEMM_STATUS_SUCCESS) return checked;
    if (m == 0 || n == 0) return OZDGEMM_STATUS_SUCCESS;
    const complex_value a{cuCreal(alpha), cuCimag(alpha)}, b{cuCreal(beta), cuCimag(beta)};
    const bool reads_ab = !is_zero(a);
    if (!addressable(args, m, n, k, A, lda, B, ldb, C, ldc, reads_ab, sizeof(cuDoubleComplex)))
      return OZDGEMM_STATUS_INVALID_VALUE;
    size_t scratch = 0;
    if (reads_ab && k > 0 &&
        !reference_zgemm_scratch_bytes(m, n, k, args.moduli.layout_count(), &scratch))
      return unsized_scratch("ozdgemm_zgemm_reference", m, n, k);
    moduli_choice c;
    const int s = reference_zgemm(complex_problem_of(args, m, n, k, A, lda, B, ldb, C, ldc), a, b,
                                  args.moduli, to_mode(options.scaling),
                                  complex_target(args.target, args.moduli), &c);
    if (s == 0) logger().info("ozdgemm_zgemm_reference: auto moduli: FP64 fallback: {}", c.why);
    return OZDGEMM_STATUS_SUCCESS;
  });
}

}  // extern "C"
