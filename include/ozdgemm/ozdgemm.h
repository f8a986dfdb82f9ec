/* ozdgemm: FP64 GEMM emulated with Ozaki Scheme II on INT8 tensor cores.
 *
 * C API. Every function is noexcept in effect: no C++ exception crosses it; failures come
 * back as an ozdgemm_status_t and are logged. */
#ifndef OZDGEMM_OZDGEMM_H
#define OZDGEMM_OZDGEMM_H

#include <stdint.h>

#include <cuComplex.h>
#include <cublas_v2.h>

#include "ozdgemm/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OZDGEMM_VERSION_MAJOR 0
#define OZDGEMM_VERSION_MINOR 1
#define OZDGEMM_VERSION_PATCH 0

typedef enum ozdgemm_status {
  OZDGEMM_STATUS_SUCCESS = 0,
  OZDGEMM_STATUS_NOT_INITIALIZED = 1, /* null handle (cuBLAS: CUBLAS_STATUS_NOT_INITIALIZED) */
  OZDGEMM_STATUS_INVALID_VALUE = 2,   /* bad size, ld, op or option (CUBLAS_STATUS_INVALID_VALUE) */
  OZDGEMM_STATUS_ALLOC_FAILED = 3,    /* workspace could not be allocated; C untouched */
  OZDGEMM_STATUS_CUDA_ERROR = 4,      /* a CUDA runtime call failed */
  OZDGEMM_STATUS_CUBLAS_ERROR = 5,    /* a cuBLAS call failed */
  OZDGEMM_STATUS_INTERNAL_ERROR = 6
} ozdgemm_status_t;

typedef enum ozdgemm_scaling {
  OZDGEMM_SCALING_FAST = 0,    /* bound from row/column 2-norms (Cauchy-Schwarz) */
  OZDGEMM_SCALING_ACCURATE = 1 /* bound from one extra INT8 GEMM of |A| and |B|: more bits kept */
} ozdgemm_scaling_t;

/* num_moduli = OZDGEMM_MODULI_AUTO: choose s per call from the scaling statistics, the
 * smallest s whose predicted error meets `accuracy` (docs/auto.md); when none does, the
 * call runs native FP64. `accuracy`: OZDGEMM_ACCURACY_NATIVE (no worse than native DGEMM),
 * OZDGEMM_ACCURACY_MAX (as close to correctly rounded as 20 moduli allow) or a number of
 * bits b in [1, 200] (predicted error <= 2^-b (|A||B|)_ij). `accuracy` is read only when
 * num_moduli == OZDGEMM_MODULI_AUTO, so callers built before it existed are unaffected.
 * On the GPU (ozdgemm_dgemm), auto adds one small device-to-host copy per call, made once the
 * handle's stream has reached the choice (the chosen s decides how many INT8 GEMMs are
 * launched); the host waits for that at most 1 s. It reserves the workspace of s = 20. When no s
 * meets the target, on a stream being captured into a CUDA graph (where the host cannot wait),
 * and on a stream held back for longer than the wait, the call runs native cublasDgemm on the
 * caller's handle (its stream and pointer mode; the handle is not modified) and logs why at
 * info level; ozdgemm_dgemm_ex reports which s ran. Fixed s never waits. */
#define OZDGEMM_MODULI_AUTO 0
/* num_moduli = OZDGEMM_MODULI_CERTIFIED (the default): as OZDGEMM_MODULI_AUTO, but s is chosen
 * on a proven bound of every element's error instead of a model: |C - AB| <= target (|A||B|)_ij
 * + u |C_ij| for every input (docs/certified.md); a call no s <= 20 can certify runs
 * native. Costs one more INT8 GEMM of depth k and two passes over C per call; calls with
 * k >= 2^32 run native. ozdgemm_dgemm and ozdgemm_zgemm do not synchronise for it: a shape's
 * first call chooses on the host (one wait, as OZDGEMM_MODULI_AUTO), later ones launch the count
 * the shape's recent calls certified and the GPU checks it against the call's own data, running
 * an FP64 fallback GEMM where it does not hold; under stream capture the count is chosen in
 * graph conditionals (docs/default.md; OZDGEMM_CHOICE=host makes every call choose on
 * the host). The _ex forms choose on the host, with one wait, so that they can report s. */
#define OZDGEMM_MODULI_CERTIFIED (-1)
#define OZDGEMM_ACCURACY_NATIVE 0
/* The moduli setting of ozdgemm_default_options(), ozdgemm::options{} and the interposer when
 * OZDGEMM_MODULI is unset: certified, so that no call is less accurate than native DGEMM's
 * error bound unless the caller asks for a fixed s. */
#define OZDGEMM_DEFAULT_MODULI OZDGEMM_MODULI_CERTIFIED
#define OZDGEMM_ACCURACY_MAX (-1)

typedef struct ozdgemm_options {
  int num_moduli;            /* s in [2, 20] (about 4 more significant bits per modulus),
                                OZDGEMM_MODULI_AUTO or OZDGEMM_MODULI_CERTIFIED */
  ozdgemm_scaling_t scaling; /* fast or accurate */
  int accuracy;              /* target of OZDGEMM_MODULI_AUTO / _CERTIFIED (see above) */
} ozdgemm_options_t;

/* OZDGEMM_DEFAULT_MODULI (certified), fast scaling, target native. Fast, not accurate, by
 * measurement: with the certified choice, accurate scaling keeps enough bits to certify one
 * modulus fewer on narrow-range data, where that s missed native DGEMM's realised relative
 * error (docs/default.md); fast scaling met native in both metrics on every measured set. */
OZDGEMM_API ozdgemm_options_t ozdgemm_default_options(void);

/* C = alpha op(A) op(B) + beta C on device pointers, with the arguments of cublasDgemm.
 *
 * - Stream: all work is enqueued on the stream of `handle` (cublasGetStream); the call does
 *   not synchronise the host or the device, and C is ready when that stream reaches this
 *   point, as with cublasDgemm.
 * - alpha and beta are read according to the handle's pointer mode (host or device).
 * - The handle is not modified. The library keeps, per handle, a private cuBLAS handle and a
 *   workspace that only grows; ozdgemm_release_handle() frees them.
 * - BLAS semantics: alpha == 0 reads neither A nor B, beta == 0 never reads C, k == 0
 *   gives C = beta C, m == 0 or n == 0 returns at once. Inf/NaN in A or B give the classes
 *   native cublasDgemm gives at the same positions.
 * - Errors: invalid arguments return OZDGEMM_STATUS_INVALID_VALUE before anything is
 *   enqueued (C untouched). A failure after enqueueing began returns an error status; C may
 *   then be partly written. Thread-safe: distinct handles run concurrently; calls on one
 *   handle are serialised while they enqueue. */
OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const double* alpha, const double* A,
                                           int64_t lda, const double* B, int64_t ldb,
                                           const double* beta, double* C, int64_t ldc,
                                           ozdgemm_options_t options);

/* ozdgemm_dgemm, and *num_moduli_used (if not null) receives the moduli count that ran:
 * options.num_moduli, or with a per-call choice (OZDGEMM_MODULI_AUTO, _CERTIFIED) the chosen s,
 * or 0 when the call ran native cublasDgemm instead (no s in [2, 20] meets the target, stream
 * capture, or the wait; see above). Set to 0 on any error. The result is bit-identical to ozdgemm_dgemm_reference with the same
 * options. */
OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_ex(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n,
                                              int64_t k, const double* alpha, const double* A,
                                              int64_t lda, const double* B, int64_t ldb,
                                              const double* beta, double* C, int64_t ldc,
                                              ozdgemm_options_t options, int* num_moduli_used);

/* The same computation on host memory by the bit-exact CPU reference (integer loops; slow,
 * O(s m n k)). alpha and beta are host values. Output is bit-identical to ozdgemm_dgemm for
 * the same inputs and options (NaN payloads aside). */
OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_reference(char transa, char transb, int64_t m,
                                                     int64_t n, int64_t k, double alpha,
                                                     const double* A, int64_t lda,
                                                     const double* B, int64_t ldb, double beta,
                                                     double* C, int64_t ldc,
                                                     ozdgemm_options_t options);

/* Complex C = alpha op(A) op(B) + beta C on device pointers, with the arguments of cublasZgemm
 * (interleaved cuDoubleComplex, column-major; op N, T or C = conjugate transpose).
 *
 * One real GEMM carries it: T = A' B*, A' = [Re op(A) | Im op(A)] (m x 2k), B* = [[Re op(B),
 * Im op(B)], [-Im op(B), Re op(B)]] (2k x 2n), run by the engine of ozdgemm_dgemm with alpha 1,
 * beta 0 and these options; then C = alpha (T_re + i T_im) + beta C, each complex product as
 * cuBLAS writes it (re = ar tr - ai ti, im = ar ti + ai tr), rounded per part (docs/complex.md).
 * - Bound: each part of T obeys ozdgemm_dgemm's bound for the depth-2k real product; with the
 *   certified default, |T - P| <= target (|A||B|)_ij + u |T| per part, |.| the complex modulus
 *   (sum_l |Re a||Re b| + |Im a||Im b| <= |a||b|). The epilogue adds (|ar| + |ai|) times that
 *   and its own rounding, at most 3u (|ar||tr| + |ai||ti| + |br||cr| + |bi||ci|) per part to
 *   first order.
 * - Stream, pointer mode, handle, thread safety, errors, BLAS semantics (alpha == 0 reads
 *   neither A nor B, also in device pointer mode; beta == 0 never reads C; k == 0 gives
 *   C = beta C; m == 0 or n == 0 returns at once) and Inf/NaN: as ozdgemm_dgemm, per real and
 *   imaginary part. A per-call choice that runs no s runs native cublasZgemm on the caller's
 *   handle, as ozdgemm_dgemm runs cublasDgemm.
 * - Workspace: the engine's for (m, 2n, 2k) plus A', B* and T (16 m k + 32 k n + 16 m n bytes),
 *   in the handle's grow-only workspace; nothing is allocated per call once it is large enough.
 * - Limits: m < 2^31 - 16, n and k < 2^30 - 8 (OZDGEMM_STATUS_INVALID_VALUE beyond); four real
 *   INT8 products per modulus (no 3-multiplication Karatsuba form). */
OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int64_t m, int64_t n,
                                           int64_t k, const cuDoubleComplex* alpha,
                                           const cuDoubleComplex* A, int64_t lda,
                                           const cuDoubleComplex* B, int64_t ldb,
                                           const cuDoubleComplex* beta, cuDoubleComplex* C,
                                           int64_t ldc, ozdgemm_options_t options);

/* ozdgemm_zgemm, and *num_moduli_used (if not null) receives the moduli count that ran, as
 * ozdgemm_dgemm_ex: 0 when the call ran native cublasZgemm; 0 on any error. The result is
 * bit-identical to ozdgemm_zgemm_reference with the same options. */
OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_ex(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n,
                                              int64_t k, const cuDoubleComplex* alpha,
                                              const cuDoubleComplex* A, int64_t lda,
                                              const cuDoubleComplex* B, int64_t ldb,
                                              const cuDoubleComplex* beta, cuDoubleComplex* C,
                                              int64_t ldc, ozdgemm_options_t options,
                                              int* num_moduli_used);

/* The same computation on host memory by the bit-exact CPU reference: the same packs, the real
 * reference on T, the same epilogue. Output is bit-identical to ozdgemm_zgemm for the same
 * inputs and options (NaN payloads aside), except where a per-call choice runs no s: there the
 * reference computes T in plain FP64, the GPU runs native cublasZgemm. */
OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_reference(char transa, char transb, int64_t m,
                                                     int64_t n, int64_t k, cuDoubleComplex alpha,
                                                     const cuDoubleComplex* A, int64_t lda,
                                                     const cuDoubleComplex* B, int64_t ldb,
                                                     cuDoubleComplex beta, cuDoubleComplex* C,
                                                     int64_t ldc, ozdgemm_options_t options);

/* Batched host references: batch_count independent products C_i = alpha op(A_i) op(B_i) +
 * beta C_i, each bit-identical to ozdgemm_dgemm_reference (ozdgemm_zgemm_reference) on matrix i
 * with the same options; a per-call choice of s is made per matrix, from that matrix's data.
 * - Strided forms: A_i = A + i stride_a (elements: doubles, or cuDoubleComplex values), likewise
 *   B_i and C_i, as cublasDgemmStridedBatched. A stride of 0 shares one operand between all
 *   products (a broadcast); the C_i must not overlap (else C is as if computed in order i).
 * - Pointer-array forms: A_i = A[i], B_i = B[i], C_i = C[i] (host arrays of host pointers).
 * - Every argument is checked before any C_i is written: batch_count < 0, a bad size,
 *   leading dimension, op or option, a null array, or a matrix outside the address space is
 *   OZDGEMM_STATUS_INVALID_VALUE and nothing is written. batch_count == 0, m == 0 or n == 0
 *   returns at once (the arrays unread). Scratch memory that cannot be had returns
 *   OZDGEMM_STATUS_ALLOC_FAILED; the C_i before the matrix that met it hold their results. */
OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_strided_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha, const double* A,
    int64_t lda, int64_t stride_a, const double* B, int64_t ldb, int64_t stride_b, double beta,
    double* C, int64_t ldc, int64_t stride_c, int64_t batch_count, ozdgemm_options_t options);

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
    const double* const A[], int64_t lda, const double* const B[], int64_t ldb, double beta,
    double* const C[], int64_t ldc, int64_t batch_count, ozdgemm_options_t options);

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_strided_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, cuDoubleComplex alpha,
    const cuDoubleComplex* A, int64_t lda, int64_t stride_a, const cuDoubleComplex* B,
    int64_t ldb, int64_t stride_b, cuDoubleComplex beta, cuDoubleComplex* C, int64_t ldc,
    int64_t stride_c, int64_t batch_count, ozdgemm_options_t options);

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_batched_reference(
    char transa, char transb, int64_t m, int64_t n, int64_t k, cuDoubleComplex alpha,
    const cuDoubleComplex* const A[], int64_t lda, const cuDoubleComplex* const B[], int64_t ldb,
    cuDoubleComplex beta, cuDoubleComplex* const C[], int64_t ldc, int64_t batch_count,
    ozdgemm_options_t options);

/* Batched forms on the GPU: batch_count products on device memory, each exactly
 * ozdgemm_dgemm (ozdgemm_zgemm) on matrix i with the same handle, scalars and options, enqueued
 * in order on the handle's stream; a per-call choice of s is made per matrix, from its data.
 * - Strided forms: A_i = A + i stride_a (elements), likewise B_i and C_i, as
 *   cublasDgemmStridedBatched; stride 0 broadcasts. Pointer-array forms: A_i = A[i] etc., where
 *   the arrays are in HOST memory (holding device pointers; cuBLAS's batched call takes device
 *   arrays, which the host cannot read without waiting).
 * - Checks as the references above, with cuBLAS's rules for the single call (null handle:
 *   OZDGEMM_STATUS_NOT_INITIALIZED); A and B are taken as read whatever alpha is. Nothing is
 *   enqueued on an invalid batch. An error at matrix i leaves the C_j, j < i, enqueued.
 * - A fixed num_moduli runs a strided batch of small matrices (real or complex) as one
 *   emulation per chunk of matrices (the same bits as one call per matrix); otherwise each
 *   matrix is its own emulation. On GPUs with strong FP64 small matrices in large batches are
 *   still faster with cuBLAS's batched routines (docs/batched.md). */
OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_strided_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda, int64_t stride_a,
    const double* B, int64_t ldb, int64_t stride_b, const double* beta, double* C, int64_t ldc,
    int64_t stride_c, int64_t batch_count, ozdgemm_options_t options);

OZDGEMM_API ozdgemm_status_t ozdgemm_dgemm_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const double* alpha, const double* const A[], int64_t lda,
    const double* const B[], int64_t ldb, const double* beta, double* const C[], int64_t ldc,
    int64_t batch_count, ozdgemm_options_t options);

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_strided_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int64_t lda,
    int64_t stride_a, const cuDoubleComplex* B, int64_t ldb, int64_t stride_b,
    const cuDoubleComplex* beta, cuDoubleComplex* C, int64_t ldc, int64_t stride_c,
    int64_t batch_count, ozdgemm_options_t options);

OZDGEMM_API ozdgemm_status_t ozdgemm_zgemm_batched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const cuDoubleComplex* alpha, const cuDoubleComplex* const A[],
    int64_t lda, const cuDoubleComplex* const B[], int64_t ldb, const cuDoubleComplex* beta,
    cuDoubleComplex* const C[], int64_t ldc, int64_t batch_count, ozdgemm_options_t options);

/* Frees what the library cached for `handle` (private handle, workspace). Call before
 * cublasDestroy(handle) once no ozdgemm work on it is pending; safe if nothing is cached. */
OZDGEMM_API void ozdgemm_release_handle(cublasHandle_t handle);

OZDGEMM_API const char* ozdgemm_status_string(ozdgemm_status_t status);

/* The cuBLAS status a cuBLAS call would have returned for this outcome. */
OZDGEMM_API cublasStatus_t ozdgemm_status_to_cublas(ozdgemm_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* OZDGEMM_OZDGEMM_H */
