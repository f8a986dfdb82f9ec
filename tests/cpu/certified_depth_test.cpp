// What a band GEMM over part of the depth would cost the certified count (docs/certified.md,
// "Cost"): (|A||B|)_ij is a sum of k non-negative terms, so the sum over any subset of them is
// still a proven lower bound W, only a weaker one, and the certified s can only grow. Checked:
// W over a subset never exceeds W over every term, element by element, and the count never
// drops. DISABLED_DepthSampleTable prints, per set, the count with W from every term, from
// the first k/q terms and from every q-th term (the numbers behind the docs' table):
//   build/ozdgemm_cpu_tests --gtest_filter='CertifiedDepth.DISABLED_*'
//   --gtest_also_run_disabled_tests
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "core/moduli_choice.hpp"
#include "cpu/cpu_test_util.hpp"
#include "reference/certified_choice.hpp"
#include "support/auto_inputs.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test {
namespace {

using detail::scaling_mode;

// Which terms of the depth enter W: every one (q = 1), the first k/q (contiguous), every q-th
// term, or every q-th run of 64 terms (whole runs, as a GEMM's depth tiles would take them).
enum class sample_kind { first, strided, runs };
struct depth_sample {
  const char* name;
  int q;
  sample_kind kind;
};
constexpr depth_sample kSamples[] = {{"k", 1, sample_kind::first},
                                     {"first k/2", 2, sample_kind::first},
                                     {"first k/4", 4, sample_kind::first},
                                     {"first k/8", 8, sample_kind::first},
                                     {"every 4th", 4, sample_kind::strided},
                                     {"every 8th", 8, sample_kind::strided},
                                     {"every 2nd run", 2, sample_kind::runs},
                                     {"every 4th run", 4, sample_kind::runs},
                                     {"every 8th run", 8, sample_kind::runs}};
constexpr int64_t kRun = 64;

std::vector<uint8_t> terms_of(const depth_sample& d, int64_t k) {
  std::vector<uint8_t> t(static_cast<size_t>(k), 0);
  for (int64_t l = 0; l < k; ++l)
    t[static_cast<size_t>(l)] = d.kind == sample_kind::first     ? l < (k + d.q - 1) / d.q
                                : d.kind == sample_kind::strided ? l % d.q == 0
                                                                 : (l / kRun) % d.q == 0;
  return t;
}

// The certified count with W from the sample's terms (kCertBands bands, native target).
int certified_count(const detail::gemm_problem& p, scaling_mode mode,
                    const detail::certified_bound_data& pb) {
  const auto r = detail::certified_ratios(p, mode, pb);
  return detail::choose_moduli({}, p.k, [&](int s) { return r[s]; }).s;
}

// Every sample's W is at most the full W (a sum of fewer non-negative terms), and the count it
// certifies is at least the full W's, or none.
void expect_weaker(const std::string& name, const operand_pair& in, scaling_mode mode,
                   std::vector<int>* counts) {
  host_matrix C = make_matrix(1, 1);
  const detail::gemm_problem p = problem_of(in, C);
  const detail::certified_bound_data full =
      detail::reference_certified_bound(p, detail::kCertBands);
  const int s_full = certified_count(p, mode, full);
  counts->push_back(s_full);
  for (const depth_sample& d : kSamples) {
    if (d.q == 1) continue;
    const std::vector<uint8_t> terms = terms_of(d, p.k);
    const detail::certified_bound_data part =
        detail::reference_certified_bound(p, detail::kCertBands, &terms);
    for (size_t e = 0; e < full.w.size(); ++e)
      ASSERT_LE(part.w[e], full.w[e]) << name << " " << d.name << " element " << e;
    const int s = certified_count(p, mode, part);
    EXPECT_TRUE(s == 0 || (s_full != 0 && s >= s_full)) << name << " " << d.name << " s " << s;
    counts->push_back(s);
  }
}

TEST(CertifiedDepth, SampledTermsGiveAWeakerBound) {
  std::vector<int> counts;
  expect_weaker("phi1", make_auto_inputs({"phi1", auto_set::phi, 1.0, 24, 20, 512, 41}),
                scaling_mode::fast, &counts);
  expect_weaker("anti", anti_aligned_inputs(2.0, 8, 8, 512, 43), scaling_mode::fast, &counts);
  EXPECT_EQ(counts.size(), 2 * std::size(kSamples));
  EXPECT_NE(counts[0], 0);  // the full bound certifies phi = 1 data
}

struct depth_set {
  std::string name;
  operand_pair in;
};

std::vector<depth_set> table_sets() {
  std::vector<depth_set> v;
  uint64_t seed = 900;
  auto add = [&](const std::string& name, auto_set set, double phi, int64_t m, int64_t k) {
    v.push_back({name, make_auto_inputs({name, set, phi, m, m, k, seed += 10})});
  };
  for (int64_t k : {int64_t{4096}, int64_t{16384}}) {
    const std::string kk = "_k" + std::to_string(k);
    add("phi0.5" + kk, auto_set::phi, 0.5, 48, k);
    add("phi1" + kk, auto_set::phi, 1.0, 48, k);
    add("phi2" + kk, auto_set::phi, 2.0, 48, k);
    add("phi4" + kk, auto_set::phi, 4.0, 48, k);
    add("nonneg" + kk, auto_set::nonnegative, 1.0, 48, k);
    add("rows_pm40" + kk, auto_set::rows_pm40, 1.0, 48, k);
    add("huge_row" + kk, auto_set::huge_row, 1.0, 48, k);
    add("near_cancel" + kk, auto_set::near_cancel, 1.0, 48, k);
    for (double phi : {1.0, 2.0})
      v.push_back({"anti_phi" + std::to_string(static_cast<int>(phi)) + kk,
                   anti_aligned_inputs(phi, 8, 8, k, 123)});
    // Large entries meeting small ones along k: every other column of op(A) times 2^40, the
    // matching rows of op(B) times 2^-40.
    operand_pair p{phi_matrix(48, k, 1.0, seed += 10), phi_matrix(k, 48, 1.0, seed += 10)};
    for (int64_t l = 1; l < k; l += 2) {
      for (int64_t i = 0; i < 48; ++i) p.a(i, l) = std::ldexp(p.a(i, l), 40);
      for (int64_t j = 0; j < 48; ++j) p.b(l, j) = std::ldexp(p.b(l, j), -40);
    }
    v.push_back({"k_pm40" + kk, std::move(p)});
    // The mass in the second half of the depth (as in a complex call's embedding of purely
    // imaginary data): the first k/2 columns of op(A) times 2^-30.
    operand_pair h{phi_matrix(48, k, 1.0, seed += 10), phi_matrix(k, 48, 1.0, seed += 10)};
    for (int64_t l = 0; l < k / 2; ++l)
      for (int64_t i = 0; i < 48; ++i) h.a(i, l) = std::ldexp(h.a(i, l), -30);
    v.push_back({"late_mass" + kk, std::move(h)});
  }
  return v;
}

TEST(CertifiedDepth, DISABLED_DepthSampleTable) {
  std::cout << "| set | mode |";
  for (const depth_sample& d : kSamples) std::cout << " " << d.name << " |";
  std::cout << "\n|---|---|";
  for (size_t i = 0; i < std::size(kSamples); ++i) std::cout << "---|";
  std::cout << "\n";
  for (depth_set& ds : table_sets()) {
    for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate}) {
      std::vector<int> counts;
      expect_weaker(ds.name, ds.in, mode, &counts);
      std::cout << "| " << ds.name << " | " << (mode == scaling_mode::fast ? "fast" : "accurate")
                << " |";
      for (size_t i = 0; i < counts.size(); ++i) {
        const int s = counts[i];
        const std::string shown = s == 0 ? "none" : std::to_string(s);
        const bool more = i > 0 && s != counts[0];
        std::cout << " " << (more ? "**" + shown + "**" : shown) << " |";
      }
      std::cout << std::endl;
    }
  }
}

}  // namespace
}  // namespace ozdgemm::test
