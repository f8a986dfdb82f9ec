#include "reference/certified_choice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/element.hpp"
#include "reference/auto_reference.hpp"

namespace ozdgemm::detail {
namespace {

// Per vector: emax, skip flag, band drop, normalised l1 upper bound, and the INT8 band planes
// planes[p][v * k + l] (what the GPU would write next to the residues).
void vector_pass(const operand& x, int64_t nvec, int64_t k, int bands, std::vector<int>& emax,
                 std::vector<uint8_t>& skip, std::vector<int>& drop, std::vector<double>& norm1,
                 std::vector<std::vector<int8_t>>& planes) {
  emax.assign(nvec, kZeroExponent);
  skip.assign(nvec, 0);
  drop.assign(nvec, 0);
  norm1.assign(nvec, 0.0);
  planes.assign(bands, std::vector<int8_t>(static_cast<size_t>(nvec * k), 0));
  for (int64_t v = 0; v < nvec; ++v) {
    uint8_t flags = 0;
    int64_t exp_sum = 0, nnz = 0;  // the automatic count's statistics (reference_statistics)
    for (int64_t l = 0; l < k; ++l) {
      const double e = x.at(v, l);
      const int ex = exponent_of(e);
      emax[v] = std::max(emax[v], ex);
      flags |= nonfinite_flag(e);
      if (ex != kZeroExponent) {
        exp_sum += ex;
        ++nnz;
      }
    }
    if (emax[v] == kZeroExponent || flags != 0) {
      skip[v] = 1;
      continue;
    }
    drop[v] = band_drop(emax[v], exp_sum, nnz);
    const int top = emax[v] - drop[v];
    uint64_t sum = 0;  // exact: k 2^31 < 2^64 (the GPU adds the same terms with atomics)
    for (int64_t l = 0; l < k; ++l) {
      const double e = x.at(v, l);
      sum += norm1_term(e, emax[v]);
      const band_code bc = magnitude_band(e, top);
      if (bc.code != 0 && bc.band < bands)
        planes[bc.band][static_cast<size_t>(v * k + l)] = static_cast<int8_t>(bc.code);
    }
    norm1[v] = norm_from_sum(sum);
  }
}

}  // namespace

certified_bound_data reference_certified_bound(const gemm_problem& p, int bands,
                                               const std::vector<uint8_t>* terms) {
  certified_bound_data pb;
  pb.m = p.m;
  pb.n = p.n;
  pb.k = p.k;
  pb.bands = std::clamp(bands, 1, kMaxBands);
  std::vector<std::vector<int8_t>> qa, qb;
  vector_pass(p.a, p.m, p.k, pb.bands, pb.emax_a, pb.skip_a, pb.drop_a, pb.na, qa);
  vector_pass(p.b, p.n, p.k, pb.bands, pb.emax_b, pb.skip_b, pb.drop_b, pb.nb, qb);
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
            if (terms != nullptr && (*terms)[static_cast<size_t>(l)] == 0) continue;
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
      // |a_l||b_l| >= qa qb 2^(topA + topB - 12 - 7 (pa + pb)); rounding down keeps a bound.
      pb.w[static_cast<size_t>(j * m + i)] =
          band_lower_bound(g, pb.bands, pb.drop_a[i] + pb.drop_b[j]);
    }
  return pb;
}

double certified_ratio_at_element(const certified_bound_data& pb, int64_t i, int64_t j, int ea, int eb,
                         bool nearest) {
  if (pb.skip_a[i] || pb.skip_b[j]) return 0.0;
  const double w = pb.w[static_cast<size_t>(j * pb.m + i)];
  if (w == 0.0) return std::numeric_limits<double>::infinity();
  return certified_ratio(pb.na[i], pb.nb[j], pb.k, ea + pb.emax_a[i], eb + pb.emax_b[j], w,
                         nearest);
}

double certified_worst_ratio(const certified_bound_data& pb, const std::vector<int>& ea,
                      const std::vector<int>& eb, bool nearest) {
  double worst = 0.0;
  for (int64_t j = 0; j < pb.n; ++j)
    for (int64_t i = 0; i < pb.m; ++i)
      worst = std::max(worst, certified_ratio_at_element(pb, i, j, ea[i], eb[j], nearest));
  return worst;
}

std::array<double, kMaxModuli + 1> certified_ratios(const gemm_problem& p, scaling_mode mode,
                                                   const certified_bound_data& pb) {
  std::array<double, kMaxModuli + 1> r{};
  const scaling_statistics st = reference_statistics(p, mode);
  std::vector<int> ea, eb;
  for (int s = kMinModuli; s <= kMaxModuli; ++s) {
    exponents_for(st, s, ea, eb);
    r[s] = certified_worst_ratio(pb, ea, eb, rounds_to_nearest(moduli_for(s), p.k));
  }
  return r;
}

moduli_choice certified_choose_moduli(const gemm_problem& p, scaling_mode mode,
                                     const accuracy_target& t, int bands) {
  if (p.m == 0 || p.n == 0 || p.k == 0) {
    moduli_choice c;
    c.s = kMinModuli;
    return c;
  }
  if (p.k >= kCertMaxK) {
    moduli_choice c;
    c.why = "certified moduli count: k >= 2^32 is not certified";
    return c;
  }
  const certified_bound_data pb = reference_certified_bound(p, bands);
  const std::array<double, kMaxModuli + 1> r = certified_ratios(p, mode, pb);
  // The ratio is non-increasing in s (every exponent grows with L(s); the test checks it), so
  // choose_moduli's bisection finds the smallest s; it returns an s meeting the target either
  // way.
  return choose_moduli(t, p.k, [&](int s) { return r[s]; });
}

}  // namespace ozdgemm::detail
