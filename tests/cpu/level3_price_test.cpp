// Auto mode's price of a Level-3 call (src/level3/priced.hpp): that it adds up exactly what the
// blocked form runs, for every routine and combination; that the whole call stays native where
// the blocked form does not pay; and the predictions per routine on the GPUs of the published
// table, which docs/level3.md quotes (the table there must be the model's).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/cpu_test_util.hpp"
#include "cpu/level3_definitions.hpp"
#include "dispatch/decision.hpp"
#include "dispatch/gpu_rates.hpp"
#include "dispatch/level3_efficiency.hpp"
#include "dispatch/performance_model.hpp"
#include "engine/complex_gemm.hpp"
#include "interpose/level3_model.hpp"
#include "level3/priced.hpp"

namespace ozdgemm::test {
namespace {

using detail::gemm_quote;
using detail::gemm_quoter;
using detail::level3_executor;

// A made-up GPU: GEMMs of at least 64 in every dimension are emulated at a quarter of the native
// time, one multiply-add per unit.
gemm_quote quarter(int64_t m, int64_t n, int64_t k) {
  const double native = static_cast<double>(m) * n * k;
  return {std::min({m, n, k}) < 64 ? "small" : nullptr, native, native / 4};
}

// Splits as the executors do with `quote`, and records what would run: the quote's time of each
// GEMM, the native routine's of each diagonal block (with the pricing's own rule).
template <class T>
class recording_executor final : public level3_executor<T> {
 public:
  recording_executor(int64_t block, gemm_quoter quote) : block_(block), quote_(std::move(quote)) {}
  void gemm(trans_kind, trans_kind, int64_t m, int64_t n, int64_t k, T, const T*, int64_t, const T*,
            int64_t, T, T*, int64_t) override {
    const gemm_quote q = quote_(m, n, k);
    ms += q.declined != nullptr ? q.native_ms : q.emulated_ms;
    ++gemms;
  }
  bool splits(int64_t order, int64_t m, int64_t n, int64_t k) override {
    const bool s = order > block_ && quote_(m, n, k).declined == nullptr;
    split = split || s;
    return s;
  }
  void native(const rank_k_call<T>& x) override { add(x); }
  void native(const symm_call<T>& x) override { add(x); }
  void native(const triangular_call<T>& x) override { add(x); }
  double ms = 0;
  int gemms = 0;
  bool split = false;

 private:
  template <class Call>
  void add(const Call& x) {
    if (split) ms += detail::native_ms(x, quote_);
  }
  int64_t block_;
  gemm_quoter quote_;
};

template <class Call>
void expect_price_of_what_runs(const Call& x, int64_t block) {
  using T = std::remove_const_t<std::remove_pointer_t<decltype(x.a)>>;
  recording_executor<T> rec(block, quarter);
  detail::blocked(x, rec);
  const detail::level3_price p = detail::price_blocked(x, block, quarter);
  EXPECT_EQ(p.splits, rec.split);
  EXPECT_DOUBLE_EQ(p.blocked_ms, rec.ms);
  EXPECT_DOUBLE_EQ(p.native_ms, detail::native_ms(x, gemm_quoter(quarter)));
  if (rec.split) {
    EXPECT_GT(rec.gemms, 0);
    EXPECT_EQ(p.why, std::string("small or trivial call"));
  } else {
    EXPECT_EQ(p.blocked_ms, 0.0);
  }
}

// Pointers into one buffer big enough for every operand (blocked() only offsets them).
template <class T>
T* buffer() {
  static std::vector<T> b(1 << 20);
  return b.data();
}

// C = A A^T + 0 C, lower, of order n and depth k, on the buffer p.
rank_k_call<double> syrk_lower(double* p, int64_t n, int64_t k) {
  return rank_k_call<double>{
      rank_k_kind::syrk, uplo_kind::lower, trans_kind::n, n, k, 1.0, p, n, nullptr, 0, 0.0, p, n};
}

template <class T>
void check_every_combination() {
  T* p = buffer<T>();
  for (int64_t n : {1, 63, 64, 65, 200, 511, 1000})
    for (int64_t k : {0, 64, 300}) {
      for (rank_k_kind kind : {rank_k_kind::syrk, rank_k_kind::herk, rank_k_kind::syr2k,
                               rank_k_kind::her2k, rank_k_kind::syrkx, rank_k_kind::herkx})
        for (uplo_kind u : {uplo_kind::lower, uplo_kind::upper})
          for (trans_kind t : {trans_kind::n, trans_kind::t}) {
            SCOPED_TRACE(testing::Message() << "rank-k n " << n << " k " << k);
            const rank_k_call<T> x{kind, u, t, n, k, T(1), p, n + k, p, n + k, T(1), p, n};
            expect_price_of_what_runs(x, 64);
          }
      for (side_kind s : {side_kind::left, side_kind::right})
        for (uplo_kind u : {uplo_kind::lower, uplo_kind::upper}) {
          SCOPED_TRACE(testing::Message() << "m " << n << " n " << k);
          const symm_call<T> y{false, s, u, n, k, T(1), p, n + k, p, n, T(1), p, n};
          expect_price_of_what_runs(y, 64);
          for (trans_kind t : {trans_kind::n, trans_kind::t})
            for (bool solve : {false, true}) {
              const triangular_call<T> z{solve, s,     u, t, diag_kind::non_unit, n, k, T(2),
                                         p,     n + k, p, n};
              expect_price_of_what_runs(z, 64);
            }
        }
    }
}

TEST(Level3Price, AddsUpWhatTheBlockedFormRunsReal) { check_every_combination<double>(); }
TEST(Level3Price, AddsUpWhatTheBlockedFormRunsComplex) { check_every_combination<zd>(); }

// SYRK of order 256, depth 100, blocks of 64: one 128 x 128 GEMM and two 64 x 64 ones at a
// quarter of their native time, four native SYRKs of order 64; native: one SYRK of order 256.
TEST(Level3Price, SyrkByHand) {
  double* p = buffer<double>();
  const rank_k_call<double> x = syrk_lower(p, 256, 100);
  const detail::level3_price got = detail::price_blocked(x, 64, quarter);
  const double gemms = (128.0 * 128 * 100 + 2 * 64.0 * 64 * 100) / 4;
  const double diagonal = 4 * (65.0 / 128) * 64 * 64 * 100;
  EXPECT_TRUE(got.splits);
  EXPECT_DOUBLE_EQ(got.blocked_ms, gemms + diagonal);
  EXPECT_DOUBLE_EQ(got.native_ms, 257.0 / 512 * 256 * 256 * 100);
  EXPECT_TRUE(got.pays(0.05));  // 0.64 of native
  // Alpha = 0 TRSM, and a call whose first GEMM is declined, do not split.
  const triangular_call<double> z{true,
                                  side_kind::left,
                                  uplo_kind::lower,
                                  trans_kind::n,
                                  diag_kind::unit,
                                  256,
                                  100,
                                  0.0,
                                  p,
                                  256,
                                  p,
                                  256};
  EXPECT_FALSE(detail::price_blocked(z, 64, quarter).splits);
  const rank_k_call<double> thin = syrk_lower(p, 256, 32);
  const detail::level3_price t = detail::price_blocked(thin, 64, quarter);
  EXPECT_FALSE(t.splits);
  EXPECT_STREQ(t.why, "small");
  EXPECT_FALSE(t.pays(0.0));
}

// GEMM blocks emulated only 3% faster than native: the diagonal blocks' native share does not
// change, so the call as a whole gains under the 5% margin and stays native.
// The triangle's share counted element by element: the columns each block of rows reaches
// (lower: up to its last row) over the square; one block is the square, and at 16 blocks of
// 1024 (order 16384, engine/layout.hpp's part_row_block) it is 136 / 256.
TEST(Level3Price, TriangleShareCountsTheColumnsEachBlockReaches) {
  for (const int64_t n : {1, 7, 48, 200, 1000}) {
    for (const int64_t rows : {1, 16, 48, 512}) {
      int64_t reached = 0;
      for (int64_t i = 0; i < n; ++i) reached += std::min(n, (i / rows + 1) * rows);
      EXPECT_DOUBLE_EQ(detail::triangle_share(n, rows),
                       static_cast<double>(reached) / (static_cast<double>(n) * n))
          << n << " " << rows;
    }
  }
  EXPECT_DOUBLE_EQ(detail::triangle_share(300, 512), 1.0);
  EXPECT_DOUBLE_EQ(detail::triangle_share(16384, 1024), 136.0 / 256.0);
}

// The mask of a triangle call's kernels (core/gemm_problem.hpp): element (i + d, j) of C.
TEST(Level3Price, TheTriangleMaskKeepsTheDiagonal) {
  using detail::outside_part;
  for (int64_t d : {-3, 0, 5})
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        EXPECT_FALSE(outside_part(0, i, j, d));
        EXPECT_EQ(outside_part(1, i, j, d), i + d < j);
        EXPECT_EQ(outside_part(2, i, j, d), i + d > j);
      }
}

TEST(Level3Price, AMarginalGainOnTheBlocksKeepsTheCallNative) {
  double* p = buffer<double>();
  const gemm_quoter slightly = [](int64_t m, int64_t n, int64_t k) {
    const double native = static_cast<double>(m) * n * k;
    return gemm_quote{nullptr, native, 0.97 * native};
  };
  const rank_k_call<double> x{rank_k_kind::syrk,
                              uplo_kind::upper,
                              trans_kind::t,
                              1024,
                              1024,
                              1.0,
                              p,
                              1024,
                              nullptr,
                              0,
                              0.0,
                              p,
                              1024};
  const detail::level3_price got = detail::price_blocked(x, 64, slightly);
  EXPECT_TRUE(got.splits);
  EXPECT_LT(got.blocked_ms, got.native_ms);
  EXPECT_FALSE(got.pays(0.05));
  EXPECT_TRUE(got.pays(0.0));
}

// A native routine that runs at a fraction of GEMM's rate costs 1 / that fraction of its share:
// the whole call and each native diagonal block of the blocked form alike. Routines the
// efficiencies do not name (SYR2K, SYMM, TRMM) stay at GEMM's rate.
TEST(Level3Price, TheNativeRoutinesEfficiency) {
  double* p = buffer<double>();
  const detail::native_efficiency half{0.5, 0.25, 1.0, 1.0};
  const rank_k_call<double> x = syrk_lower(p, 256, 100);
  const detail::level3_price plain = detail::price_blocked(x, 64, quarter);
  const detail::level3_price slow = detail::price_blocked(x, 64, quarter, half);
  const double gemms = (128.0 * 128 * 100 + 2 * 64.0 * 64 * 100) / 4;
  EXPECT_DOUBLE_EQ(slow.native_ms, 2 * plain.native_ms);
  EXPECT_DOUBLE_EQ(slow.blocked_ms - gemms, 2 * (plain.blocked_ms - gemms));
  const triangular_call<double> solve{true,
                                      side_kind::left,
                                      uplo_kind::lower,
                                      trans_kind::n,
                                      diag_kind::non_unit,
                                      256,
                                      100,
                                      1.0,
                                      p,
                                      256,
                                      p,
                                      256};
  EXPECT_DOUBLE_EQ(detail::native_ms(solve, quarter, half), 4 * detail::native_ms(solve, quarter));
  triangular_call<double> multiply = solve;
  multiply.solve = false;
  EXPECT_DOUBLE_EQ(detail::native_ms(multiply, quarter, half),
                   detail::native_ms(multiply, quarter));
  rank_k_call<double> two = x;
  two.kind = rank_k_kind::syr2k;
  two.b = p;
  two.ldb = 256;
  EXPECT_DOUBLE_EQ(detail::native_ms(two, quarter, half), detail::native_ms(two, quarter));
  const symm_call<double> sym{
      false, side_kind::left, uplo_kind::lower, 256, 100, 1.0, p, 256, p, 256, 1.0, p, 256};
  EXPECT_DOUBLE_EQ(detail::native_ms(sym, quarter, half), detail::native_ms(sym, quarter));
  // Complex SYRK and HERK take herk's, complex TRSM ztrsm's.
  const detail::native_efficiency complex_only{1.0, 1.0, 0.5, 0.25};
  zd* z = buffer<zd>();
  const rank_k_call<zd> herk{rank_k_kind::herk,
                             uplo_kind::upper,
                             trans_kind::c,
                             256,
                             100,
                             zd(1),
                             z,
                             100,
                             nullptr,
                             0,
                             zd(0),
                             z,
                             256};
  EXPECT_DOUBLE_EQ(detail::native_ms(herk, quarter, complex_only),
                   2 * detail::native_ms(herk, quarter));
  EXPECT_DOUBLE_EQ(detail::native_ms(x, quarter, complex_only), detail::native_ms(x, quarter));
  const triangular_call<zd> zsolve{true,
                                   side_kind::right,
                                   uplo_kind::upper,
                                   trans_kind::c,
                                   diag_kind::unit,
                                   100,
                                   256,
                                   zd(1),
                                   z,
                                   256,
                                   z,
                                   100};
  EXPECT_DOUBLE_EQ(detail::native_ms(zsolve, quarter, complex_only),
                   4 * detail::native_ms(zsolve, quarter));
  // Measured on Hopper only; elsewhere GEMM's rate.
  EXPECT_LT(detail::level3_native_efficiency(9).syrk, 1.0);
  for (int cc : {7, 8, 10, 12}) EXPECT_EQ(detail::level3_native_efficiency(cc).trsm, 1.0);
}

// ---- The published GPUs --------------------------------------------------------------------

// The device route of a GEMM block, as device_gemm.cpp prices it (a complex block as its real
// embedding, at ZGEMM's native rate), at the defaults (auto mode, the certified count, no
// history: priced at kAutoModuliEstimate).
gemm_quoter device_quoter(const detail::gpu_rates& rates, bool complex) {
  return [&rates, complex](int64_t m, int64_t n, int64_t k) {
    const detail::config cfg{};
    const detail::route rt =
        complex
            ? detail::decide_route(
                  cfg, detail::call_site::device, nullptr, m, 2 * n, 2 * k, true, rates,
                  detail::kZgemmNativeWork,
                  detail::uses_karatsuba(detail::complex_form::setting, cfg.scaling, m, n, k))
            : detail::decide_route(cfg, detail::call_site::device, nullptr, m, n, k, true, rates);
    return gemm_quote{rt.emulate ? nullptr : rt.reason, rt.predicted.native_ms,
                      rt.predicted.emulated_ms};
  };
}

struct routine {
  const char* label;
  bool complex;
  // The predicted native / blocked times of the routine at order n (k = n), at the defaults, with
  // the native routines as fast as e says.
  detail::level3_price (*price)(int64_t n, const gemm_quoter& q,
                                const detail::native_efficiency& e);
};

template <class T>
detail::level3_price rank_k(rank_k_kind kind, int64_t n, const gemm_quoter& q,
                            const detail::native_efficiency& e) {
  T* p = buffer<T>();
  const rank_k_call<T> x{kind, uplo_kind::lower, trans_kind::n, n, n, T(1), p, n, p, n, T(1), p, n};
  // The device hook's rule for the triangle (level3_device.cpp): fast scaling, and complex calls
  // in the Karatsuba form.
  const bool triangle =
      std::is_same_v<T, double> ||
      detail::uses_karatsuba(detail::complex_form::automatic, detail::scaling_mode::fast, n, n, n);
  return detail::cheapest_form(x, detail::kLevel3Blocks, q, e, triangle);
}
template <class T>
detail::level3_price triangular(bool solve, int64_t n, const gemm_quoter& q,
                                const detail::native_efficiency& e) {
  T* p = buffer<T>();
  const triangular_call<T> x{solve,
                             side_kind::left,
                             uplo_kind::lower,
                             trans_kind::n,
                             diag_kind::non_unit,
                             n,
                             n,
                             T(1),
                             p,
                             n,
                             p,
                             n};
  return detail::cheapest_blocked(x, detail::kLevel3Blocks, q, e);
}
template <class T>
detail::level3_price symmetric(int64_t n, const gemm_quoter& q,
                               const detail::native_efficiency& e) {
  T* p = buffer<T>();
  const symm_call<T> x{!std::is_same_v<T, double>,
                       side_kind::left,
                       uplo_kind::lower,
                       n,
                       n,
                       T(1),
                       p,
                       n,
                       p,
                       n,
                       T(1),
                       p,
                       n};
  return detail::cheapest_blocked(x, detail::kLevel3Blocks, q, e);
}

using price_args = const detail::native_efficiency;
const routine kRoutines[] = {
    {"DSYRK", false,
     [](int64_t n, const gemm_quoter& q, price_args& e) {
       return rank_k<double>(rank_k_kind::syrk, n, q, e);
     }},
    {"DSYMM", false,
     [](int64_t n, const gemm_quoter& q, price_args& e) { return symmetric<double>(n, q, e); }},
    {"DTRSM", false,
     [](int64_t n, const gemm_quoter& q, price_args& e) {
       return triangular<double>(true, n, q, e);
     }},
    {"ZHERK", true,
     [](int64_t n, const gemm_quoter& q, price_args& e) {
       return rank_k<zd>(rank_k_kind::herk, n, q, e);
     }},
    {"ZHEMM", true,
     [](int64_t n, const gemm_quoter& q, price_args& e) { return symmetric<zd>(n, q, e); }},
    {"ZTRSM", true,
     [](int64_t n, const gemm_quoter& q, price_args& e) { return triangular<zd>(true, n, q, e); }},
};

detail::native_efficiency efficiency(const detail::gpu_spec& g) {
  return detail::level3_native_efficiency(g.cc_major);
}

// One cell: the predicted speed-up of what auto mode runs (native: 1.00x, and the blocked
// form's in parentheses where some block would be emulated).
std::string cell(const detail::level3_price& p) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2);
  if (p.pays(detail::config{}.auto_margin) && p.triangle)
    s << p.native_ms / p.blocked_ms << "x (tri)";
  else if (p.pays(detail::config{}.auto_margin))
    s << p.native_ms / p.blocked_ms << "x (" << p.block << ")";
  else if (p.splits)
    s << "native (" << p.native_ms / p.blocked_ms << "x)";
  else
    s << "native";
  return s.str();
}

// The table of docs/level3.md: n = 16384, then 4096. SYR2K prices as SYRK, TRMM as TRSM.
std::string predicted_table() {
  std::ostringstream t;
  t << "| GPU | n |";
  for (const routine& r : kRoutines) t << " " << r.label << " |";
  t << "\n|---|---:|";
  for (size_t i = 0; i < std::size(kRoutines); ++i) t << "---:|";
  t << "\n";
  for (const char* gpu : kTableGpus) {
    const detail::gpu_rates rates = detail::prior_rates(published_gpu(gpu));
    const detail::native_efficiency e = efficiency(published_gpu(gpu));
    for (int64_t n : {16384, 4096}) {
      t << "| " << gpu << " | " << n << " |";
      for (const routine& r : kRoutines)
        t << " " << cell(r.price(n, device_quoter(rates, r.complex), e)) << " |";
      t << "\n";
    }
  }
  return t.str();
}

// Where FP64 is weak the blocked forms gain several times over; on the H200 the model keeps
// cuSOLVER potrf's trailing updates (n = k = 2048) native, and never predicts a routine slower
// than native as emulated.
TEST(Level3Price, PredictionsOnPublishedGpus) {
  for (const char* weak : {"GeForce RTX 4090", "H20", "RTX PRO 6000 Blackwell"}) {
    const detail::gpu_rates rates = detail::prior_rates(published_gpu(weak));
    for (const routine& r : kRoutines) {
      const detail::level3_price p =
          r.price(8192, device_quoter(rates, r.complex), efficiency(published_gpu(weak)));
      EXPECT_TRUE(p.pays(0.05)) << weak << " " << r.label;
      EXPECT_GT(p.native_ms / p.blocked_ms, 4.0) << weak << " " << r.label;
    }
  }
  const detail::gpu_rates h200 = detail::prior_rates(published_gpu("H200"));
  EXPECT_FALSE(kRoutines[0]
                   .price(2048, device_quoter(h200, false), efficiency(published_gpu("H200")))
                   .pays(0.05));
  const detail::published_table all = detail::published_gpus();
  for (const detail::gpu_spec* g = all.begin; g != all.end; ++g)
    for (const routine& r : kRoutines)
      for (int64_t n : {1024, 4096, 16384}) {
        const detail::level3_price p =
            r.price(n, device_quoter(detail::prior_rates(*g), r.complex), efficiency(*g));
        if (p.pays(0.05)) {
          EXPECT_LT(p.blocked_ms, p.native_ms) << g->label << " " << r.label;
        }
      }
}

// The hooks' rule (interpose/level3_model.hpp) on a made-up GPU whose GEMM blocks are emulated at
// a fraction of native's time: emulate mode splits at OZDGEMM_LEVEL3_BLOCK without pricing, or
// else at the cheapest order that splits, even when that is slower than native; auto mode splits
// at the cheapest block order when that pays, and otherwise keeps the call native with both
// predictions in its decision line.
TEST(Level3Price, TheHooksRule) {
  double* p = buffer<double>();
  const rank_k_call<double> x{rank_k_kind::syrk,
                              uplo_kind::lower,
                              trans_kind::n,
                              4096,
                              4096,
                              1.0,
                              p,
                              4096,
                              nullptr,
                              0,
                              0.0,
                              p,
                              4096};
  const auto routes = [](double fraction) {
    return [fraction](int64_t m, int64_t n, int64_t k) {
      const double native = 1e-9 * static_cast<double>(m) * n * k;
      if (std::min({m, n, k}) < 256)
        return detail::route{false, "auto: below OZDGEMM_MIN_DIM", {native, fraction * native}};
      return detail::route{
          true, "auto: model predicts emulation faster", {native, fraction * native}};
    };
  };
  detail::config cfg{};
  detail::call_record rec{};
  cfg.mode = detail::run_mode::emulate;
  cfg.level3_block = 48;
  EXPECT_EQ(detail::plan_level3(x, cfg, routes(2.0), &rec).block, 48);
  EXPECT_EQ(rec.predicted_native_ms, 0.0);  // not priced
  cfg.level3_block = 0;
  // Emulation twice native's time: the form with the least emulated work, the largest order.
  detail::level3_plan plan = detail::plan_level3(x, cfg, routes(2.0), &rec);
  EXPECT_EQ(plan.declined, nullptr);
  EXPECT_EQ(plan.block, 2048);
  EXPECT_GT(rec.predicted_emulated_ms, rec.predicted_native_ms);
  // A quarter of native's time: the smallest order whose GEMMs these routes emulate.
  EXPECT_EQ(detail::plan_level3(x, cfg, routes(0.25), &rec).block, 256);
  // No times (a model without rates): the default order.
  const auto untimed = [](int64_t, int64_t, int64_t) {
    return detail::route{true, "OZDGEMM_MODE=emulate", {0.0, 0.0}};
  };
  EXPECT_EQ(detail::plan_level3(x, cfg, untimed, &rec).block, detail::kDefaultLevel3Block);

  cfg.mode = detail::run_mode::automatic;
  cfg.level3_block = 0;
  plan = detail::plan_level3(x, cfg, routes(0.25), &rec);
  EXPECT_EQ(plan.declined, nullptr);
  EXPECT_EQ(plan.block, 256);  // smaller blocks' GEMMs fall below the size floor: the same price
  EXPECT_LT(rec.predicted_emulated_ms, 0.95 * rec.predicted_native_ms);

  plan = detail::plan_level3(x, cfg, routes(0.99), &rec);
  ASSERT_NE(plan.declined, nullptr);
  EXPECT_STREQ(plan.declined,
               "auto: model predicts the native routine faster than the blocked form");
  EXPECT_GT(rec.predicted_emulated_ms, 0.95 * rec.predicted_native_ms);

  cfg.level3_block = 1024;  // set: the only order priced
  EXPECT_EQ(detail::plan_level3(x, cfg, routes(0.25), &rec).block, 1024);
  EXPECT_FALSE(detail::plan_level3(x, cfg, routes(0.25), &rec, {}, true).triangle);

  // Where the triangle may run: at a quarter of native's time it is cheaper than every blocked
  // form (0.5625 of the square's 0.25 against the blocked form's native diagonal blocks), in both
  // modes; at twice native's time auto mode would run the blocked form of order 2048 (1.125 of
  // native's GEMM against 0.75), emulate mode still the triangle (all of the work emulated), and
  // auto mode keeps a call native whose triangle does not pay.
  cfg.level3_block = 0;
  for (const detail::run_mode mode : {detail::run_mode::emulate, detail::run_mode::automatic}) {
    cfg.mode = mode;
    plan = detail::plan_level3(x, cfg, routes(0.25), &rec, {}, true);
    EXPECT_EQ(plan.declined, nullptr);
    EXPECT_TRUE(plan.triangle);
    EXPECT_DOUBLE_EQ(rec.predicted_emulated_ms,
                     0.25 * 1e-9 * 4096.0 * 4096 * 4096 * detail::triangle_share(4096, 512));
  }
  cfg.mode = detail::run_mode::emulate;
  EXPECT_TRUE(detail::plan_level3(x, cfg, routes(2.0), &rec, {}, true).triangle);
  const detail::level3_price blocked = detail::cheapest_form(
      x, detail::kLevel3Blocks,
      [&](int64_t m, int64_t n, int64_t k) {
        const detail::route r = routes(2.0)(m, n, k);
        return gemm_quote{r.emulate ? nullptr : r.reason, r.predicted.native_ms,
                          r.predicted.emulated_ms};
      },
      {}, true);
  EXPECT_FALSE(blocked.triangle);
  EXPECT_EQ(blocked.block, 2048);
  EXPECT_TRUE(detail::plan_level3(x, cfg, untimed, &rec, {}, true).triangle);  // no times
  cfg.mode = detail::run_mode::automatic;
  EXPECT_NE(detail::plan_level3(x, cfg, routes(1.5), &rec, {}, true).declined, nullptr);
}

// docs/level3.md quotes the model's table; it must be the model's current one.
TEST(Level3Price, TheDocsTableIsTheModels) {
  EXPECT_TRUE(page_holds("docs/level3.md", predicted_table())) << predicted_table();
}

}  // namespace
}  // namespace ozdgemm::test
