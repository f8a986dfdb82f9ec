// One DGEMM call, C = alpha op(A) op(B) + beta C, stripped of any calling convention.
//
// The Ozaki stages see each operand as `nvec` vectors of length k: the rows of op(A) and
// the columns of op(B). An operand is either k-contiguous (element l of vector v at
// ptr[v ld + l]: op(A) = A^T, op(B) = B) or vector-contiguous (ptr[l ld + v]: op(A) = A,
// op(B) = B^T). For real data op C equals op T.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace ozdgemm::detail {

enum class op_kind { n, t };

struct operand {
  const double* ptr;
  int64_t ld;
  bool k_contiguous;

  OZDGEMM_HD double at(int64_t v, int64_t l) const {
    return k_contiguous ? ptr[v * ld + l] : ptr[l * ld + v];
  }
  // The same operand from vector v0 on (vector v of the result is vector v0 + v of this).
  operand from_vector(int64_t v0) const {
    return operand{k_contiguous ? ptr + v0 * ld : ptr + v0, ld, k_contiguous};
  }
};

// The part of C a call computes: all of it, or one triangle with the diagonal (SYRK, HERK and
// their kin as one emulation, docs/level3.md); nothing outside the part is read or written.
enum class c_part : int { all = 0, lower = 1, upper = 2 };

// Whether element (i + d, j) of C lies outside `part` (d: a block's first row minus its first
// column, so that i and j may count from the block's corner).
OZDGEMM_HD bool outside_part(int part, int64_t i, int64_t j, int64_t d) {
  return part == 1 ? i + d < j : part == 2 ? i + d > j : false;
}

// Rows per block of C when a call of order n computes one triangle (engine/layout.hpp's
// part_row_block unless OZDGEMM_ROW_BLOCK is set): n / 16, a multiple of 16, at least 512, so
// that the blocks' INT8 GEMMs do about 53% of the square's products at large n.
inline int64_t triangle_rows(int64_t n) {
  const int64_t rows = ((n + 15) / 16 + 15) / 16 * 16;
  return rows > 512 ? rows : 512;
}

// The spellings of a transpose flag that reach the library: a BLAS TRANS character as LSAME
// reads it (case-insensitive, first character only), a cublasOperation_t, a CBLAS_TRANSPOSE.
enum class op_spelling { blas_char, cublas, cblas };

// The one parser of transpose flags. C (conjugate transpose) is T for real data; complex calls
// also ask for `conjugate` (true for C only). False for anything else (the caller's error,
// reported by its own rules).
inline bool parse_op(int code, op_spelling spelling, op_kind* out, bool* conjugate = nullptr) {
  // The spelling's codes of N, T and C.
  struct codes {
    int n, t, c;
  };
  codes k{'N', 'T', 'C'};
  if (spelling == op_spelling::cublas) k = {0, 1, 2};       // CUBLAS_OP_N, _T, _C
  if (spelling == op_spelling::cblas) k = {111, 112, 113};  // CblasNoTrans, _Trans, _ConjTrans
  if (spelling == op_spelling::blas_char && code >= 'a' && code <= 'z') code -= 'a' - 'A';
  if (code != k.n && code != k.t && code != k.c) return false;
  *out = code == k.n ? op_kind::n : op_kind::t;
  if (conjugate != nullptr) *conjugate = code == k.c;
  return true;
}

// BLAS's shape rules (reference dgemm.f, cublasDgemm): sizes >= 0, and each leading dimension
// at least max(1, rows of the matrix as stored).
inline bool valid_gemm_shape(op_kind oa, op_kind ob, int64_t m, int64_t n, int64_t k, int64_t lda,
                             int64_t ldb, int64_t ldc) {
  if (m < 0 || n < 0 || k < 0) return false;
  const int64_t rows_a = oa == op_kind::n ? m : k;
  const int64_t rows_b = ob == op_kind::n ? k : n;
  const auto at_least_one = [](int64_t x) { return x > 1 ? x : int64_t{1}; };
  return lda >= at_least_one(rows_a) && ldb >= at_least_one(rows_b) && ldc >= at_least_one(m);
}

// One operand as the per-vector kernels see it: nvec vectors of length k, alpha in device
// pointer mode (alpha_dev; null in host pointer mode), and the padded sizes of its INT8 planes
// ([nvec_pad][k_pad]; only the plane writers read them).
struct operand_vectors {
  operand x;
  int64_t nvec, k;
  const double* alpha_dev;
  int64_t nvec_pad = 0, k_pad = 0;
  // The k of each vector that plane writers write (0: k_pad), at the row stride k_pad: a complex
  // call's Karatsuba form writes only the first half of B*'s columns (engine/pipeline.cpp).
  int64_t k_written = 0;
  // A batch of `batch` operands of one shape (engine/batched_emulate.hpp): operand i's vectors at
  // x.ptr + i batch_stride elements, its per-vector entries (statistics, exponents) at i nvec + v,
  // its plane rows at i planes nvec_pad k_pad + v k_pad, planes [batch][planes][nvec_pad][k_pad]
  // (plane t of operand i at (i planes + t) nvec_pad k_pad), so that operand i's planes are laid
  // out as one call's. 1: one operand, as every single call has.
  int64_t batch = 1, batch_stride = 0;
};

inline operand operand_a(op_kind op, const double* a, int64_t lda) {
  return operand{a, lda, op == op_kind::t};
}
inline operand operand_b(op_kind op, const double* b, int64_t ldb) {
  return operand{b, ldb, op == op_kind::n};
}

struct gemm_problem {
  int64_t m, n, k;
  operand a, b;  // rows of op(A) (m vectors), columns of op(B) (n vectors)
  double* c;
  int64_t ldc;
};

// Exactness of the INT8 GEMMs: residues satisfy |r| <= 128, so one product term is at most
// 2^14 and a block of kKBlock terms plus a carried residue (< 256) stays below
// 2^31 - 2^15, the range product_residue() accepts. Longer k is split into such blocks,
// and the INT32 sum is reduced mod m_t between blocks (never overflow, then reduce).
inline constexpr int64_t kKBlock = 131056;  // 2^17 - 16, a multiple of 16
static_assert(kKBlock * 16384 + 255 < (int64_t{1} << 31) - (1 << 15), "k-block too long");

// INT8 GEMM operands are padded to multiples of 16 so every plane and leading dimension
// meets the tensor-core alignment rules; the padding holds zeros.
inline constexpr int64_t kPad = 16;
inline int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The largest m, n, k the GPU path takes: its INT8 GEMMs are cuBLAS calls with 32-bit
// dimensions, after padding to kPad. A complex call's n and k get half (rounded down to kPad):
// its embedding has 2n' columns and depth 2k', n' and k' rounded up to kPad.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1 - kPad;
inline constexpr int64_t kMaxHalfDim = kMaxDim / 2 / kPad * kPad;
static_assert(2 * kMaxHalfDim <= kMaxDim, "the embedding of the largest n and k fits");
inline bool fits_gpu_path(int64_t m, int64_t n, int64_t k, bool complex) {
  const int64_t nk = complex ? kMaxHalfDim : kMaxDim;
  return m <= kMaxDim && n <= nk && k <= nk;
}

}  // namespace ozdgemm::detail
