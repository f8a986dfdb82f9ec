#include "api/call_checks.hpp"

#include <cstring>

#include "common/cublas_api.hpp"
#include "common/error.hpp"
#include "core/checked_math.hpp"
#include "core/moduli.hpp"
#include "engine/layout.hpp"

namespace ozdgemm::detail {
namespace {

static_assert(CUBLAS_OP_N == 0 && CUBLAS_OP_T == 1 && CUBLAS_OP_C == 2,
              "parse_op's cuBLAS spelling (core/gemm_problem.hpp)");

// OZDGEMM_MODULI_AUTO's target from options.accuracy; false for an invalid value.
bool auto_target(const ozdgemm_options_t& o, accuracy_target* t) {
  if (o.accuracy == OZDGEMM_ACCURACY_NATIVE)
    *t = accuracy_target{accuracy_kind::native, 0};
  else if (o.accuracy == OZDGEMM_ACCURACY_MAX)
    *t = accuracy_target{accuracy_kind::max, 0};
  else if (o.accuracy >= 1 && o.accuracy <= 200)
    *t = accuracy_target{accuracy_kind::bits, o.accuracy};
  else
    return false;
  return true;
}

// The options of every entry (device and host reference): a moduli count in range,
// OZDGEMM_MODULI_AUTO or OZDGEMM_MODULI_CERTIFIED with a valid accuracy target (then *target is
// set), and a known scaling. False for anything else.
bool valid_options(const ozdgemm_options_t& o, moduli_setting* moduli, accuracy_target* target) {
  // Read as the int a C caller stored: any other value in a C++ enum object is undefined to load.
  int scaling = 0;
  static_assert(sizeof scaling == sizeof o.scaling, "ozdgemm_scaling_t is an int in C");
  std::memcpy(&scaling, &o.scaling, sizeof scaling);
  if (scaling != OZDGEMM_SCALING_FAST && scaling != OZDGEMM_SCALING_ACCURATE) return false;
  if (o.num_moduli == OZDGEMM_MODULI_AUTO)
    *moduli = moduli_setting::automatic();
  else if (o.num_moduli == OZDGEMM_MODULI_CERTIFIED)
    *moduli = moduli_setting::certified();
  else
    *moduli = moduli_setting::fixed(o.num_moduli);
  if (!moduli->valid()) return false;
  return moduli->is_fixed() || auto_target(o, target);
}

thread_local bool native_fallback_active = false;

}  // namespace

scaling_mode to_mode(ozdgemm_scaling_t s) {
  return s == OZDGEMM_SCALING_FAST ? scaling_mode::fast : scaling_mode::accurate;
}

ozdgemm_status_t check_device_args(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                   int64_t lda, int64_t ldb, int64_t ldc, const void* alpha,
                                   const void* beta, const ozdgemm_options_t& options,
                                   checked_args* out) {
  if (handle == nullptr) return OZDGEMM_STATUS_NOT_INITIALIZED;
  if (!valid_options(options, &out->moduli, &out->target)) return OZDGEMM_STATUS_INVALID_VALUE;
  if (!parse_op(transa, op_spelling::cublas, &out->oa, &out->conj_a) ||
      !parse_op(transb, op_spelling::cublas, &out->ob, &out->conj_b) ||
      !valid_gemm_shape(out->oa, out->ob, m, n, k, lda, ldb, ldc) || alpha == nullptr ||
      beta == nullptr)
    return OZDGEMM_STATUS_INVALID_VALUE;
  out->trivial_s = out->moduli.is_fixed() ? out->moduli.count() : kMinModuli;
  return OZDGEMM_STATUS_SUCCESS;
}

ozdgemm_status_t check_reference_args(char transa, char transb, int64_t m, int64_t n, int64_t k,
                                      int64_t lda, int64_t ldb, int64_t ldc,
                                      const ozdgemm_options_t& options, checked_args* out) {
  if (!parse_op(transa, op_spelling::blas_char, &out->oa, &out->conj_a) ||
      !parse_op(transb, op_spelling::blas_char, &out->ob, &out->conj_b) ||
      !valid_gemm_shape(out->oa, out->ob, m, n, k, lda, ldb, ldc))
    return OZDGEMM_STATUS_INVALID_VALUE;
  if (!valid_options(options, &out->moduli, &out->target)) return OZDGEMM_STATUS_INVALID_VALUE;
  out->trivial_s = out->moduli.is_fixed() ? out->moduli.count() : kMinModuli;
  return OZDGEMM_STATUS_SUCCESS;
}

bool addressable(const checked_args& args, int64_t m, int64_t n, int64_t k, const void* A,
                 int64_t lda, const void* B, int64_t ldb, const void* C, int64_t ldc, bool reads_ab,
                 size_t element) {
  if (!addressable_matrix(C, m, n, ldc, element)) return false;
  if (!reads_ab || k == 0) return true;
  const int64_t rows_a = args.oa == op_kind::n ? m : k, cols_a = args.oa == op_kind::n ? k : m;
  const int64_t rows_b = args.ob == op_kind::n ? k : n, cols_b = args.ob == op_kind::n ? n : k;
  return addressable_matrix(A, rows_a, cols_a, lda, element) &&
         addressable_matrix(B, rows_b, cols_b, ldb, element);
}

bool caller_stream(cublasHandle_t handle, cudaStream_t* stream) {
  OZDGEMM_CUBLAS_TRY(cublas_get_stream(handle, stream));
  cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
  OZDGEMM_CUBLAS_TRY(cublas_get_pointer_mode(handle, &pm));
  return pm == CUBLAS_POINTER_MODE_DEVICE;
}

bool take_triangle(const c_triangle& triangle, int64_t m, int64_t n, device_gemm* call) {
  if (triangle.part == c_part::all) return true;
  if (m != n) return false;
  call->part = triangle.part;
  call->row_block = part_row_block(m);
  return true;
}

device_result unsized_workspace(const char* entry, int64_t m, int64_t n, int64_t k) {
  logger().info("{}: m={} n={} k={} needs more workspace than can be addressed", entry, m, n, k);
  device_result r;
  r.status = OZDGEMM_STATUS_ALLOC_FAILED;
  return r;
}

ozdgemm_status_t unsized_scratch(const char* entry, int64_t m, int64_t n, int64_t k) {
  logger().info("{}: m={} n={} k={} needs more scratch memory than can be addressed", entry, m, n,
                k);
  return OZDGEMM_STATUS_ALLOC_FAILED;
}

native_fallback_scope::native_fallback_scope() { native_fallback_active = true; }
native_fallback_scope::~native_fallback_scope() { native_fallback_active = false; }

bool in_native_fallback() noexcept { return native_fallback_active; }

}  // namespace ozdgemm::detail
