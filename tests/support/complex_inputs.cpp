#include "support/complex_inputs.hpp"

#include <algorithm>
#include <limits>

#include "support/auto_inputs.hpp"

namespace ozdgemm::test {

zmatrix make_zmatrix(int64_t rows, int64_t cols, int64_t ld, zdouble fill) {
  zmatrix z;
  z.rows = rows;
  z.cols = cols;
  z.ld = std::max<int64_t>({ld, rows, 1});
  z.data.assign(static_cast<size_t>(z.ld * std::max<int64_t>(cols, 1)), fill);
  return z;
}

zmatrix from_parts(const host_matrix& re, const host_matrix& im) {
  zmatrix z = make_zmatrix(re.rows, re.cols, re.rows, zdouble(0.0, 0.0));
  for (int64_t j = 0; j < re.cols; ++j)
    for (int64_t i = 0; i < re.rows; ++i) z(i, j) = zdouble(re(i, j), im(i, j));
  return z;
}

zmatrix phi_zmatrix(int64_t rows, int64_t cols, double phi, uint64_t seed) {
  return from_parts(phi_matrix(rows, cols, phi, seed), phi_matrix(rows, cols, phi, seed + 101));
}

zmatrix store_for_zop(const zmatrix& op, char trans, int64_t extra_ld) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool n = trans == 'N' || trans == 'n';
  const bool c = trans == 'C' || trans == 'c';
  const int64_t rows = n ? op.rows : op.cols, cols = n ? op.cols : op.rows;
  zmatrix s = make_zmatrix(rows, cols, rows + extra_ld, zdouble(nan, nan));
  for (int64_t j = 0; j < op.cols; ++j)
    for (int64_t i = 0; i < op.rows; ++i) {
      const zdouble v = op(i, j);
      if (n)
        s(i, j) = v;
      else
        s(j, i) = c ? std::conj(v) : v;
    }
  return s;
}

void anti_aligned_zinputs(double phi, int64_t m, int64_t n, int64_t k, uint64_t seed, zmatrix* a,
                          zmatrix* b) {
  const operand_pair in = anti_aligned_inputs(phi, m, n, k, seed);
  rng r(seed + 17);
  host_matrix im_a = in.a, im_b = in.b;
  for (double& x : im_a.data) x *= 2 * r.uniform() - 1;
  for (double& x : im_b.data) x *= 2 * r.uniform() - 1;
  *a = from_parts(in.a, im_a);
  *b = from_parts(in.b, im_b);
}

}  // namespace ozdgemm::test
