// The complex GEMM of the host reference (ozdgemm_zgemm_reference), which the GPU matches bit
// for bit: accuracy against the double-double complex reference with the rigorous per-element
// bound of the embedding (below), over every op pair of {N, T, C}, leading-dimension padding,
// fixed s, auto and certified in both scalings, and input families (Gaussian, wide range,
// anti-aligned, long k); conjugation; Inf/NaN classes per part against a naive complex loop;
// alpha = 0, beta = 0, k = 0, m = 0, n = 0; invalid arguments.
//
// The bound. The engine computes each part of T = A' B* (core/complex_embedding.hpp) as a real
// GEMM of depth 2k with alpha 1, beta 0, so accuracy_bound.hpp's derivation gives
// |T - P| <= Tr + u |T| per part, Tr the truncation term of the exponents the scaling chose for
// the embedded problem, and |T| <= (S + Tr) / (1 - u) with S the sum of the magnitudes of the
// part's 2k real terms. The epilogue (complex_epilogue) turns an error E in T into alpha E
// (real part: |ar| E_re + |ai| E_im), and rounds: re = RN(RN(ar tr - RN(ai ti)) + RN(br cr -
// RN(bi ci))) errs by at most u |ar tr| + u (2 + u) |ai ti| + u |br cr| + u (2 + u) |bi ci| +
// u |C_re| (im likewise with tr, ti and cr, ci swapped in the second factor). The double-double
// reference R adds u |R| + (4k + 16) 2^-100 S' (dd_reference.hpp) and subnormal terms at most
// (4k + 16)(|ar| + |ai| + 1) 2^-1074. Sums in long double, inflated as accuracy_bound.hpp does.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/accuracy_bound.hpp"
#include "cpu/cpu_test_util.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/emulate.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/complex_reference.hpp"
#include "reference/host_reference.hpp"
#include "support/complex_inputs.hpp"
#include "support/dd_reference.hpp"
#include "support/inputs.hpp"
#include "support/zgemm_calls.hpp"

namespace ozdgemm::test {
namespace {

using detail::scaling_mode;


// One complex call: its arguments and inputs, run through the C entry and the references.
struct zcall {
  char ta = 'N', tb = 'N';
  int64_t m = 0, n = 0, k = 0;
  zdouble alpha{1.0, 0.0}, beta{0.0, 0.0};
  zmatrix A, B, C0;  // as stored (C0 with ld padding holding a sentinel)
  int moduli = 14;
  scaling_mode mode = scaling_mode::fast;
};

const zdouble kSentinel(-7.25e33, 3.5e-21);

// op(A) m x k and op(B) k x n stored for the call's ops with extra_ld padding rows; C0 holds
// data (beta != 0) or NaN (beta == 0: C must not be read), its padding the sentinel.
zcall make_call(char ta, char tb, const zmatrix& op_a, const zmatrix& op_b, int64_t extra_ld,
                zdouble alpha, zdouble beta, uint64_t seed) {
  zcall c;
  c.ta = ta;
  c.tb = tb;
  c.m = op_a.rows;
  c.k = op_a.cols;
  c.n = op_b.cols;
  c.alpha = alpha;
  c.beta = beta;
  c.A = store_for_zop(op_a, ta, extra_ld);
  c.B = store_for_zop(op_b, tb, extra_ld);
  c.C0 = make_zmatrix(c.m, c.n, c.m + extra_ld, kSentinel);
  const zmatrix data = phi_zmatrix(c.m, c.n, 1.0, seed);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i)
      c.C0(i, j) = beta == zdouble(0.0, 0.0) ? zdouble(kNaN, kNaN) : data(i, j);
  return c;
}

// ozdgemm_zgemm_reference on a copy of C0.
zmatrix run_reference(const zcall& c, ozdgemm_status_t* status = nullptr) {
  zmatrix C = c.C0;
  const ozdgemm_status_t st = ozdgemm_zgemm_reference(
      c.ta, c.tb, c.m, c.n, c.k, cu(c.alpha), cu(c.A.ptr()), c.A.ld, cu(c.B.ptr()), c.B.ld,
      cu(c.beta), cu(C.ptr()), C.ld, zoptions(c.moduli, c.mode == scaling_mode::fast));
  if (status != nullptr) *status = st;
  EXPECT_EQ(st, OZDGEMM_STATUS_SUCCESS);
  return C;
}

struct zbound_result {
  int64_t checked = 0;
  double max_ratio = 0.0;     // max |C - R| / bound over parts
  double max_scaled = 0.0;    // max |C - R| / (|alpha| |A||B|)_ij over parts (complex moduli)
  std::string first_failure;  // empty when every part passed
};

// Every part of C against R within the bound of the file comment, with s the moduli count the
// call used (reference_zgemm's answer for a per-call choice).
zbound_result check_zbound(const zcall& c, int s, const zmatrix& C, const zmatrix& R) {
  zbound_result res;
  const long double u = std::ldexp(1.0L, -53);
  zmatrix scratch = c.C0;
  const detail::complex_problem zp = zproblem_of(c.ta, c.tb, c.m, c.n, c.k, c.A.ptr(), c.A.ld,
                                                 c.B.ptr(), c.B.ld, scratch.ptr(), scratch.ld);
  const detail::host_embedding e = detail::embed_on_host(zp);
  const detail::scaling_result sc = detail::reference_scaling(e.real, s, c.mode);
  const truncation_terms terms = make_truncation_terms(e.real);
  const long double ar = std::fabs(static_cast<long double>(c.alpha.real()));
  const long double ai = std::fabs(static_cast<long double>(c.alpha.imag()));
  const long double br = std::fabs(static_cast<long double>(c.beta.real()));
  const long double bi = std::fabs(static_cast<long double>(c.beta.imag()));
  const bool beta_zero = c.beta == zdouble(0.0, 0.0);
  std::vector<double> abs_ab(static_cast<size_t>(c.m * c.n));
  abs_zproduct(c.ta, c.tb, c.m, c.n, c.k, c.A.ptr(), c.A.ld, c.B.ptr(), c.B.ld, abs_ab.data(), c.m);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) {
      // The magnitudes of the 2k real terms of each part of P.
      long double s_re = 0.0L, s_im = 0.0L;
      for (int64_t l = 0; l < c.k; ++l) {
        const zdouble a = zop_at(c.ta, c.A.ptr(), c.A.ld, i, l);
        const zdouble b = zop_at(c.tb, c.B.ptr(), c.B.ld, l, j);
        const long double xr = std::fabs(static_cast<long double>(a.real()));
        const long double xi = std::fabs(static_cast<long double>(a.imag()));
        const long double yr = std::fabs(static_cast<long double>(b.real()));
        const long double yi = std::fabs(static_cast<long double>(b.imag()));
        s_re += xr * yr + xi * yi;
        s_im += xr * yi + xi * yr;
      }
      s_re *= terms.inflate;
      s_im *= terms.inflate;
      const long double tr_re = truncation_bound(terms, sc, i, j);
      const long double tr_im = truncation_bound(terms, sc, i, detail::embedding_half(c.n) + j);
      const long double t_re = (s_re + tr_re) * (1 + 2 * u), t_im = (s_im + tr_im) * (1 + 2 * u);
      const long double e_re = tr_re + u * t_re, e_im = tr_im + u * t_im;
      const zdouble c0 = c.C0(i, j);
      const long double cr = beta_zero ? 0.0L : std::fabs(static_cast<long double>(c0.real()));
      const long double ci = beta_zero ? 0.0L : std::fabs(static_cast<long double>(c0.imag()));
      const long double dd = static_cast<long double>(4 * c.k + 16) * std::ldexp(1.0L, -100) *
                             ((ar + ai) * (s_re + s_im) + (br + bi) * (cr + ci));
      const long double sub =
          static_cast<long double>(4 * c.k + 16) * (ar + ai + 1) * std::ldexp(1.0L, -1074);
      const long double g = 2 * u * (1 + u);
      const zdouble got = C(i, j), want = R(i, j);
      const long double bounds[2] = {
          ar * e_re + ai * e_im + u * ar * t_re + g * ai * t_im + u * br * cr + g * bi * ci +
              u * std::fabs(static_cast<long double>(got.real())) +
              u * std::fabs(static_cast<long double>(want.real())) + dd + sub,
          ar * e_im + ai * e_re + u * ar * t_im + g * ai * t_re + u * br * ci + g * bi * cr +
              u * std::fabs(static_cast<long double>(got.imag())) +
              u * std::fabs(static_cast<long double>(want.imag())) + dd + sub};
      const double parts_got[2] = {got.real(), got.imag()};
      const double parts_want[2] = {want.real(), want.imag()};
      const long double scale = (ar + ai) * abs_ab[static_cast<size_t>(j * c.m + i)];
      for (int part = 0; part < 2; ++part) {
        const long double err = std::fabs(static_cast<long double>(parts_got[part]) -
                                          static_cast<long double>(parts_want[part]));
        ++res.checked;
        const double ratio = static_cast<double>(err / bounds[part]);
        if (ratio > res.max_ratio) res.max_ratio = ratio;
        if (scale > 0) res.max_scaled = std::max(res.max_scaled, static_cast<double>(err / scale));
        if (!(err <= bounds[part]) && res.first_failure.empty())
          res.first_failure =
              "bound violated at (" + std::to_string(i) + "," + std::to_string(j) +
              (part == 0 ? ") re" : ") im") + ": C=" + std::to_string(parts_got[part]) +
              " R=" + std::to_string(parts_want[part]) + " err/bound=" + std::to_string(ratio);
      }
    }
  return res;
}

// The moduli count the call runs (reference_zgemm, the code behind the C entry).
int moduli_used(const zcall& c) {
  zmatrix C = c.C0;
  const detail::complex_problem zp =
      zproblem_of(c.ta, c.tb, c.m, c.n, c.k, c.A.ptr(), c.A.ld, c.B.ptr(), c.B.ld, C.ptr(), C.ld);
  return detail::reference_zgemm(zp, {c.alpha.real(), c.alpha.imag()},
                                 {c.beta.real(), c.beta.imag()}, setting_of(c.moduli), c.mode,
                                 detail::complex_target({}, setting_of(c.moduli)));
}

// Runs the call, checks the bound and the untouched padding of C; returns the check.
zbound_result run_and_check(const zcall& c) {
  const zmatrix C = run_reference(c);
  zmatrix R = c.C0;
  dd_zgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.A.ptr(), c.A.ld, c.B.ptr(), c.B.ld, c.beta,
           R.ptr(), R.ld);
  const int s = moduli_used(c);
  EXPECT_GE(s, detail::kMinModuli) << "these inputs are emulated, not run in FP64";
  if (s < detail::kMinModuli) return {};
  zbound_result r = check_zbound(c, s, C, R);
  EXPECT_TRUE(r.first_failure.empty()) << r.first_failure;
  EXPECT_EQ(r.checked, 2 * c.m * c.n);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = c.m; i < C.ld; ++i)
      EXPECT_EQ(C(i, j), kSentinel) << "padding of C written at (" << i << "," << j << ")";
  std::ostringstream os;
  os << "s=" << s << " max err/bound=" << r.max_ratio
     << " max err/(|alpha||A||B|)=" << r.max_scaled;
  testing::Test::RecordProperty(c.beta == zdouble(0.0, 0.0) ? "plain" : "alpha_beta", os.str());
  return r;
}

// The native-like level of the certified default (target native: sqrt(2k) 2^-53 for the
// embedded depth 2k) and of s = 20 (the final rounding), for alpha = 1, beta = 0, where the
// epilogue is exact (1 t - RN(0 t') = t) so C = T: |C - R| <= target (|A'||B*|) + u |T| + u |R|
// + dd, and |A'||B*| <= |A||B| part by part (|ar||br| + |ai||bi| <= |a||b|, Cauchy-Schwarz).
void expect_native_level(const zcall& c, const zbound_result& r) {
  const double u = std::ldexp(1.0, -53);
  if (c.moduli == OZDGEMM_MODULI_CERTIFIED) {
    EXPECT_LE(r.max_scaled, (std::sqrt(2.0 * static_cast<double>(c.k)) + 3) * u)
        << "certified: within native's probabilistic bound relative to |A||B|";
  }
  if (c.moduli == 20) {
    EXPECT_LE(r.max_scaled, 3 * u) << "s = 20: only the final rounding left";
  }
}

const zdouble kAlpha(-0.75, 0.5), kBeta(0.25, -1.5);

// ---- Accuracy: every op pair, every setting, both scalings --------------------------------

using op_param = std::tuple<int, int, int, scaling_mode>;  // op a, op b, moduli, mode
constexpr char kOps[3] = {'N', 'T', 'C'};

class ZgemmReferenceOps : public testing::TestWithParam<op_param> {};

TEST_P(ZgemmReferenceOps, WithinTheBoundOfTheEmbedding) {
  const auto [oa, ob, moduli, mode] = GetParam();
  const uint64_t seed = 100 * oa + 10 * ob + static_cast<uint64_t>(moduli + 2);
  const zmatrix op_a = phi_zmatrix(13, 17, 1.0, seed);
  const zmatrix op_b = phi_zmatrix(17, 11, 1.0, seed + 3);
  zcall c = make_call(kOps[oa], kOps[ob], op_a, op_b, 3, kAlpha, kBeta, seed + 5);
  c.moduli = moduli;
  c.mode = mode;
  const zbound_result r = run_and_check(c);
  EXPECT_GT(r.max_ratio, 0.0) << "some error: the check is not vacuous";
  // alpha = 1, beta = 0 (C0 is NaN: not read) on the same inputs: the native-like levels.
  zcall plain = make_call(kOps[oa], kOps[ob], op_a, op_b, 3, {1.0, 0.0}, {0.0, 0.0}, seed + 5);
  plain.moduli = moduli;
  plain.mode = mode;
  expect_native_level(plain, run_and_check(plain));
}

INSTANTIATE_TEST_SUITE_P(
    OpPairs, ZgemmReferenceOps,
    testing::Combine(testing::Range(0, 3), testing::Range(0, 3),
                     testing::Values(14, 16, 20, OZDGEMM_MODULI_AUTO, OZDGEMM_MODULI_CERTIFIED),
                     testing::Values(scaling_mode::fast, scaling_mode::accurate)),
    [](const testing::TestParamInfo<op_param>& i) {
      return std::string(1, kOps[std::get<0>(i.param)]) + kOps[std::get<1>(i.param)] + "_" +
             setting_name(std::get<2>(i.param)) + "_" + mode_name(std::get<3>(i.param));
    });

// ---- Input families ----------------------------------------------------------------------

enum class zinput { gaussian, wide_phi2, anti_aligned, long_k };

struct zinput_case {
  zinput kind;
  const char* name;
  int64_t m, n, k;
};

const zinput_case kInputs[] = {
    {zinput::gaussian, "gaussian", 24, 20, 40},
    {zinput::wide_phi2, "wide_phi2", 24, 20, 40},
    {zinput::anti_aligned, "anti_aligned", 12, 10, 256},
    {zinput::long_k, "long_k", 3, 2, 3000},
};

using input_param = std::tuple<int, int, scaling_mode>;  // case, moduli, mode

class ZgemmReferenceInputs : public testing::TestWithParam<input_param> {};

TEST_P(ZgemmReferenceInputs, WithinTheBoundOfTheEmbedding) {
  const auto [index, moduli, mode] = GetParam();
  const zinput_case& ic = kInputs[index];
  const uint64_t seed = 7000 + 31 * static_cast<uint64_t>(index);
  zmatrix op_a, op_b;
  if (ic.kind == zinput::anti_aligned) {
    anti_aligned_zinputs(2.0, ic.m, ic.n, ic.k, seed, &op_a, &op_b);
  } else {
    const double phi = ic.kind == zinput::wide_phi2 ? 2.0 : 1.0;
    op_a = phi_zmatrix(ic.m, ic.k, phi, seed);
    op_b = phi_zmatrix(ic.k, ic.n, phi, seed + 3);
  }
  for (const auto& [alpha, beta] : {std::pair<zdouble, zdouble>{kAlpha, kBeta},
                                    std::pair<zdouble, zdouble>{{1.0, 0.0}, {0.0, 0.0}}}) {
    zcall c = make_call('N', 'C', op_a, op_b, 1, alpha, beta, seed + 9);
    c.moduli = moduli;
    c.mode = mode;
    const int s = moduli_used(c);
    if (s == 0) {
      // A per-call choice may refuse every s (anti-aligned data): then the FP64 stand-in ran.
      EXPECT_NE(moduli, 14) << "a fixed s always emulates";
      EXPECT_EQ(ic.kind, zinput::anti_aligned) << "only the anti-aligned set defeats every s";
      continue;
    }
    const zbound_result r = run_and_check(c);
    if (alpha == zdouble(1.0, 0.0)) expect_native_level(c, r);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Families, ZgemmReferenceInputs,
    testing::Combine(testing::Range(0, static_cast<int>(sizeof kInputs / sizeof kInputs[0])),
                     testing::Values(14, 20, OZDGEMM_MODULI_AUTO, OZDGEMM_MODULI_CERTIFIED),
                     testing::Values(scaling_mode::fast, scaling_mode::accurate)),
    [](const testing::TestParamInfo<input_param>& i) {
      return std::string(kInputs[std::get<0>(i.param)].name) + "_" +
             setting_name(std::get<1>(i.param)) + "_" + mode_name(std::get<2>(i.param));
    });

// ---- Conjugation -------------------------------------------------------------------------

bool same_bits(const zmatrix& x, const zmatrix& y) {
  return x.data.size() == y.data.size() &&
         std::memcmp(x.data.data(), y.data.data(), x.data.size() * sizeof(zdouble)) == 0;
}

zmatrix conjugated(const zmatrix& x) {
  zmatrix y = x;
  for (zdouble& v : y.data) v = std::conj(v);
  return y;
}

// op C on a stored X is op T on conj(X), bit for bit: the pack negates the imaginary part,
// which is exact, and nothing else sees the op.
// The default (certified, fast) against the plain complex loop, the stand-in for native ZGEMM,
// in both metrics (max |C - R| / |R| and max |C - R| / (|A||B|) over complex elements, R in
// double-double) on uniform and phi = 0.5 data at n = k = 384. At native's bound itself
// (native_shift 0) the certified count took s = 14 on both and its relative error was 1.9x and
// 1.06x the loop's (printed below): the reason complex calls certify at a quarter of it
// (complex_target, core/moduli_choice.hpp).
TEST(ZgemmReference, CertifiedDefaultMeetsTheNaiveLoopInBothMetrics) {
  const int64_t n = 384;
  for (double phi : {0.0, 0.5}) {
    const zmatrix A = phi_zmatrix(n, n, phi, 11 + n), B = phi_zmatrix(n, n, phi, 17 + n);
    zmatrix R = make_zmatrix(n, n, n, {0, 0}), N = R, C = R, C0 = R;
    dd_zgemm('N', 'N', n, n, n, {1, 0}, A.ptr(), A.ld, B.ptr(), B.ld, {0, 0}, R.ptr(), R.ld);
    naive_zgemm('N', 'N', n, n, n, {1, 0}, A.ptr(), A.ld, B.ptr(), B.ld, {0, 0}, N.ptr(), N.ld);
    ASSERT_EQ(ozdgemm_zgemm_reference('N', 'N', n, n, n, make_cuDoubleComplex(1, 0),
                                      reinterpret_cast<const cuDoubleComplex*>(A.ptr()), A.ld,
                                      reinterpret_cast<const cuDoubleComplex*>(B.ptr()), B.ld,
                                      make_cuDoubleComplex(0, 0),
                                      reinterpret_cast<cuDoubleComplex*>(C.ptr()), C.ld,
                                      ozdgemm_default_options()),
              OZDGEMM_STATUS_SUCCESS);
    const int s = detail::reference_zgemm(
        zproblem_of('N', 'N', n, n, n, A.ptr(), A.ld, B.ptr(), B.ld, C0.ptr(), C0.ld), {1, 0},
        {0, 0}, detail::moduli_setting::certified(), scaling_mode::fast, detail::accuracy_target{});
    double rel[3] = {}, scaled[3] = {};  // default, the loop, certified at native's bound
    const zmatrix* got[3] = {&C, &N, &C0};
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        double abs_ab = 0;
        for (int64_t l = 0; l < n; ++l) abs_ab += std::abs(A(i, l)) * std::abs(B(l, j));
        const double r = std::abs(R(i, j));
        for (int v = 0; v < 3; ++v) {
          const double d = std::abs((*got[v])(i, j) - R(i, j));
          if (r > 0) rel[v] = std::max(rel[v], d / r);
          scaled[v] = std::max(scaled[v], d / abs_ab);
        }
      }
    std::printf(
        "[ default ] phi %g: rel %.3g, scaled %.3g; the loop %.3g, %.3g; at native's "
        "bound (s = %d) %.3g (%.2fx the loop's), %.3g\n",
        phi, rel[0], scaled[0], rel[1], scaled[1], s, rel[2], rel[2] / rel[1], scaled[2]);
    EXPECT_LE(rel[0], rel[1]) << "phi " << phi;
    EXPECT_LE(scaled[0], scaled[1]) << "phi " << phi;
  }
}

TEST(ZgemmReference, ConjugateTransposeIsTransposeOfTheConjugate) {
  const zmatrix op_a = phi_zmatrix(9, 14, 1.0, 51), op_b = phi_zmatrix(14, 7, 1.0, 52);
  for (int moduli : {16, OZDGEMM_MODULI_CERTIFIED})
    for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate}) {
      zcall cc = make_call('C', 'C', op_a, op_b, 2, kAlpha, kBeta, 53);
      cc.moduli = moduli;
      cc.mode = mode;
      zcall tt = cc;
      tt.ta = tt.tb = 'T';
      tt.A = conjugated(cc.A);
      tt.B = conjugated(cc.B);
      const zmatrix got = run_reference(cc), want = run_reference(tt);
      EXPECT_TRUE(same_bits(got, want)) << setting_name(moduli) << " " << mode_name(mode);
      zcall ct = cc;  // one side only
      ct.tb = 'T';
      ct.B = conjugated(cc.B);
      EXPECT_TRUE(same_bits(run_reference(ct), got)) << setting_name(moduli);
      zcall plain_t = cc;  // op T without the conjugate: other bits, so the check has teeth
      plain_t.ta = 'T';
      EXPECT_FALSE(same_bits(run_reference(plain_t), got)) << setting_name(moduli);
    }
}

// ---- Special values ----------------------------------------------------------------------

struct special_case {
  const char* name;
  // (row, col) of op(A) and of op(B) set to the value, -1: none
  int64_t ai, al;
  zdouble av;
  int64_t bl, bj;
  zdouble bv;
};

const special_case kSpecials[] = {
    {"re_inf_in_a", 2, 3, {kInf, 0.5}, -1, -1, {}},
    {"im_neg_inf_in_a", 1, 0, {0.25, -kInf}, -1, -1, {}},
    {"nan_in_a", 4, 5, {kNaN, 1.0}, -1, -1, {}},
    {"im_nan_in_b", -1, -1, {}, 2, 3, {0.5, kNaN}},
    {"inf_inf_in_b", -1, -1, {}, 6, 1, {kInf, -kInf}},
    {"inf_meets_inf", 0, 4, {kInf, 0.0}, 4, 2, {-kInf, 0.0}},
    {"inf_meets_zero", 3, 1, {kInf, kInf}, 1, 0, {0.0, 0.0}},
    {"inf_a_nan_b", 5, 2, {-kInf, 1.0}, 2, 4, {kNaN, kNaN}},
};

using zspecial_param = std::tuple<int, int, int>;  // case, alpha/beta set, moduli

class ZgemmReferenceSpecials : public testing::TestWithParam<zspecial_param> {};

TEST_P(ZgemmReferenceSpecials, ClassesOfTheNaiveComplexLoop) {
  const auto [index, scalars, moduli] = GetParam();
  const special_case& sp = kSpecials[index];
  zmatrix op_a = phi_zmatrix(6, 8, 1.0, 61), op_b = phi_zmatrix(8, 5, 1.0, 62);
  // Zeros where the case puts them, so that Inf meets a true 0 (Inf 0 = NaN).
  if (sp.ai >= 0) op_a(sp.ai, sp.al) = sp.av;
  if (sp.bl >= 0) op_b(sp.bl, sp.bj) = sp.bv;
  const zdouble alphas[3] = {{1.0, 0.0}, kAlpha, {0.0, 2.0}};
  const zdouble betas[3] = {{0.0, 0.0}, kBeta, {1.0, 0.0}};
  zcall c = make_call('N', 'N', op_a, op_b, 1, alphas[scalars], betas[scalars], 63);
  c.moduli = moduli;
  const zmatrix C = run_reference(c);
  zmatrix naive = c.C0;
  naive_zgemm('N', 'N', c.m, c.n, c.k, c.alpha, c.A.ptr(), c.A.ld, c.B.ptr(), c.B.ld, c.beta,
              naive.ptr(), naive.ld);
  int64_t nonfinite = 0;
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) {
      const zdouble got = C(i, j), want = naive(i, j);
      EXPECT_STREQ(fp_class(got.real()), fp_class(want.real())) << "re at " << i << "," << j;
      EXPECT_STREQ(fp_class(got.imag()), fp_class(want.imag())) << "im at " << i << "," << j;
      nonfinite += !std::isfinite(want.real()) + !std::isfinite(want.imag());
    }
  EXPECT_GT(nonfinite, 0) << "the case reaches C";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ZgemmReferenceSpecials,
    testing::Combine(testing::Range(0, static_cast<int>(sizeof kSpecials / sizeof kSpecials[0])),
                     testing::Range(0, 3), testing::Values(14, OZDGEMM_MODULI_CERTIFIED)),
    [](const testing::TestParamInfo<zspecial_param>& i) {
      return std::string(kSpecials[std::get<0>(i.param)].name) + "_scalars" +
             std::to_string(std::get<1>(i.param)) + "_" + setting_name(std::get<2>(i.param));
    });

// ---- BLAS semantics ----------------------------------------------------------------------

// alpha = 0: C = beta C, with A and B not read: null pointers, which any read would crash on.
// The result is the epilogue's beta c, within its rounding (u |br cr| + u (2 + u) |bi ci| + u
// |C|, per part) of the double-double beta C, and exactly C for beta = 1.
TEST(ZgemmReference, AlphaZeroReadsNeitherAnorB) {
  for (int moduli : {14, OZDGEMM_MODULI_AUTO, OZDGEMM_MODULI_CERTIFIED}) {
    zcall c = make_call('N', 'T', phi_zmatrix(5, 4, 1.0, 71), phi_zmatrix(4, 6, 1.0, 72), 2,
                        {0.0, 0.0}, kBeta, 73);
    c.moduli = moduli;
    zmatrix C = c.C0;
    ASSERT_EQ(ozdgemm_zgemm_reference('N', 'T', c.m, c.n, c.k, cu(c.alpha), nullptr, c.m, nullptr,
                                      c.n, cu(c.beta), cu(C.ptr()), C.ld, zoptions(moduli, true)),
              OZDGEMM_STATUS_SUCCESS);
    zmatrix R = c.C0;
    dd_zgemm('N', 'T', c.m, c.n, c.k, c.alpha, nullptr, c.m, nullptr, c.n, c.beta, R.ptr(), R.ld);
    const double u = std::ldexp(1.0, -53);
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t i = 0; i < c.m; ++i) {
        const zdouble c0 = c.C0(i, j), got = C(i, j), want = R(i, j);
        const double br = std::fabs(c.beta.real()), bi = std::fabs(c.beta.imag());
        EXPECT_LE(std::fabs(got.real() - want.real()),
                  u * (br * std::fabs(c0.real()) + 2.01 * bi * std::fabs(c0.imag()) +
                       std::fabs(got.real()) + std::fabs(want.real())));
        EXPECT_LE(std::fabs(got.imag() - want.imag()),
                  u * (br * std::fabs(c0.imag()) + 2.01 * bi * std::fabs(c0.real()) +
                       std::fabs(got.imag()) + std::fabs(want.imag())));
      }
    // beta = 1: C unchanged, bit for bit (1 c - RN(0 c') = c).
    zmatrix same = c.C0;
    ASSERT_EQ(ozdgemm_zgemm_reference('N', 'T', c.m, c.n, c.k, cu(c.alpha), nullptr, c.m, nullptr,
                                      c.n, make_cuDoubleComplex(1.0, 0.0), cu(same.ptr()), same.ld,
                                      zoptions(moduli, true)),
              OZDGEMM_STATUS_SUCCESS);
    EXPECT_TRUE(same_bits(same, c.C0));
  }
}

// beta = 0: C is not read; NaN in C changes nothing, bit for bit, against finite data in C.
TEST(ZgemmReference, BetaZeroDoesNotReadC) {
  for (int moduli : {14, OZDGEMM_MODULI_CERTIFIED}) {
    zcall nan_c = make_call('T', 'N', phi_zmatrix(7, 9, 1.0, 81), phi_zmatrix(9, 5, 1.0, 82), 1,
                            kAlpha, {0.0, 0.0}, 83);
    nan_c.moduli = moduli;
    zcall data_c = nan_c;
    for (int64_t j = 0; j < data_c.n; ++j)
      for (int64_t i = 0; i < data_c.m; ++i) data_c.C0(i, j) = zdouble(1e300, -1e300);
    const zmatrix x = run_reference(nan_c), y = run_reference(data_c);
    EXPECT_TRUE(same_bits(x, y));
    for (int64_t j = 0; j < x.cols; ++j)
      for (int64_t i = 0; i < x.rows; ++i)
        EXPECT_TRUE(std::isfinite(x(i, j).real()) && std::isfinite(x(i, j).imag()));
  }
}

// k = 0: C = beta C, the same bits as alpha = 0; m = 0 or n = 0: nothing is written.
TEST(ZgemmReference, EmptyProducts) {
  zcall c = make_call('N', 'N', phi_zmatrix(4, 3, 1.0, 91), phi_zmatrix(3, 5, 1.0, 92), 2, kAlpha,
                      kBeta, 93);
  zmatrix k0 = c.C0, a0 = c.C0;
  const ozdgemm_options_t o = ozdgemm_default_options();
  ASSERT_EQ(ozdgemm_zgemm_reference('N', 'N', c.m, c.n, 0, cu(c.alpha), cu(c.A.ptr()), c.A.ld,
                                    cu(c.B.ptr()), 1, cu(c.beta), cu(k0.ptr()), k0.ld, o),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_EQ(ozdgemm_zgemm_reference('N', 'N', c.m, c.n, c.k, make_cuDoubleComplex(0.0, 0.0),
                                    cu(c.A.ptr()), c.A.ld, cu(c.B.ptr()), c.B.ld, cu(c.beta),
                                    cu(a0.ptr()), a0.ld, o),
            OZDGEMM_STATUS_SUCCESS);
  EXPECT_TRUE(same_bits(k0, a0));
  EXPECT_FALSE(same_bits(k0, c.C0)) << "beta C differs from C here";
  for (int64_t mm : {int64_t{0}, c.m}) {
    const int64_t nn = mm == 0 ? c.n : 0;
    zmatrix C = c.C0;
    ASSERT_EQ(ozdgemm_zgemm_reference('N', 'N', mm, nn, c.k, cu(c.alpha), cu(c.A.ptr()), c.A.ld,
                                      cu(c.B.ptr()), c.B.ld, cu(c.beta), cu(C.ptr()), C.ld, o),
              OZDGEMM_STATUS_SUCCESS);
    EXPECT_TRUE(same_bits(C, c.C0)) << "m=" << mm << " n=" << nn;
  }
}

// ---- Invalid arguments -------------------------------------------------------------------

struct bad_case {
  const char* name;
  char ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  int moduli;
  int scaling, accuracy;
};

// Valid: 4 x 5 x 3, 'N', 'N', lda 4, ldb 3, ldc 4. Each case breaks one rule.
const bad_case kBad[] = {
    {"op_x", 'X', 'N', 4, 5, 3, 4, 3, 4, 14, 0, 0},
    {"op_b_q", 'N', 'Q', 4, 5, 3, 4, 3, 4, 14, 0, 0},
    {"m_negative", 'N', 'N', -1, 5, 3, 4, 3, 4, 14, 0, 0},
    {"n_negative", 'N', 'N', 4, -1, 3, 4, 3, 4, 14, 0, 0},
    {"k_negative", 'N', 'N', 4, 5, -1, 4, 3, 4, 14, 0, 0},
    {"lda_short", 'N', 'N', 4, 5, 3, 3, 3, 4, 14, 0, 0},
    {"lda_short_c", 'C', 'N', 4, 5, 3, 2, 3, 4, 14, 0, 0},
    {"ldb_short", 'N', 'N', 4, 5, 3, 4, 2, 4, 14, 0, 0},
    {"ldb_short_t", 'N', 'T', 4, 5, 3, 4, 4, 4, 14, 0, 0},
    {"ldc_short", 'N', 'N', 4, 5, 3, 4, 3, 3, 14, 0, 0},
    {"moduli_1", 'N', 'N', 4, 5, 3, 4, 3, 4, 1, 0, 0},
    {"moduli_21", 'N', 'N', 4, 5, 3, 4, 3, 4, 21, 0, 0},
    {"scaling_7", 'N', 'N', 4, 5, 3, 4, 3, 4, 14, 7, 0},
    {"auto_accuracy_500", 'N', 'N', 4, 5, 3, 4, 3, 4, OZDGEMM_MODULI_AUTO, 0, 500},
    {"certified_accuracy_m5", 'N', 'N', 4, 5, 3, 4, 3, 4, OZDGEMM_MODULI_CERTIFIED, 0, -5},
    {"empty_but_bad_option", 'N', 'N', 0, 5, 3, 1, 3, 1, 25, 0, 0},
};

// Stores a scaling code as a C caller would: an int, possibly none of the enum's values (which
// C++ code must not form as an ozdgemm_scaling_t).
void set_scaling_code(ozdgemm_options_t* o, int code) {
  static_assert(sizeof code == sizeof o->scaling, "ozdgemm_scaling_t is an int in C");
  std::memcpy(&o->scaling, &code, sizeof code);
}

TEST(ZgemmReference, InvalidArgumentsLeaveCUntouched) {
  const zmatrix A = phi_zmatrix(8, 8, 1.0, 101), B = phi_zmatrix(8, 8, 1.0, 102);
  const zmatrix C0 = phi_zmatrix(8, 8, 1.0, 103);
  for (const bad_case& b : kBad) {
    zmatrix C = C0;
    ozdgemm_options_t o = ozdgemm_default_options();
    o.num_moduli = b.moduli;
    set_scaling_code(&o, b.scaling);
    o.accuracy = b.accuracy;
    EXPECT_EQ(ozdgemm_zgemm_reference(b.ta, b.tb, b.m, b.n, b.k, cu(kAlpha), cu(A.ptr()), b.lda,
                                      cu(B.ptr()), b.ldb, cu(kBeta), cu(C.ptr()), b.ldc, o),
              OZDGEMM_STATUS_INVALID_VALUE)
        << b.name;
    EXPECT_TRUE(same_bits(C, C0)) << b.name << ": C written";
  }
}

// The device entry checks the same rules before it touches the handle, alpha, beta or any
// matrix: every pointer here lies in a PROT_NONE mapping (a dereference kills the test), so the
// checks run without a GPU. A null handle is NOT_INITIALIZED first, as cuBLAS reports it.
TEST(ZgemmDevice, RefusesInvalidArgumentsBeforeTouchingAnything) {
  constexpr size_t kBytes = 65536;
  void* base = mmap(nullptr, kBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(base, MAP_FAILED);
  const auto at = [&](size_t off) {
    return reinterpret_cast<cuDoubleComplex*>(static_cast<char*>(base) + off);
  };
  const cublasHandle_t handle = reinterpret_cast<cublasHandle_t>(at(40960));
  const auto op = [](char t) {
    return t == 'N' ? CUBLAS_OP_N : t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
  };
  for (const bad_case& b : kBad) {
    // An unknown cublasOperation_t is no value C++ may pass (UBSan's enum check): the GPU test
    // compares those with cublasZgemm; the BLAS characters above cover the parser here.
    if (std::strchr("NTC", b.ta) == nullptr || std::strchr("NTC", b.tb) == nullptr) continue;
    ozdgemm_options_t o = ozdgemm_default_options();
    o.num_moduli = b.moduli;
    set_scaling_code(&o, b.scaling);
    o.accuracy = b.accuracy;
    EXPECT_EQ(ozdgemm_zgemm(handle, op(b.ta), op(b.tb), b.m, b.n, b.k, at(24576), at(0), b.lda,
                            at(8192), b.ldb, at(32768), at(16384), b.ldc, o),
              OZDGEMM_STATUS_INVALID_VALUE)
        << b.name;
    int s = -1;
    EXPECT_EQ(ozdgemm_zgemm_ex(handle, op(b.ta), op(b.tb), b.m, b.n, b.k, at(24576), at(0), b.lda,
                               at(8192), b.ldb, at(32768), at(16384), b.ldc, o, &s),
              OZDGEMM_STATUS_INVALID_VALUE)
        << b.name;
    EXPECT_EQ(s, 0);
  }
  const ozdgemm_options_t o = ozdgemm_default_options();
  EXPECT_EQ(ozdgemm_zgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, -1, 5, 3, at(24576), at(0), 4,
                          at(8192), 3, at(32768), at(16384), 4, o),
            OZDGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(ozdgemm_zgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, 3, nullptr, at(0), 4, at(8192), 3,
                          at(32768), at(16384), 4, o),
            OZDGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozdgemm_zgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, 3, at(24576), at(0), 4, at(8192),
                          3, nullptr, at(16384), 4, o),
            OZDGEMM_STATUS_INVALID_VALUE);
  // n and k up to 2^30 - 16 only (the embedded problem has 2n' columns and depth 2k', n' and k'
  // rounded up to 16); m to 2^31 - 17 as for DGEMM.
  const int64_t half = (int64_t{1} << 30) - 16;
  EXPECT_EQ(ozdgemm_zgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, half + 1, 1, at(24576), at(0), 1,
                          at(8192), 1, at(32768), at(16384), 1, o),
            OZDGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(ozdgemm_zgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, half + 1, at(24576), at(0), 1,
                          at(8192), half + 1, at(32768), at(16384), 1, o),
            OZDGEMM_STATUS_INVALID_VALUE);
  // Extents counted in 16-byte elements: A spans about 1.25 2^59 elements, which would fit
  // PTRDIFF_MAX as doubles but not as complex values.
  const int64_t lda = (int64_t{1} << 30) + (int64_t{1} << 28);
  EXPECT_EQ(ozdgemm_zgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 1 << 29, at(24576), at(0), lda,
                          at(8192), int64_t{1} << 29, at(32768), at(16384), 16, o),
            OZDGEMM_STATUS_INVALID_VALUE);
  // Valid, addressable sizes whose workspace (the engine's for m x 2n x 2k plus A', B*, T)
  // cannot be counted: an allocation failure, before the handle or alpha is read.
  const int64_t big_m = (int64_t{1} << 31) - 17, big_k = int64_t{1} << 27;
  EXPECT_EQ(ozdgemm_zgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, big_m, 16, big_k, at(24576), at(0),
                          big_m, at(8192), big_k, at(32768), at(16384), big_m, o),
            OZDGEMM_STATUS_ALLOC_FAILED);
  // Empty results return at once, touching nothing.
  EXPECT_EQ(ozdgemm_zgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 0, 5, 3, at(24576), at(0), 1, at(8192),
                          3, at(32768), at(16384), 1, o),
            OZDGEMM_STATUS_SUCCESS);
  munmap(base, kBytes);
}

// The complex call's workspace is the engine's for the embedded m x 2n' x 2k' call (with the
// Karatsuba form's arrays in that form), then A' (16 m k' bytes), B* (32 k' n') and T (16 m n'),
// each 256-byte aligned: nothing else, and sized once (docs/complex_calls.md, section 2).
TEST(ZgemmWorkspace, EngineForTheEmbeddedCallPlusThePacks) {
  using detail::complex_form;
  for (complex_form form : {complex_form::karatsuba, complex_form::four})
    for (int moduli : {14, OZDGEMM_MODULI_CERTIFIED})
      for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
        for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{100, 50, 70},
                                      std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                                      std::tuple<int64_t, int64_t, int64_t>{300, 7, 4096}}) {
          detail::complex_gemm call{};
          call.p = detail::complex_problem{m, n, k, {}, {}, nullptr, m};
          call.real.moduli = setting_of(moduli);
          call.real.mode = mode;
          call.real.int8_gemm = detail::int8_gemm_backend::cublas;
          size_t bytes = 0;
          detail::set_complex_form_setting(form);
          const bool sized = detail::size_complex_workspace(&call, &bytes);
          detail::set_complex_form_setting(complex_form::setting);
          ASSERT_TRUE(sized);
          const int64_t kh = detail::embedding_half(k), nh = detail::embedding_half(n);
          // The Karatsuba form with fast scaling only (engine/complex_gemm.hpp).
          const bool karatsuba = form == complex_form::karatsuba && mode == scaling_mode::fast;
          EXPECT_EQ(karatsuba, detail::uses_karatsuba(form, mode, m, n, k));
          const detail::karatsuba_halves halves =
              karatsuba ? detail::karatsuba_halves{kh, nh} : detail::karatsuba_halves{};
          EXPECT_EQ(call.real.karatsuba.k, halves.k);
          EXPECT_EQ(call.real.karatsuba.n, halves.n);
          size_t engine = 0;
          ASSERT_TRUE(detail::emulation_workspace_bytes(m, 2 * nh, 2 * kh, call.real.moduli, mode,
                                                        &engine, detail::int8_gemm_backend::cublas,
                                                        0, halves));
          EXPECT_EQ(call.engine_bytes, engine);
          if (karatsuba) {  // the sums of halves and the third product
            size_t four = 0;
            ASSERT_TRUE(detail::emulation_workspace_bytes(m, 2 * nh, 2 * kh, call.real.moduli, mode,
                                                          &four,
                                                          detail::int8_gemm_backend::cublas));
            EXPECT_GT(engine, four);
          }
          const size_t packs = 16 * static_cast<size_t>(m * kh + 2 * kh * nh + m * nh);
          EXPECT_GE(bytes, engine + packs);
          EXPECT_LE(bytes, engine + packs + 3 * 255) << "only alignment padding besides";
          EXPECT_EQ(call.real.p.m, m);
          EXPECT_EQ(call.real.p.n, 2 * nh);
          EXPECT_EQ(call.real.p.k, 2 * kh);
        }
  // Halves that are not those of the problem are refused.
  size_t bytes = 0;
  EXPECT_FALSE(detail::emulation_workspace_bytes(
      16, 64, 64, detail::moduli_setting::fixed(14), scaling_mode::fast, &bytes,
      detail::int8_gemm_backend::cublas, 0, detail::karatsuba_halves{16, 32}));
  detail::complex_gemm huge{};
  huge.p = detail::complex_problem{
      int64_t{1} << 40, int64_t{1} << 40, int64_t{1} << 40, {}, {}, nullptr, 1};
  huge.real.moduli = detail::moduli_setting::fixed(14);
  huge.real.mode = scaling_mode::fast;
  EXPECT_FALSE(detail::size_complex_workspace(&huge, &bytes)) << "sizes that overflow";
}

}  // namespace
}  // namespace ozdgemm::test
