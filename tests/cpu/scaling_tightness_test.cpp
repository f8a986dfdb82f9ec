// How many bits each scaling rule keeps, against the prototypes of
// support/scaling_prototypes.hpp. The CI test checks that every
// prototype keeps the CRT bound (so the pipeline recovers A'B' exactly and the result obeys
// the truncation bound); the table is run by hand:
//   OZDGEMM_TIGHT_N=512 build/ozdgemm_cpu_tests --gtest_also_run_disabled_tests
//     --gtest_filter='*TightnessTable*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "cpu/accuracy_bound.hpp"
#include "cpu/auto_eval.hpp"
#include "support/scaling_prototypes.hpp"

namespace ozdgemm::test {
namespace {

using detail::prototype_rule;
using detail::scaling_mode;

const char* rule_name(prototype_rule r) {
  switch (r) {
    case prototype_rule::max_element: return "max_element";
    case prototype_rule::cauchy_schwarz_rest: return "cs_rest";
    case prototype_rule::exact_product: return "exact_W";
  }
  return "?";
}

TEST(ScalingPrototypes, KeepTheCrtBoundAndTheTruncationBound) {
  for (input_kind kind : all_input_kinds())
    for (prototype_rule rule : {prototype_rule::max_element, prototype_rule::cauchy_schwarz_rest,
                                prototype_rule::exact_product})
      for (int s : {4, 14, 20}) {
        const int64_t m = 13, n = 9, k = 41;
        const operand_pair in = make_inputs(kind, m, n, k, 31);
        host_matrix C = make_matrix(m, n), R = make_matrix(m, n);
        const detail::gemm_problem p = make_problem('N', 'N', m, n, k, in.a.ptr(), in.a.ld,
                                                    in.b.ptr(), in.b.ld, C.ptr(), C.ld);
        detail::scaling_result sc = detail::prototype_scaling(p, s, rule);
        const detail::scaling_result flags = detail::reference_scaling(p, s, scaling_mode::fast);
        sc.flags_a = flags.flags_a;
        sc.flags_b = flags.flags_b;
        const detail::tightness t = detail::measure_tightness(p, s, sc);
        EXPECT_GE(t.min_headroom, 0.0) << input_kind_name(kind) << " " << rule_name(rule);
        detail::reference_dgemm_with_scaling(p, 1.0, 0.0, s, sc);
        dd_gemm('N', 'N', m, n, k, 1.0, in.a.ptr(), in.a.ld, in.b.ptr(), in.b.ld, 0.0, R.ptr(),
                R.ld);
        const bound_check_result b = check_error_bound(p, sc, 1.0, 0.0, nullptr, C.ptr(),
                                                       R.ptr(), C.ld);
        EXPECT_TRUE(b.first_failure.empty())
            << input_kind_name(kind) << " " << rule_name(rule) << " s=" << s << ": "
            << b.first_failure;
      }
}

TEST(ScalingPrototypes, DISABLED_TightnessTable) {
  const char* env = std::getenv("OZDGEMM_TIGHT_N");
  const int64_t n = env != nullptr ? std::atoll(env) : 256;
  const int s = 14;
  std::cout << "phi,n,rule,bits_a,bits_b,min_headroom,mean_headroom,scaled_err,rel_err,"
               "s_native\n";
  uint64_t seed = 4100;
  for (double phi : {0.5, 1.0, 2.0, 4.0, 8.0}) {
    auto_problem pr({"t", auto_set::phi, phi, n, n, n, seed += 10});
    host_matrix C0 = make_matrix(n, n);
    const detail::gemm_problem p = pr.problem(C0);
    auto row = [&](const std::string& name, const detail::scaling_result& sc, int s_native) {
      const detail::tightness t = detail::measure_tightness(p, s, sc);
      host_matrix C = make_matrix(n, n);
      detail::reference_dgemm_with_scaling(pr.problem(C), 1.0, 0.0, s, sc);
      const measured e = pr.measure(C);
      std::cout << phi << "," << n << "," << name << "," << std::setprecision(4) << t.mean_bits_a
                << "," << t.mean_bits_b << "," << t.min_headroom << "," << t.mean_headroom << ","
                << std::setprecision(3) << e.scaled << "," << e.rel << "," << s_native
                << std::endl;
    };
    for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
      row(mode_name(mode), detail::reference_scaling(p, s, mode), pr.oracle_native(mode));
    for (prototype_rule rule : {prototype_rule::max_element, prototype_rule::cauchy_schwarz_rest,
                                prototype_rule::exact_product}) {
      detail::scaling_result sc = detail::prototype_scaling(p, s, rule);
      sc.flags_a.assign(n, 0);
      sc.flags_b.assign(n, 0);
      row(rule_name(rule), sc, -1);
    }
  }
}

}  // namespace
}  // namespace ozdgemm::test
