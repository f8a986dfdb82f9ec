// Complex GEMM, C = alpha op(A) op(B) + beta C on interleaved (re, im) column-major data, as ONE
// real GEMM that the real engine runs (docs/complex.md), with the halves k' = round_up(k, 16)
// and n' = round_up(n, 16):
//   A' = [Re op(A) 0 | Im op(A) 0]                      m x 2k', column-major, ld m
//   B* = [[Re op(B), Im op(B)], [-Im op(B), Re op(B)]]  2k' x 2n', column-major, ld 2k', each
//                                                       quarter k x n padded with zeros to k' x n'
//   T  = A' B*                                          m x 2n': T[:, j] = Re(op(A) op(B))_j,
//                                                       T[:, n' + j] = Im(op(A) op(B))_j
// then C = alpha (T_re + i T_im) + beta C. The zero padding changes no sum; it puts Im op(A) and
// the second half of B*'s columns on the engine's 16-element boundary, so that the Karatsuba
// form (engine/complex_gemm.hpp) can multiply the halves of the residue planes as matrices of
// their own. The packing and the epilogue below are shared by the kernels
// (kernels/complex_pack.cu) and the host reference (reference/complex_reference.cpp), so the
// bits agree.
//
// The scaling needs nothing special: row i of A' holds Re and Im of row i of op(A), so both
// share one exponent, and columns j and n' + j of B* hold the same magnitudes, so they get the
// same exponent. An Inf or NaN in row i of op(A) (column j of op(B)) lands in row i of A'
// (columns j and n' + j of B*), so the engine recomputes every element of T it reaches as a
// plain dot product over the 2k' terms {Re a Re b, -Im a Im b} (resp. {Re a Im b, Im a Re b})
// and zeros: the terms of a naive complex loop, whose class (NaN, +-Inf) depends on that set only.
#pragma once

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "core/hd.hpp"

namespace ozdgemm::detail {

struct complex_value {
  double re, im;
};

OZDGEMM_HD bool is_zero(complex_value z) { return z.re == 0.0 && z.im == 0.0; }

// alpha or beta of a complex call as the handle's pointer mode gives it (core/scalar.hpp's
// complex twin): a host value, or a device pointer to a cuDoubleComplex that only kernels
// dereference.
struct complex_scalar_arg {
  const double* dev;  // non-null in device pointer mode: re at dev[0], im at dev[1]
  complex_value host;

  OZDGEMM_HD complex_value get() const {
#if defined(__CUDA_ARCH__)
    return dev != nullptr ? complex_value{dev[0], dev[1]} : host;
#else
    return host;
#endif
  }
};

// op(X) of an interleaved complex matrix seen as vectors of length k (core/gemm_problem.hpp's
// operand): ld counts complex elements; `conjugate` for op C.
struct complex_operand {
  const double* ptr;
  int64_t ld;
  bool k_contiguous;
  bool conjugate;

  OZDGEMM_HD complex_value at(int64_t v, int64_t l) const {
    const double* e = ptr + 2 * (k_contiguous ? v * ld + l : l * ld + v);
    return complex_value{e[0], conjugate ? -e[1] : e[1]};
  }
};

inline complex_operand complex_operand_a(op_kind op, bool conjugate, const double* a, int64_t lda) {
  return complex_operand{a, lda, op == op_kind::t, conjugate};
}
inline complex_operand complex_operand_b(op_kind op, bool conjugate, const double* b, int64_t ldb) {
  return complex_operand{b, ldb, op == op_kind::n, conjugate};
}

// One complex call, stripped of any calling convention (gemm_problem's twin).
struct complex_problem {
  int64_t m, n, k;
  complex_operand a, b;  // rows of op(A) (m vectors), columns of op(B) (n vectors)
  double* c;             // interleaved
  int64_t ldc;           // in complex elements
};

// k' or n': a half of the embedding, x rounded up to the engine's padding (kPad = 16).
OZDGEMM_HD int64_t embedding_half(int64_t x) { return (x + kPad - 1) / kPad * kPad; }

// The real problem T = A' B* on the packed buffers; callers have checked that 2k' and 2n' fit.
inline gemm_problem embedded_problem(const complex_problem& p, const double* a_pack,
                                     const double* b_pack, double* t) {
  const int64_t kh = embedding_half(p.k), nh = embedding_half(p.n);
  return gemm_problem{p.m,
                      2 * nh,
                      2 * kh,
                      operand_a(op_kind::n, a_pack, p.m),
                      operand_b(op_kind::n, b_pack, 2 * kh),
                      t,
                      p.m};
}

// Element (i, l) of A', l < k' (its real part in column l, its imaginary part in column k' + l):
// op(A)'s element for l < k, zero in the padding. `zero`: alpha == 0 in device pointer mode,
// where A must not be read: zeros instead.
OZDGEMM_HD void pack_a_element(const complex_operand& a, int64_t m, int64_t k, int64_t i, int64_t l,
                               bool zero, double* a_pack) {
  const int64_t kh = embedding_half(k);
  const complex_value z = zero || l >= k ? complex_value{0.0, 0.0} : a.at(i, l);
  a_pack[l * m + i] = z.re;
  a_pack[(kh + l) * m + i] = z.im;
}

// Element (l, j) of op(B), l < k', j < n' (zero in the padding), into the four places of B* it
// fills: column j gets (Re, -Im) at rows l and k' + l, column n' + j gets (Im, Re).
OZDGEMM_HD void pack_b_element(const complex_operand& b, int64_t n, int64_t k, int64_t j, int64_t l,
                               bool zero, double* b_pack) {
  const int64_t kh = embedding_half(k), nh = embedding_half(n);
  const complex_value z = zero || l >= k || j >= n ? complex_value{0.0, 0.0} : b.at(j, l);
  double* re_col = b_pack + j * 2 * kh;
  double* im_col = b_pack + (nh + j) * 2 * kh;
  re_col[l] = z.re;
  re_col[kh + l] = -z.im;
  im_col[l] = z.im;
  im_col[kh + l] = z.re;
}

// The column of B* that holds column j's first half again, as its second half, in magnitude:
// pack_b_element writes Re at (l, j) and (k' + l, n' + j), Im at (l, n' + j) and (k' + l, j).
// The Karatsuba form's residue pass reads the first halves only and writes each band code also
// at (k' + l, embedding_partner(j)) (launch_residues_and_bands' mirror). Padding columns past
// 2n' are their own partners (all zero).
OZDGEMM_HD int64_t embedding_partner(int64_t j, int64_t nh) {
  return j < nh ? j + nh : j < 2 * nh ? j - nh : j;
}

// x y written out as cuBLAS's complex multiply (re = xr yr - xi yi, im = xr yi + xi yr), one
// product rounded and one fma per part, with the explicit helpers so that neither compiler
// contracts differently.
OZDGEMM_HD complex_value complex_mul_rn(complex_value x, complex_value y) {
  return complex_value{fma_rn(x.re, y.re, -mul_rn(x.im, y.im)),
                       fma_rn(x.re, y.im, mul_rn(x.im, y.re))};
}

// One element of C = alpha (t_re + i t_im) + beta c with BLAS semantics: alpha == 0 reads
// neither t_re nor t_im (T may not exist), beta == 0 does not read c (interleaved re, im):
//   alpha == 0, beta == 0: 0;   alpha == 0: RN(beta c);   beta == 0: RN(alpha t);
//   otherwise: RN(alpha t) + RN(beta c), each part added once more in round to nearest.
// Per part, the rounding adds at most u |ar tr| + u (2 + u) |ai ti| (likewise for beta c) and u
// times the result (docs/complex.md).
OZDGEMM_HD complex_value complex_epilogue(const double* t_re, const double* t_im,
                                          complex_value alpha, complex_value beta,
                                          const double* c) {
  const bool beta_zero = is_zero(beta);
  if (is_zero(alpha)) {
    if (beta_zero) return complex_value{0.0, 0.0};
    return complex_mul_rn(beta, complex_value{c[0], c[1]});
  }
  const complex_value at = complex_mul_rn(alpha, complex_value{*t_re, *t_im});
  if (beta_zero) return at;
  const complex_value bc = complex_mul_rn(beta, complex_value{c[0], c[1]});
  return complex_value{add_rn(at.re, bc.re), add_rn(at.im, bc.im)};
}

}  // namespace ozdgemm::detail
