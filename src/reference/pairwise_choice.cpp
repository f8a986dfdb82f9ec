#include "reference/pairwise_choice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/element.hpp"
#include "reference/auto_reference.hpp"

namespace ozdgemm::detail {
namespace {

// The smallest double >= x (x >= 0 finite).
double to_double_up(long double x) {
  double d = static_cast<double>(x);
  if (static_cast<long double>(d) < x)
    d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return d;
}

// The largest double <= x.
double u64_to_double_down(uint64_t x) {
  double d = u64_to_double_rn(x);
  if (d >= 0x1p64 || static_cast<uint64_t>(d) > x) d = std::nextafter(d, 0.0);
  return d;
}

// Per vector: emax, skip flag, normalised l1 upper bound, and the INT8 band planes
// planes[p][v * k + l] (what the GPU would write next to the residues).
void vector_pass(const operand& x, int64_t nvec, int64_t k, int bands, std::vector<int>& emax,
                 std::vector<uint8_t>& skip, std::vector<double>& norm1,
                 std::vector<std::vector<int8_t>>& planes) {
  emax.assign(nvec, kZeroExponent);
  skip.assign(nvec, 0);
  norm1.assign(nvec, 0.0);
  planes.assign(bands, std::vector<int8_t>(static_cast<size_t>(nvec * k), 0));
  // Long double sums: |x| 2^-emax is exact in long double for every double x (64-bit
  // significand, exponent range to 2^-16445), each addition errs by at most 2^-64 relative, so
  // (1 + (k + 2) 2^-63) times the computed sum bounds the exact one. (The GPU would add with
  // __dadd_ru, plus k 2^-1074 for terms that underflow when scaled.)
  const long double inflate = 1.0L + static_cast<long double>(k + 2) * std::ldexp(1.0L, -63);
  for (int64_t v = 0; v < nvec; ++v) {
    uint8_t flags = 0;
    for (int64_t l = 0; l < k; ++l) {
      const double e = x.at(v, l);
      emax[v] = std::max(emax[v], exponent_of(e));
      flags |= nonfinite_flag(e);
    }
    if (emax[v] == kZeroExponent || flags != 0) {
      skip[v] = 1;
      continue;
    }
    long double sum = 0.0L;
    for (int64_t l = 0; l < k; ++l) {
      const double e = x.at(v, l);
      sum += std::ldexp(std::fabs(static_cast<long double>(e)), -emax[v]);
      const band_code bc = magnitude_band(e, emax[v]);
      if (bc.code != 0 && bc.band < bands)
        planes[bc.band][static_cast<size_t>(v * k + l)] = static_cast<int8_t>(bc.code);
    }
    norm1[v] = to_double_up(sum * inflate);
  }
}

}  // namespace

band_code magnitude_band(double x, int emax) {
  band_code r;
  const int ex = exponent_of(x);
  if (ex == kZeroExponent) return r;
  const decoded d = decode(x);
  r.band = (emax - ex) / kBandBits;
  const int t = d.exp2 + (kBandBits - 1) + kBandBits * r.band - emax;  // q = floor(mant 2^t)
  const uint64_t q = t >= 0 ? d.mant << t : (-t >= 64 ? 0 : d.mant >> -t);
  r.code = static_cast<int>(q);  // in [1, 127]: 2^(6 - (d mod 7)) <= q < 2^(7 - (d mod 7))
  return r;
}

pairwise_bound reference_pairwise_bound(const gemm_problem& p, int bands) {
  pairwise_bound pb;
  pb.m = p.m;
  pb.n = p.n;
  pb.k = p.k;
  pb.bands = std::clamp(bands, 1, kMaxBands);
  std::vector<std::vector<int8_t>> qa, qb;
  vector_pass(p.a, p.m, p.k, pb.bands, pb.emax_a, pb.skip_a, pb.na, qa);
  vector_pass(p.b, p.n, p.k, pb.bands, pb.emax_b, pb.skip_b, pb.nb, qb);
  const int64_t m = p.m, n = p.n, k = p.k;
  pb.w.assign(static_cast<size_t>(m * n), 0.0);
  // G_d = sum_{q=0..d} Q_q(A) Q_{d-q}(B)^T as one GEMM of depth (d + 1) k (the band planes
  // concatenated along k), summed in INT32 per block of kKBlock terms (each term <= 127^2, so a
  // block stays below 2^31 exactly as the residue GEMMs do) and the blocks added in 64 bits.
  // Then G = sum_d G_d 2^(7 (bands - 1 - d)) exactly (G_0 < k 2^14, shifted by <= 14 bits).
  const int top = kBandBits * (pb.bands - 1);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      if (pb.skip_a[i] || pb.skip_b[j]) continue;
      uint64_t g = 0;
      for (int d = 0; d < pb.bands; ++d) {
        int64_t gd = 0;
        int32_t block = 0;
        int64_t in_block = 0;
        for (int q = 0; q <= d; ++q) {
          const int8_t* ra = qa[q].data() + i * k;
          const int8_t* cb = qb[d - q].data() + j * k;
          for (int64_t l = 0; l < k; ++l) {
            block += static_cast<int32_t>(ra[l]) * static_cast<int32_t>(cb[l]);
            if (++in_block == kKBlock) {
              gd += block;
              block = 0;
              in_block = 0;
            }
          }
        }
        gd += block;
        g += static_cast<uint64_t>(gd) << (top - kBandBits * d);
      }
      // |a_l||b_l| >= qa qb 2^(emaxA + emaxB - 12 - 7 (pa + pb)); rounding down keeps a bound.
      pb.w[static_cast<size_t>(j * m + i)] = scale_pow2(u64_to_double_down(g), -12 - top);
    }
  return pb;
}

double pairwise_ratio_at(const pairwise_bound& pb, int64_t i, int64_t j, int ea, int eb) {
  if (pb.skip_a[i] || pb.skip_b[j]) return 0.0;
  const double w = pb.w[static_cast<size_t>(j * pb.m + i)];
  if (w == 0.0) return std::numeric_limits<double>::infinity();
  // T_ij 2^-(emaxA_i + emaxB_j) <= 2^-hA nb_j + 2^-hB na_i + k 2^-(hA + hB), h = e + emax
  // (the bits kept of each vector's largest entry). Power-of-two scalings are exact here (h is
  // at most kMaxScaledBits + 1 and at least about -1100 for finite inputs, and the results are
  // compared against targets far above 2^-1022; an overflow gives +inf, which only rules s
  // out); the two additions, the division and the product with 1 + 2^-50 = 1 + 8u round to
  // nearest, so the result is >= (t / w) (1 - u)^4 (1 + 8u) > t / w.
  const int ha = ea + pb.emax_a[i], hb = eb + pb.emax_b[j];
  const double t = scale_pow2(pb.nb[j], -ha) + scale_pow2(pb.na[i], -hb) +
                   scale_pow2(static_cast<double>(pb.k), -(ha + hb));
  return (t / w) * (1.0 + 0x1p-50);
}

double pairwise_ratio(const pairwise_bound& pb, const std::vector<int>& ea,
                      const std::vector<int>& eb) {
  double worst = 0.0;
  for (int64_t j = 0; j < pb.n; ++j)
    for (int64_t i = 0; i < pb.m; ++i)
      worst = std::max(worst, pairwise_ratio_at(pb, i, j, ea[i], eb[j]));
  return worst;
}

std::array<double, kMaxModuli + 1> pairwise_ratios(const gemm_problem& p, scaling_mode mode,
                                                   const pairwise_bound& pb) {
  std::array<double, kMaxModuli + 1> r{};
  const scaling_statistics st = reference_statistics(p, mode);
  std::vector<int> ea, eb;
  for (int s = kMinModuli; s <= kMaxModuli; ++s) {
    exponents_for(st, s, ea, eb);
    r[s] = pairwise_ratio(pb, ea, eb);
  }
  return r;
}

moduli_choice pairwise_choose_moduli(const gemm_problem& p, scaling_mode mode,
                                     const accuracy_target& t, int bands) {
  if (p.m == 0 || p.n == 0 || p.k == 0) {
    moduli_choice c;
    c.s = kMinModuli;
    return c;
  }
  const pairwise_bound pb = reference_pairwise_bound(p, bands);
  const std::array<double, kMaxModuli + 1> r = pairwise_ratios(p, mode, pb);
  // The ratio is non-increasing in s (every exponent grows with L(s); the test checks it), so
  // choose_moduli's bisection finds the smallest s; it returns an s meeting the target either
  // way.
  return choose_moduli(t, p.k, [&](int s) { return r[s]; });
}

}  // namespace ozdgemm::detail
