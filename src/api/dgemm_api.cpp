// The public entry points: argument checks with cuBLAS's rules, translation into one
// gemm_problem, then the engine (device) or the host reference.
#include <algorithm>
#include <mutex>

#include "api/status.hpp"
#include "common/error.hpp"
#include "common/logging.hpp"
#include "core/moduli.hpp"
#include "crt.cuh"
#include "engine/emulate.hpp"
#include "engine/handle_context.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/auto_reference.hpp"
#include "reference/host_reference.hpp"

namespace ozdgemm::detail {
namespace {

bool parse_op(cublasOperation_t op, op_kind* out) {
  switch (op) {
    case CUBLAS_OP_N: *out = op_kind::n; return true;
    case CUBLAS_OP_T:
    case CUBLAS_OP_C: *out = op_kind::t; return true;  // real data: C == T
    default: return false;
  }
}

bool valid_options(const ozdgemm_options_t& o) {
  return o.num_moduli >= kMinModuli && o.num_moduli <= kMaxModuli &&
         (o.scaling == OZDGEMM_SCALING_FAST || o.scaling == OZDGEMM_SCALING_ACCURATE);
}

// cublasDgemm's rules: sizes >= 0, lda >= max(1, rows of A as stored), likewise ldb, ldc.
bool valid_shape(op_kind oa, op_kind ob, int64_t m, int64_t n, int64_t k, int64_t lda,
                 int64_t ldb, int64_t ldc) {
  if (m < 0 || n < 0 || k < 0) return false;
  const int64_t rows_a = oa == op_kind::n ? m : k;
  const int64_t rows_b = ob == op_kind::n ? k : n;
  return lda >= std::max<int64_t>(1, rows_a) && ldb >= std::max<int64_t>(1, rows_b) &&
         ldc >= std::max<int64_t>(1, m);
}

// OZDGEMM_MODULI_AUTO's target from options.accuracy; false for an invalid value.
bool auto_target(const ozdgemm_options_t& o, accuracy_target* t) {
  if (o.accuracy == OZDGEMM_ACCURACY_NATIVE) *t = accuracy_target{accuracy_kind::native, 0};
  else if (o.accuracy == OZDGEMM_ACCURACY_MAX) *t = accuracy_target{accuracy_kind::max, 0};
  else if (o.accuracy >= 1 && o.accuracy <= 200) *t = accuracy_target{accuracy_kind::bits, o.accuracy};
  else return false;
  return true;
}

scaling_mode to_mode(ozdgemm_scaling_t s) {
  return s == OZDGEMM_SCALING_FAST ? scaling_mode::fast : scaling_mode::accurate;
}

// Dimensions handed to the 32-bit cuBLAS INT8 GEMM after padding.
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1 - kPad;

}  // namespace
}  // namespace ozdgemm::detail

using namespace ozdgemm::detail;

extern "C" {

OZDGEMM_API ozdgemm_options_t ozdgemm_default_options(void) {
  return ozdgemm_options_t{14, OZDGEMM_SCALING_ACCURATE, OZDGEMM_ACCURACY_NATIVE};
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const double* alpha, const double* A,
                                           int64_t lda, const double* B, int64_t ldb,
                                           const double* beta, double* C, int64_t ldc,
                                           ozdgemm_options_t options) {
  return guarded("ozdgemm_dgemm", [&]() -> ozdgemm_status_t {
    if (handle == nullptr) return OZDGEMM_STATUS_NOT_INITIALIZED;
    op_kind oa, ob;
    if (!parse_op(transa, &oa) || !parse_op(transb, &ob) ||
        !valid_shape(oa, ob, m, n, k, lda, ldb, ldc) || !valid_options(options) ||
        alpha == nullptr || beta == nullptr)
      return OZDGEMM_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return OZDGEMM_STATUS_SUCCESS;
    if (m > kMaxDim || n > kMaxDim || k > kMaxDim) return OZDGEMM_STATUS_INVALID_VALUE;

    cudaStream_t stream = nullptr;
    OZDGEMM_CUBLAS_TRY(cublas_get_stream(handle, &stream));
    cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
    OZDGEMM_CUBLAS_TRY(cublas_get_pointer_mode(handle, &pm));
    const bool dev = pm == CUBLAS_POINTER_MODE_DEVICE;
    const scalar_arg a_arg{dev ? alpha : nullptr, dev ? 0.0 : *alpha};
    const scalar_arg b_arg{dev ? beta : nullptr, dev ? 0.0 : *beta};

    // Nothing to multiply: C = beta C. (alpha == 0 in device mode is handled by the kernels,
    // which then read neither A nor B.)
    if (k == 0 || (!dev && a_arg.host == 0.0)) {
      launch_scale_c(C, ldc, m, n, b_arg, stream);
      OZDGEMM_CHECK_LAUNCH();
      return OZDGEMM_STATUS_SUCCESS;
    }

    const gemm_problem p{m, n, k, operand_a(oa, A, lda), operand_b(ob, B, ldb), C, ldc};
    const scaling_mode mode = to_mode(options.scaling);
    auto ctx = context_for(handle);
    std::lock_guard<std::mutex> lock(ctx->mutex());
    ctx->begin(stream);
    void* ws = ctx->workspace(emulation_workspace_bytes(m, n, k, options.num_moduli, mode));
    enqueue_emulation(device_gemm{p, a_arg, b_arg, options.num_moduli, mode, stream,
                                  ctx->cublas(), nullptr},
                      ws);
    ctx->end();
    return OZDGEMM_STATUS_SUCCESS;
  });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_reference(char transa, char transb, int64_t m,
                                                     int64_t n, int64_t k, double alpha,
                                                     const double* A, int64_t lda,
                                                     const double* B, int64_t ldb, double beta,
                                                     double* C, int64_t ldc,
                                                     ozdgemm_options_t options) {
  return guarded("ozdgemm_dgemm_reference", [&]() -> ozdgemm_status_t {
    op_kind oa, ob;
    if (!parse_op_char(transa, &oa) || !parse_op_char(transb, &ob) ||
        !valid_shape(oa, ob, m, n, k, lda, ldb, ldc))
      return OZDGEMM_STATUS_INVALID_VALUE;
    const gemm_problem p{m, n, k, operand_a(oa, A, lda), operand_b(ob, B, ldb), C, ldc};
    if (options.num_moduli == OZDGEMM_MODULI_AUTO) {
      accuracy_target t;
      ozdgemm_options_t fixed = options;
      fixed.num_moduli = kMinModuli;  // the scaling field's check
      if (!auto_target(options, &t) || !valid_options(fixed)) return OZDGEMM_STATUS_INVALID_VALUE;
      const moduli_choice c = reference_dgemm_auto(p, alpha, beta, to_mode(options.scaling), t);
      if (c.s == 0) logger().info("ozdgemm_dgemm_reference: auto moduli: FP64 fallback: {}", c.why);
      return OZDGEMM_STATUS_SUCCESS;
    }
    if (!valid_options(options)) return OZDGEMM_STATUS_INVALID_VALUE;
    reference_dgemm(p, alpha, beta, options.num_moduli, to_mode(options.scaling));
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
