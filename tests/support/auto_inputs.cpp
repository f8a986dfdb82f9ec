#include "support/auto_inputs.hpp"

#include <cmath>

namespace ozdgemm::test {

operand_pair make_auto_inputs(const auto_case& c) {
  const int64_t m = c.m, n = c.n, k = c.k;
  switch (c.set) {
    case auto_set::phi:
      return operand_pair{phi_matrix(m, k, c.phi, c.seed), phi_matrix(k, n, c.phi, c.seed + 1)};
    case auto_set::nonnegative:
      return operand_pair{nonnegative_matrix(m, k, c.phi, c.seed),
                          nonnegative_matrix(k, n, c.phi, c.seed + 1)};
    case auto_set::rows_pm40: {
      operand_pair p{phi_matrix(m, k, c.phi, c.seed), phi_matrix(k, n, c.phi, c.seed + 1)};
      for (int64_t i = 0; i < m; ++i) scale_row(p.a, i, i % 2 == 0 ? 40 : -40);
      for (int64_t j = 0; j < n; ++j) scale_col(p.b, j, j % 3 == 0 ? -40 : 40);
      return p;
    }
    case auto_set::huge_row: {
      operand_pair p{phi_matrix(m, k, c.phi, c.seed), phi_matrix(k, n, c.phi, c.seed + 1)};
      scale_row(p.a, 0, 600);
      return p;
    }
    case auto_set::near_cancel: {
      operand_pair p{phi_matrix(m, k, c.phi, c.seed), phi_matrix(k, n, c.phi, c.seed + 1)};
      const int64_t h = k / 2;
      rng g(c.seed + 2);
      for (int64_t i = 0; i < m; i += 2)
        for (int64_t l = 0; l < h; ++l)
          p.a(i, h + l) = -p.a(i, l) * (1.0 + std::ldexp(2.0 * g.uniform() - 1.0, -20));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < h; ++l) p.b(h + l, j) = p.b(l, j);
      return p;
    }
  }
  return {};
}

}  // namespace ozdgemm::test
