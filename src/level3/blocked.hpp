// The Level-3 routines as GEMMs: recursive blocking of the triangle (SYRK, HERK, SYR2K, HER2K),
// of the symmetric operand (SYMM, HEMM) and of the triangular one (TRMM, TRSM). Each level
// halves the order of the structured matrix; its off-diagonal block is one or two GEMMs, its two
// diagonal blocks recurse, and a block the executor does not split runs its native routine.
// So the arithmetic is the executor's GEMM (emulated or not) and the native routine on small
// diagonal blocks; nothing else touches the data, and only what the routine may write is
// written (the referenced triangle of C; B of TRMM/TRSM).
//
// Accuracy. Every element of the result is the native routine's on a diagonal block plus GEMM
// updates whose error the GEMM bounds: an emulated GEMM at the certified default keeps within
// native DGEMM's bound (docs/accuracy.md), so each block's error is native's order. TRSM's
// updates feed the solve of the next block (docs/level3.md states the bound).
#pragma once

#include <cstdint>

#include "level3/level3_call.hpp"

namespace ozdgemm::detail {

// What the blocked routines run on. gemm: C = alpha op(A) op(B) + beta C, beta == 0 not
// reading C. splits: whether an off-diagonal GEMM of m x n x k is worth a level of blocking
// (big enough, and the GEMM would be emulated); when false the whole block runs natively.
template <class T>
class level3_executor {
 public:
  virtual ~level3_executor() = default;
  virtual void gemm(trans_kind ta, trans_kind tb, int64_t m, int64_t n, int64_t k, T alpha,
                    const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
                    int64_t ldc) = 0;
  virtual bool splits(int64_t order, int64_t m, int64_t n, int64_t k) = 0;
  virtual void native(const rank_k_call<T>& x) = 0;
  virtual void native(const symm_call<T>& x) = 0;
  virtual void native(const triangular_call<T>& x) = 0;
};

// The order of the first diagonal block when a block of order `order` splits.
inline int64_t first_half(int64_t order) { return order / 2; }

template <class T>
void blocked(const rank_k_call<T>& x, level3_executor<T>& ex) {
  const int64_t n1 = first_half(x.n), n2 = x.n - n1;
  const bool lower = x.uplo == uplo_kind::lower;
  if (x.n < 2 || x.k == 0 || !ex.splits(x.n, lower ? n2 : n1, lower ? n1 : n2, x.k)) {
    ex.native(x);
    return;
  }
  // op(X) = op(A) or op(B) has the rows of its first and second blocks at x1, x2; the
  // off-diagonal block of C is op(X)_r op(Y)_s^t: gemm(ta, tb) on the stored blocks.
  const trans_kind t = x.hermitian() ? trans_kind::c : trans_kind::t;
  const bool by_rows = x.trans == trans_kind::n;
  const trans_kind ta = by_rows ? trans_kind::n : t, tb = by_rows ? t : trans_kind::n;
  const auto second = [&](const T* p, int64_t ld) { return by_rows ? p + n1 : p + n1 * ld; };
  const T* a2 = second(x.a, x.lda);
  const T* b2 = x.has_b() ? second(x.b, x.ldb) : nullptr;

  rank_k_call<T> d = x;  // the diagonal blocks
  d.n = n1;
  blocked(d, ex);
  d.n = n2;
  d.a = a2;
  d.b = b2;
  d.c = x.c + n1 + n1 * x.ldc;
  blocked(d, ex);

  // Lower: C21 (n2 x n1) = alpha X2 Y1^t [+ alpha' Y2 X1^t] + beta C21; upper: C12 likewise.
  // (X = op(A); Y = op(A) for SYRK and HERK, op(B) otherwise.)
  const int64_t rows = lower ? n2 : n1, cols = lower ? n1 : n2;
  T* c = lower ? x.c + n1 : x.c + n1 * x.ldc;
  const T* a_r = lower ? a2 : x.a;  // the block of op(A) in C's block row
  const T* a_s = lower ? x.a : a2;  // and in its block column
  const T* b_r = lower ? b2 : x.b;
  const T* b_s = lower ? x.b : b2;
  if (!x.has_b()) {  // SYRK, HERK: op(A)_r op(A)_s^t
    ex.gemm(ta, tb, rows, cols, x.k, x.alpha, a_r, x.lda, a_s, x.lda, x.beta, c, x.ldc);
    return;
  }
  if (!x.two()) {  // SYRKX, HERKX: op(A)_r op(B)_s^t
    ex.gemm(ta, tb, rows, cols, x.k, x.alpha, a_r, x.lda, b_s, x.ldb, x.beta, c, x.ldc);
    return;
  }
  const T alpha2 = x.hermitian() ? conj_of(x.alpha) : x.alpha;
  ex.gemm(ta, tb, rows, cols, x.k, x.alpha, a_r, x.lda, b_s, x.ldb, x.beta, c, x.ldc);
  ex.gemm(ta, tb, rows, cols, x.k, alpha2, b_r, x.ldb, a_s, x.lda, T(1), c, x.ldc);
}

template <class T>
void blocked(const symm_call<T>& x, level3_executor<T>& ex) {
  const bool left = x.side == side_kind::left;
  const int64_t ka = left ? x.m : x.n, n1 = first_half(ka), n2 = ka - n1;
  const int64_t other = left ? x.n : x.m;
  if (ka < 2 || other == 0 || !ex.splits(ka, left ? n1 : x.m, left ? x.n : n1, n2)) {
    ex.native(x);
    return;
  }
  // The stored off-diagonal block and the op that makes it A21 or A12 (A12 = A21^t).
  const trans_kind t = x.hermitian ? trans_kind::c : trans_kind::t;
  const bool lower = x.uplo == uplo_kind::lower;
  const T* off = lower ? x.a + n1 : x.a + n1 * x.lda;
  const trans_kind op21 = lower ? trans_kind::n : t, op12 = lower ? t : trans_kind::n;
  // Blocks of B and C along A's order: rows (left) or columns (right).
  const auto second = [&](auto* p, int64_t ld) { return left ? p + n1 : p + n1 * ld; };
  const T* b2 = second(x.b, x.ldb);
  T* c2 = second(x.c, x.ldc);

  symm_call<T> d = x;
  (left ? d.m : d.n) = n1;
  blocked(d, ex);  // C1 = alpha A11 B1 + beta C1
  (left ? d.m : d.n) = n2;
  d.a = x.a + n1 + n1 * x.lda;
  d.b = b2;
  d.c = c2;
  blocked(d, ex);  // C2 = alpha A22 B2 + beta C2
  if (left) {      // C1 += alpha A12 B2, C2 += alpha A21 B1
    ex.gemm(op12, trans_kind::n, n1, x.n, n2, x.alpha, off, x.lda, b2, x.ldb, T(1), x.c, x.ldc);
    ex.gemm(op21, trans_kind::n, n2, x.n, n1, x.alpha, off, x.lda, x.b, x.ldb, T(1), c2, x.ldc);
  } else {  // C1 += alpha B2 A21, C2 += alpha B1 A12
    ex.gemm(trans_kind::n, op21, x.m, n1, n2, x.alpha, b2, x.ldb, off, x.lda, T(1), x.c, x.ldc);
    ex.gemm(trans_kind::n, op12, x.m, n2, n1, x.alpha, x.b, x.ldb, off, x.lda, T(1), c2, x.ldc);
  }
}

// TRMM and TRSM. With op(A) = [P11 P12; P21 P22] (one of P12, P21 zero), the stored
// off-diagonal block under op `trans` is op(A)'s nonzero off-diagonal block.
template <class T>
void blocked(const triangular_call<T>& x, level3_executor<T>& ex) {
  const bool left = x.side == side_kind::left;
  const int64_t ka = left ? x.m : x.n, n1 = first_half(ka), n2 = ka - n1;
  const int64_t other = left ? x.n : x.m;
  // The update's shape: (n1 or n2) x other x (n2 or n1) on the left, transposed on the right;
  // the larger of the two halves prices it.
  if (ka < 2 || other == 0 || x.alpha == T(0) ||
      !ex.splits(ka, left ? n2 : x.m, left ? x.n : n2, n1)) {
    ex.native(x);
    return;
  }
  const bool lower_op = (x.uplo == uplo_kind::lower) == (x.trans == trans_kind::n);
  const T* off = x.uplo == uplo_kind::lower ? x.a + n1 : x.a + n1 * x.lda;
  T* b2 = left ? x.b + n1 : x.b + n1 * x.ldb;

  triangular_call<T> d1 = x, d2 = x;  // the diagonal blocks on B1 and B2
  (left ? d1.m : d1.n) = n1;
  (left ? d2.m : d2.n) = n2;
  d2.a = x.a + n1 + n1 * x.lda;
  d2.b = b2;
  // The update reads one block of B (`from`) and adds into the other (`to`): op(A)'s nonzero
  // off-diagonal block P couples them. TRSM solves `from` first and updates `to` from the
  // solution; TRMM multiplies `to` first, updates it from `from` while that is still unchanged,
  // then multiplies `from`.
  const bool from_is_1 = lower_op == left;
  triangular_call<T>& from_block = from_is_1 ? d1 : d2;
  triangular_call<T>& to_block = from_is_1 ? d2 : d1;
  const T* from = from_is_1 ? x.b : b2;
  T* to = from_is_1 ? b2 : x.b;
  const int64_t n_to = from_is_1 ? n2 : n1, n_from = from_is_1 ? n1 : n2;
  // B_to = alpha_p P B_from + beta_p B_to (left), B_from P on the right.
  const auto update = [&](T alpha_p, T beta_p) {
    if (left)
      ex.gemm(x.trans, trans_kind::n, n_to, x.n, n_from, alpha_p, off, x.lda, from, x.ldb, beta_p,
              to, x.ldb);
    else
      ex.gemm(trans_kind::n, x.trans, x.m, n_to, n_from, alpha_p, from, x.ldb, off, x.lda, beta_p,
              to, x.ldb);
  };
  if (x.solve) {  // X_from; B_to = alpha B_to - P X_from; X_to from that with alpha 1
    blocked(from_block, ex);
    update(T(-1), x.alpha);
    to_block.alpha = T(1);
    blocked(to_block, ex);
  } else {  // B_to = alpha op(A_to) B_to + alpha P B_from; B_from = alpha op(A_from) B_from
    blocked(to_block, ex);
    update(x.alpha, T(1));
    blocked(from_block, ex);
  }
}

}  // namespace ozdgemm::detail
