// Auto mode's price of a Level-3 call (docs/level3.md, "When a call is emulated"): the blocked
// form of blocked.hpp as the model sees it, against the native routine on the whole call. The
// executors split a block when its off-diagonal GEMM would be emulated; that alone does not make
// the call faster, since the diagonal blocks then run natively at a smaller, less efficient size
// and SYRK or TRSM does half a GEMM's work natively. So before a call splits, auto mode prices
// it here and keeps it native unless the blocked form is predicted faster by the margin.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "core/gemm_problem.hpp"
#include "level3/blocked.hpp"

namespace ozdgemm::detail {

// What the route of one GEMM of a shape would be (a GEMM block, or a GEMM of the work of a
// native block): declined (the reason) or emulated, and the model's times of both, in ms.
struct gemm_quote {
  const char* declined;
  double native_ms, emulated_ms;
};
using gemm_quoter = std::function<gemm_quote(int64_t m, int64_t n, int64_t k)>;

// The GEMM whose multiply-adds a call's native routine is priced from (C's or B's shape and the
// depth of the products: also the shape of the call's decision line), and the routine's share of
// that work: SYRK computes one triangle (n (n + 1) / 2 of the n^2 elements), SYR2K two products
// of it; TRMM and TRSM multiply by a triangle.
template <class T>
void gemm_shape(const rank_k_call<T>& x, int64_t* m, int64_t* n, int64_t* k) {
  *m = x.n, *n = x.n, *k = x.k;
}
template <class Call>
void gemm_shape(const Call& x, int64_t* m, int64_t* n, int64_t* k) {
  *m = x.m, *n = x.n, *k = x.side == side_kind::left ? x.m : x.n;
}
template <class T>
double native_share(const rank_k_call<T>& x) {
  const double triangle = x.n > 0 ? (x.n + 1.0) / (2.0 * x.n) : 0.5;
  return x.two() ? 2 * triangle : triangle;
}
template <class T>
double native_share(const symm_call<T>&) {
  return 1.0;
}
template <class T>
double native_share(const triangular_call<T>& x) {
  const int64_t ka = x.side == side_kind::left ? x.m : x.n;
  return ka > 0 ? (ka + 1.0) / (2.0 * ka) : 0.5;
}

// How fast each native routine does its share of the work, as a fraction of the native GEMM's
// rate on the same GPU (1: GEMM's rate). cuBLAS's SYRK and TRSM run well below it (docs/level3.md,
// "When a call is emulated"); a routine priced at GEMM's rate is predicted faster than it is, which
// keeps calls native that the blocked form would speed up. level3_native_efficiency
// (dispatch/level3_efficiency.hpp) has the measured values; the default prices every routine at
// GEMM's rate, which favours native.
struct native_efficiency {
  double syrk = 1.0;   // real SYRK and SYRKX
  double trsm = 1.0;   // real TRSM
  double herk = 1.0;   // complex SYRK, HERK, SYRKX, HERKX
  double ztrsm = 1.0;  // complex TRSM
};

template <class T>
double efficiency_of(const rank_k_call<T>& x, const native_efficiency& e) {
  if (x.two()) return 1.0;  // SYR2K, HER2K: not measured
  return std::is_same_v<T, double> ? e.syrk : e.herk;
}
template <class T>
double efficiency_of(const symm_call<T>&, const native_efficiency&) {
  return 1.0;  // not measured
}
template <class T>
double efficiency_of(const triangular_call<T>& x, const native_efficiency& e) {
  if (!x.solve) return 1.0;  // TRMM: not measured
  return std::is_same_v<T, double> ? e.trsm : e.ztrsm;
}

// The native routine's predicted time on call x, in ms.
template <class Call>
double native_ms(const Call& x, const gemm_quoter& quote, const native_efficiency& e = {}) {
  int64_t m = 0, n = 0, k = 0;
  gemm_shape(x, &m, &n, &k);
  return native_share(x) * quote(m, n, k).native_ms / efficiency_of(x, e);
}

// The share of an n x n GEMM's products that a triangle of C computes when the engine takes it in
// blocks of `rows` rows (engine/emulate.hpp's device_gemm::part): each block multiplies its rows
// by the columns up to its last row, about (1 + rows / n) / 2 of the square.
inline double triangle_share(int64_t n, int64_t rows) {
  if (n <= 0 || rows <= 0) return 1.0;
  double work = 0.0;
  for (int64_t i0 = 0; i0 < n; i0 += rows) {
    const int64_t r = n - i0 < rows ? n - i0 : rows;
    work += static_cast<double>(r) * static_cast<double>(i0 + r);
  }
  return work / (static_cast<double>(n) * static_cast<double>(n));
}

// A quoter that asks `quote` once per shape: the blocked forms of one call at every block size
// repeat their shapes level by level.
class memo_quoter {
 public:
  explicit memo_quoter(gemm_quoter quote) : quote_(std::move(quote)) {}
  gemm_quote operator()(int64_t m, int64_t n, int64_t k) {
    for (const seen& s : seen_)
      if (s.m == m && s.n == n && s.k == k) return s.q;
    seen_.push_back({m, n, k, quote_(m, n, k)});
    return seen_.back().q;
  }

 private:
  struct seen {
    int64_t m, n, k;
    gemm_quote q;
  };
  gemm_quoter quote_;
  std::vector<seen> seen_;
};

// Runs nothing: adds up what blocked() would run, each GEMM at its route's time and each
// diagonal block at the native routine's. Splits as the executors do (a block above `block`
// whose off-diagonal GEMM would be emulated).
template <class T>
class pricing_executor final : public level3_executor<T> {
 public:
  pricing_executor(int64_t block, const gemm_quoter& quote, const native_efficiency& e)
      : block_(block), quote_(quote), efficiency_(e) {}

  void gemm(trans_kind, trans_kind, int64_t m, int64_t n, int64_t k, T, const T*, int64_t, const T*,
            int64_t, T, T*, int64_t) override {
    const gemm_quote q = quote_(m, n, k);
    ms_ += q.declined != nullptr ? q.native_ms : q.emulated_ms;
  }
  bool splits(int64_t order, int64_t m, int64_t n, int64_t k) override {
    const char* why = order <= block_ ? "below OZDGEMM_LEVEL3_BLOCK" : quote_(m, n, k).declined;
    if (why == nullptr) split_ = true;
    if (!split_) why_ = why;
    return why == nullptr;
  }
  void native(const rank_k_call<T>& x) override { add(x); }
  void native(const symm_call<T>& x) override { add(x); }
  void native(const triangular_call<T>& x) override { add(x); }

  bool split() const { return split_; }
  const char* why() const { return why_; }
  double ms() const { return ms_; }

 private:
  template <class Call>
  void add(const Call& x) {
    if (split_) ms_ += native_ms(x, quote_, efficiency_);
  }

  int64_t block_;
  const gemm_quoter& quote_;
  native_efficiency efficiency_;
  bool split_ = false;
  const char* why_ = "small or trivial call";
  double ms_ = 0.0;
};

// A call as auto mode prices it.
struct level3_price {
  bool splits;      // some block would be emulated (the triangle: the square's GEMM would be)
  const char* why;  // when not: the first block's reason
  double blocked_ms, native_ms;
  int64_t block;  // the block order priced
  // The triangle in one emulation (price_triangle) rather than the blocked form; block 0.
  bool triangle = false;
  // The blocked form is predicted faster than the native routine by `margin` (a fraction, as
  // OZDGEMM_AUTO_MARGIN).
  bool pays(double margin) const { return splits && blocked_ms < (1.0 - margin) * native_ms; }
};

template <class Call>
level3_price price_blocked(const Call& x, int64_t block, const gemm_quoter& quote,
                           const native_efficiency& e = {}) {
  using T = std::remove_const_t<std::remove_pointer_t<decltype(x.a)>>;
  pricing_executor<T> ex(block, quote, e);
  blocked(x, ex);
  return {ex.split(), ex.why(), ex.ms(), native_ms(x, quote, e), block};
}

// SYRK, HERK or SYRKX as one emulation of its triangle (docs/level3.md, "One emulation of the
// triangle"): the triangle's share of the square's emulated GEMM against the native routine; it
// splits where the square's GEMM would be emulated. No native block runs.
template <class T>
level3_price price_triangle(const rank_k_call<T>& x, const gemm_quoter& quote,
                            const native_efficiency& e = {}) {
  const gemm_quote q = quote(x.n, x.n, x.k);
  level3_price p{q.declined == nullptr, q.declined,
                 q.emulated_ms * triangle_share(x.n, triangle_rows(x.n)), native_ms(x, quote, e),
                 0};
  p.triangle = true;
  return p;
}

// The block orders auto mode chooses from when OZDGEMM_LEVEL3_BLOCK is not set, and the one other
// modes use. Small blocks emulate more of the work and run more, smaller GEMMs: where FP64 is
// weak the native diagonal blocks would otherwise bound the call (a 256 block leaves 1/64 of a
// SYRK of order 16384 native, a fifth of the blocked time where emulation is 15x faster). Where
// FP64 is strong the prices of the large orders tie (native blocks at the GEMM rate, GEMMs of
// depth 2048 barely gaining) and the largest wins. Forced on an H100 at order 16384 (bench/
// results/level3/README.md): block 4096 ran DTRSM 1.21x native (2048: 1.14x) and DSYRK 1.48x
// (1.47x); 8192 ran DSYRK at 1.31x and ZHERK at 1.26x (4096: 1.36x), so the orders stop at 4096.
inline constexpr int64_t kLevel3Blocks[] = {64, 128, 256, 512, 1024, 2048, 4096};
inline constexpr int64_t kDefaultLevel3Block = 256;

// The cheapest blocked form over `blocks` (ties: the larger block), each shape quoted once; when
// none splits, the first one's answer.
template <class Call, class Blocks>
level3_price cheapest_blocked(const Call& x, const Blocks& blocks, const gemm_quoter& quote,
                              const native_efficiency& e = {}) {
  memo_quoter memo(quote);
  const gemm_quoter once = [&memo](int64_t m, int64_t n, int64_t k) { return memo(m, n, k); };
  level3_price best{};
  bool first = true;
  for (const int64_t b : blocks) {
    const level3_price p = price_blocked(x, b, once, e);
    if (first || (p.splits && (!best.splits || p.blocked_ms <= best.blocked_ms))) best = p;
    first = false;
  }
  return best;
}

// The cheapest form of a call: the blocked form's cheapest order, or, where `triangle` says the
// call may run as one emulation of its triangle (a device SYRK, HERK or SYRKX the engine takes:
// the caller's rule), the triangle when that splits and costs no more (`prefer_triangle`:
// whenever it splits).
template <class Call, class Blocks>
level3_price cheapest_form(const Call& x, const Blocks& blocks, const gemm_quoter& quote,
                           const native_efficiency& e, bool triangle,
                           bool prefer_triangle = false) {
  if constexpr (std::is_same_v<Call, rank_k_call<double>> ||
                std::is_same_v<Call, rank_k_call<std::complex<double>>>) {
    if (triangle) {
      const level3_price t = price_triangle(x, quote, e);
      if (t.splits && prefer_triangle) return t;
      const level3_price p = cheapest_blocked(x, blocks, quote, e);
      return t.splits && (!p.splits || t.blocked_ms <= p.blocked_ms) ? t : p;
    }
  }
  return cheapest_blocked(x, blocks, quote, e);
}

}  // namespace ozdgemm::detail
