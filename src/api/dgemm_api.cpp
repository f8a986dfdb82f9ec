// The public entry points: argument checks with cuBLAS's rules, translation into one
// gemm_problem, then the engine (device) or the host reference.
#include "api/call_checks.hpp"
#include "api/dgemm_internal.hpp"
#include "api/status.hpp"
#include "common/cublas_api.hpp"
#include "common/error.hpp"
#include "common/logging.hpp"
#include "crt.cuh"
#include "engine/emulate.hpp"
#include "engine/run.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/auto_reference.hpp"
#include "reference/host_reference.hpp"

namespace ozdgemm::detail {
namespace {

// The automatic moduli count's fallback: native cublasDgemm with the caller's own arguments on
// the caller's handle (its stream and pointer mode apply as they are; nothing is changed).
void native_dgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                  int64_t m, int64_t n, int64_t k, const double* alpha, const double* A,
                  int64_t lda, const double* B, int64_t ldb, const double* beta, double* C,
                  int64_t ldc) {
  OZDGEMM_CUBLAS_TRY(
      cublas_dgemm_64(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

}  // namespace

device_result dgemm_device(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                           const double* alpha, const double* A, int64_t lda, const double* B,
                           int64_t ldb, const double* beta, double* C, int64_t ldc,
                           ozdgemm_options_t options, bool run_native, bool choose_on_gpu,
                           const moduli_gate* gate, c_triangle triangle) {
  device_result r;
  auto fail = [&](ozdgemm_status_t st) {
    r.status = st;
    return r;
  };
  checked_args args;
  const ozdgemm_status_t checked = check_device_args(handle, transa, transb, m, n, k, lda, ldb, ldc,
                                                     alpha, beta, options, &args);
  if (checked != OZDGEMM_STATUS_SUCCESS) return fail(checked);
  if (m == 0 || n == 0) {
    r.s = args.trivial_s;
    return r;
  }
  if (!fits_gpu_path(m, n, k, false)) return fail(OZDGEMM_STATUS_INVALID_VALUE);
  if (!addressable(args, m, n, k, A, lda, B, ldb, C, ldc, true, sizeof(double)))
    return fail(OZDGEMM_STATUS_INVALID_VALUE);
  const gemm_problem p{m, n, k, operand_a(args.oa, A, lda), operand_b(args.ob, B, ldb), C, ldc};
  device_gemm call{p, {}, {}, args.moduli, to_mode(options.scaling), nullptr, nullptr, nullptr};
  call.target = args.target;
  call.int8_gemm = int8_gemm_backend::setting;
  call.choose_on_gpu = choose_on_gpu;
  call.gate = gate;
  if (!take_triangle(triangle, m, n, &call)) return fail(OZDGEMM_STATUS_INVALID_VALUE);
  const history_key shape = key_of_call(m, n, k, false, call.mode, options.accuracy);
  call.shape = &shape;
  // Sized before the handle is touched: a workspace that cannot even be counted is an
  // allocation failure (the interposer then runs the native routine).
  size_t ws_bytes = 0;
  if (k > 0 && !size_workspace(&call, &ws_bytes))
    return unsized_workspace("ozdgemm_dgemm", m, n, k);

  const bool dev = caller_stream(handle, &call.stream);
  call.alpha = scalar_arg{dev ? alpha : nullptr, dev ? 0.0 : *alpha};
  call.beta = scalar_arg{dev ? beta : nullptr, dev ? 0.0 : *beta};

  // Nothing to multiply: C = beta C. (alpha == 0 in device mode is handled by the kernels,
  // which then read neither A nor B.)
  if (k == 0 || (!dev && call.alpha.host == 0.0)) {
    if (call.part != c_part::all) {
      r.not_emulated = kTriangleNothingToMultiply;
      return r;
    }
    launch_scale_c(C, ldc, m, n, call.beta, call.stream);
    OZDGEMM_CHECK_LAUNCH();
    r.s = args.trivial_s;
    return r;
  }

  return settle_run(
      "ozdgemm_dgemm", "cublasDgemm", m, n, k, run_for_handle(handle, call, ws_bytes), args.target,
      run_native,
      [&] { native_dgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });
}

}  // namespace ozdgemm::detail

using namespace ozdgemm::detail;

extern "C" {

OZDGEMM_API ozdgemm_options_t ozdgemm_default_options(void) {
  return ozdgemm_options_t{OZDGEMM_DEFAULT_MODULI, OZDGEMM_SCALING_FAST, OZDGEMM_ACCURACY_NATIVE};
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const double* alpha, const double* A,
                                           int64_t lda, const double* B, int64_t ldb,
                                           const double* beta, double* C, int64_t ldc,
                                           ozdgemm_options_t options) {
  return guarded("ozdgemm_dgemm", [&]() -> ozdgemm_status_t {
    return dgemm_device(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                        options, true, true)
        .status;
  });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_ex(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n,
                                              int64_t k, const double* alpha, const double* A,
                                              int64_t lda, const double* B, int64_t ldb,
                                              const double* beta, double* C, int64_t ldc,
                                              ozdgemm_options_t options, int* num_moduli_used) {
  return reporting_moduli("ozdgemm_dgemm_ex", num_moduli_used, [&] {
    return dgemm_device(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                        options, true, false);
  });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_reference(char transa, char transb, int64_t m, int64_t n,
                                                     int64_t k, double alpha, const double* A,
                                                     int64_t lda, const double* B, int64_t ldb,
                                                     double beta, double* C, int64_t ldc,
                                                     ozdgemm_options_t options) {
  return guarded("ozdgemm_dgemm_reference", [&]() -> ozdgemm_status_t {
    checked_args args;
    const ozdgemm_status_t checked =
        check_reference_args(transa, transb, m, n, k, lda, ldb, ldc, options, &args);
    if (checked != OZDGEMM_STATUS_SUCCESS) return checked;
    if (m == 0 || n == 0) return OZDGEMM_STATUS_SUCCESS;
    if (!addressable(args, m, n, k, A, lda, B, ldb, C, ldc, alpha != 0.0, sizeof(double)))
      return OZDGEMM_STATUS_INVALID_VALUE;
    size_t scratch = 0;
    if (alpha != 0.0 && k > 0 &&
        !reference_scratch_bytes(m, n, k, args.moduli.layout_count(), &scratch))
      return unsized_scratch("ozdgemm_dgemm_reference", m, n, k);
    const gemm_problem p{m, n, k, operand_a(args.oa, A, lda), operand_b(args.ob, B, ldb), C, ldc};
    if (args.moduli.chooses_per_call()) {
      const moduli_choice c = reference_dgemm_auto(p, alpha, beta, to_mode(options.scaling),
                                                   args.target, args.moduli.is_certified());
      if (c.s == 0) logger().info("ozdgemm_dgemm_reference: auto moduli: FP64 fallback: {}", c.why);
      return OZDGEMM_STATUS_SUCCESS;
    }
    reference_dgemm(p, alpha, beta, args.moduli.count(), to_mode(options.scaling));
    return OZDGEMM_STATUS_SUCCESS;
  });
}

OZDGEMM_API void ozdgemm_release_handle(cublasHandle_t handle) {
  guarded("ozdgemm_release_handle", [&]() -> ozdgemm_status_t {
    release_contexts(handle);
    return OZDGEMM_STATUS_SUCCESS;
  });
}

}  // extern "C"
