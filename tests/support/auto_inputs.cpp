#include "support/auto_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

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

operand_pair anti_aligned_inputs(double phi, int64_t m, int64_t n, int64_t k, uint64_t seed,
                                 bool anti) {
  operand_pair p{phi_matrix(m, k, phi, seed), phi_matrix(k, n, phi, seed + 1)};
  if (!anti) return p;
  std::vector<int64_t> order(static_cast<size_t>(k));
  for (int64_t l = 0; l < k; ++l) order[l] = l;
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return std::fabs(p.a(0, x)) < std::fabs(p.a(0, y));
  });
  for (int64_t j = 0; j < n; ++j) {
    std::vector<double> col(static_cast<size_t>(k));
    for (int64_t l = 0; l < k; ++l) col[l] = p.b(l, j);
    std::sort(col.begin(), col.end(),
              [](double x, double y) { return std::fabs(x) > std::fabs(y); });
    for (int64_t t = 0; t < k; ++t) p.b(order[t], j) = col[t];
  }
  return p;
}

}  // namespace ozdgemm::test
