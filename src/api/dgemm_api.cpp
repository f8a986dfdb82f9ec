// The public entry points: argument checks with cuBLAS's rules, translation into one
// gemm_problem, then the engine (device) or the host reference.
#include <algorithm>
#include <mutex>

#include "api/dgemm_internal.hpp"
#include "api/status.hpp"
#include "common/error.hpp"
#include "common/logging.hpp"
#include "core/checked_math.hpp"
#include "core/moduli.hpp"
#include "crt.cuh"
#include "engine/emulate.hpp"
#include "engine/run.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/auto_reference.hpp"
#include "reference/host_reference.hpp"

namespace ozdgemm::detail {
namespace {

static_assert(CUBLAS_OP_N == 0 && CUBLAS_OP_T == 1 && CUBLAS_OP_C == 2,
              "parse_op's cuBLAS spelling (core/gemm_problem.hpp)");

// OZDGEMM_MODULI_AUTO's target from options.accuracy; false for an invalid value.
bool auto_target(const ozdgemm_options_t& o, accuracy_target* t) {
  if (o.accuracy == OZDGEMM_ACCURACY_NATIVE) *t = accuracy_target{accuracy_kind::native, 0};
  else if (o.accuracy == OZDGEMM_ACCURACY_MAX) *t = accuracy_target{accuracy_kind::max, 0};
  else if (o.accuracy >= 1 && o.accuracy <= 200) *t = accuracy_target{accuracy_kind::bits, o.accuracy};
  else return false;
  return true;
}

// The options of both entries (device and host reference): a moduli count in range,
// OZDGEMM_MODULI_AUTO or OZDGEMM_MODULI_CERTIFIED with a valid accuracy target (then *target is
// set), and a known scaling. False for anything else.
bool valid_options(const ozdgemm_options_t& o, moduli_setting* moduli, accuracy_target* target) {
  if (o.scaling != OZDGEMM_SCALING_FAST && o.scaling != OZDGEMM_SCALING_ACCURATE) return false;
  if (o.num_moduli == OZDGEMM_MODULI_AUTO)
    *moduli = moduli_setting::automatic();
  else if (o.num_moduli == OZDGEMM_MODULI_CERTIFIED)
    *moduli = moduli_setting::certified();
  else
    *moduli = moduli_setting::fixed(o.num_moduli);
  if (!moduli->valid()) return false;
  return moduli->is_fixed() || auto_target(o, target);
}

// The matrices the call reads and writes must lie in the address space: (cols - 1) ld + rows
// elements from the base pointer, with no overflow (core/checked_math.hpp). Arguments that
// fail this describe no memory a caller can own, so they are invalid values, refused before
// any index is formed. A and B are only checked when they are read (k > 0).
bool addressable(op_kind oa, op_kind ob, int64_t m, int64_t n, int64_t k, const double* A,
                 int64_t lda, const double* B, int64_t ldb, const double* C, int64_t ldc,
                 bool reads_ab) {
  if (!addressable_matrix(C, m, n, ldc)) return false;
  if (!reads_ab || k == 0) return true;
  const int64_t rows_a = oa == op_kind::n ? m : k, cols_a = oa == op_kind::n ? k : m;
  const int64_t rows_b = ob == op_kind::n ? k : n, cols_b = ob == op_kind::n ? n : k;
  return addressable_matrix(A, rows_a, cols_a, lda) && addressable_matrix(B, rows_b, cols_b, ldb);
}

scaling_mode to_mode(ozdgemm_scaling_t s) {
  return s == OZDGEMM_SCALING_FAST ? scaling_mode::fast : scaling_mode::accurate;
}

// Dimensions handed to the 32-bit cuBLAS INT8 GEMM after padding.
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1 - kPad;

thread_local bool native_fallback_active = false;

// The automatic moduli count's fallback: native cublasDgemm with the caller's own arguments on
// the caller's handle (its stream and pointer mode apply as they are; nothing is changed).
void native_dgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                  int64_t m, int64_t n, int64_t k, const double* alpha, const double* A,
                  int64_t lda, const double* B, int64_t ldb, const double* beta, double* C,
                  int64_t ldc) {
  struct scope {
    scope() { native_fallback_active = true; }
    ~scope() { native_fallback_active = false; }
  } guard;
  OZDGEMM_CUBLAS_TRY(cublas_dgemm_64(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                                       beta, C, ldc));
}

}  // namespace

bool in_native_fallback() noexcept { return native_fallback_active; }

device_result dgemm_device(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                           const double* alpha, const double* A, int64_t lda, const double* B,
                           int64_t ldb, const double* beta, double* C, int64_t ldc,
                           ozdgemm_options_t options, bool run_native) {
  device_result r;
  auto fail = [&](ozdgemm_status_t st) {
    r.status = st;
    return r;
  };
  if (handle == nullptr) return fail(OZDGEMM_STATUS_NOT_INITIALIZED);
  moduli_setting moduli;  // set by valid_options
  accuracy_target target;
  if (!valid_options(options, &moduli, &target)) return fail(OZDGEMM_STATUS_INVALID_VALUE);
  op_kind oa, ob;
  if (!parse_op(transa, op_spelling::cublas, &oa) || !parse_op(transb, op_spelling::cublas, &ob) ||
      !valid_gemm_shape(oa, ob, m, n, k, lda, ldb, ldc) || alpha == nullptr || beta == nullptr)
    return fail(OZDGEMM_STATUS_INVALID_VALUE);
  // Trivial calls: any s gives the BLAS result; report the smallest, as the host reference.
  const int trivial_s = moduli.is_fixed() ? moduli.count() : kMinModuli;
  if (m == 0 || n == 0) {
    r.s = trivial_s;
    return r;
  }
  if (m > kMaxDim || n > kMaxDim || k > kMaxDim) return fail(OZDGEMM_STATUS_INVALID_VALUE);
  if (!addressable(oa, ob, m, n, k, A, lda, B, ldb, C, ldc, true))
    return fail(OZDGEMM_STATUS_INVALID_VALUE);
  const gemm_problem p{m, n, k, operand_a(oa, A, lda), operand_b(ob, B, ldb), C, ldc};
  device_gemm call{p, {}, {}, moduli, to_mode(options.scaling), nullptr, nullptr, nullptr};
  call.target = target;
  call.int8_gemm = int8_gemm_backend::setting;
  // Sized before the handle is touched: a workspace that cannot even be counted is an
  // allocation failure (the interposer then runs the native routine).
  size_t ws_bytes = 0;
  if (k > 0 && !size_workspace(&call, &ws_bytes)) {
    logger().info("ozdgemm_dgemm: m={} n={} k={} needs more workspace than can be addressed",
                  m, n, k);
    return fail(OZDGEMM_STATUS_ALLOC_FAILED);
  }

  OZDGEMM_CUBLAS_TRY(cublas_get_stream(handle, &call.stream));
  cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
  OZDGEMM_CUBLAS_TRY(cublas_get_pointer_mode(handle, &pm));
  const bool dev = pm == CUBLAS_POINTER_MODE_DEVICE;
  call.alpha = scalar_arg{dev ? alpha : nullptr, dev ? 0.0 : *alpha};
  call.beta = scalar_arg{dev ? beta : nullptr, dev ? 0.0 : *beta};

  // Nothing to multiply: C = beta C. (alpha == 0 in device mode is handled by the kernels,
  // which then read neither A nor B.)
  if (k == 0 || (!dev && call.alpha.host == 0.0)) {
    launch_scale_c(C, ldc, m, n, call.beta, call.stream);
    OZDGEMM_CHECK_LAUNCH();
    r.s = trivial_s;
    return r;
  }

  const run_outcome run = run_for_handle(handle, call, ws_bytes);
  r.s = run.s;
  if (run.refused != nullptr) {
    r.not_emulated = run.refused;
    if (run_native)  // the C API's caller learns it from the status; the interposer logs it
      logger().warn("ozdgemm_dgemm: m={} n={} k={}: workspace refused ({})", m, n, k, run.refused);
    return fail(OZDGEMM_STATUS_ALLOC_FAILED);
  }
  if (run.s != 0) return r;
  r.not_emulated = run.declined;
  logger().info("ozdgemm_dgemm: auto moduli (target {}): native cublasDgemm for this call: {}",
                accuracy_target_name(target), run.choice.why);
  if (run_native)
    native_dgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return r;
}

}  // namespace ozdgemm::detail

using namespace ozdgemm::detail;

extern "C" {

OZDGEMM_API ozdgemm_options_t ozdgemm_default_options(void) {
  return ozdgemm_options_t{OZDGEMM_DEFAULT_MODULI, OZDGEMM_SCALING_FAST,
                           OZDGEMM_ACCURACY_NATIVE};
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const double* alpha, const double* A,
                                           int64_t lda, const double* B, int64_t ldb,
                                           const double* beta, double* C, int64_t ldc,
                                           ozdgemm_options_t options) {
  return guarded("ozdgemm_dgemm", [&]() -> ozdgemm_status_t {
    return dgemm_device(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                        options, true)
        .status;
  });
}

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_ex(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n,
                                              int64_t k, const double* alpha, const double* A,
                                              int64_t lda, const double* B, int64_t ldb,
                                              const double* beta, double* C, int64_t ldc,
                                              ozdgemm_options_t options, int* num_moduli_used) {
  if (num_moduli_used != nullptr) *num_moduli_used = 0;
  return guarded("ozdgemm_dgemm_ex", [&]() -> ozdgemm_status_t {
    const device_result r = dgemm_device(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                                         beta, C, ldc, options, true);
    if (num_moduli_used != nullptr) *num_moduli_used = r.status == OZDGEMM_STATUS_SUCCESS ? r.s : 0;
    return r.status;
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
    if (!parse_op(transa, op_spelling::blas_char, &oa) ||
        !parse_op(transb, op_spelling::blas_char, &ob) ||
        !valid_gemm_shape(oa, ob, m, n, k, lda, ldb, ldc))
      return OZDGEMM_STATUS_INVALID_VALUE;
    // The options (auto's target included) are checked before anything else, as on the device
    // entry: an invalid option is an invalid value even when there is nothing to compute.
    moduli_setting moduli;  // set by valid_options
    accuracy_target target;
    if (!valid_options(options, &moduli, &target)) return OZDGEMM_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return OZDGEMM_STATUS_SUCCESS;
    if (!addressable(oa, ob, m, n, k, A, lda, B, ldb, C, ldc, alpha != 0.0))
      return OZDGEMM_STATUS_INVALID_VALUE;
    size_t scratch = 0;
    if (alpha != 0.0 && k > 0 &&
        !reference_scratch_bytes(m, n, k, moduli.layout_count(), &scratch)) {
      logger().info("ozdgemm_dgemm_reference: m={} n={} k={} needs more scratch memory than "
                    "can be addressed", m, n, k);
      return OZDGEMM_STATUS_ALLOC_FAILED;
    }
    const gemm_problem p{m, n, k, operand_a(oa, A, lda), operand_b(ob, B, ldb), C, ldc};
    if (moduli.chooses_per_call()) {
      const moduli_choice c = reference_dgemm_auto(p, alpha, beta, to_mode(options.scaling), target,
                                                   moduli.is_certified());
      if (c.s == 0) logger().info("ozdgemm_dgemm_reference: auto moduli: FP64 fallback: {}", c.why);
      return OZDGEMM_STATUS_SUCCESS;
    }
    reference_dgemm(p, alpha, beta, moduli.count(), to_mode(options.scaling));
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
