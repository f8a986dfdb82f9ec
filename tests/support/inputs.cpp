#include "support/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ozdgemm::test {

host_matrix make_matrix(int64_t rows, int64_t cols, int64_t ld, double fill) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("make_matrix: negative size");
  host_matrix x;
  x.rows = rows;
  x.cols = cols;
  x.ld = std::max<int64_t>({ld, rows, 1});
  x.data.assign(static_cast<size_t>(x.ld * std::max<int64_t>(cols, 1)), fill);
  return x;
}

uint64_t rng::next_u64() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double rng::normal() {
  // Box-Muller with u1 in (0, 1] so the logarithm is finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

host_matrix phi_matrix(int64_t rows, int64_t cols, double phi, uint64_t seed, int64_t ld) {
  host_matrix x = make_matrix(rows, cols, ld);
  rng g(seed);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const double u = g.uniform() - 0.5;
      x(i, j) = u * std::exp(phi * g.normal());
    }
  return x;
}

host_matrix nonnegative_matrix(int64_t rows, int64_t cols, double phi, uint64_t seed,
                               int64_t ld) {
  host_matrix x = make_matrix(rows, cols, ld);
  rng g(seed);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const double u = g.uniform();
      x(i, j) = u * std::exp(phi * g.normal());
    }
  return x;
}

void scale_row(host_matrix& x, int64_t i, int e) {
  for (int64_t j = 0; j < x.cols; ++j) x(i, j) = std::ldexp(x(i, j), e);
}

void scale_col(host_matrix& x, int64_t j, int e) {
  for (int64_t i = 0; i < x.rows; ++i) x(i, j) = std::ldexp(x(i, j), e);
}

void zero_row(host_matrix& x, int64_t i) {
  for (int64_t j = 0; j < x.cols; ++j) x(i, j) = 0.0;
}

void zero_col(host_matrix& x, int64_t j) {
  for (int64_t i = 0; i < x.rows; ++i) x(i, j) = 0.0;
}

namespace {

double random_subnormal(rng& g) {
  // mant in [2^(b-1), 2^b) for a random bit count b in [1, 52]: value mant * 2^-1074.
  const int b = 1 + static_cast<int>(g.next_u64() % 52);
  uint64_t mant = g.next_u64() & ((uint64_t{1} << b) - 1);
  mant |= uint64_t{1} << (b - 1);
  const double v = std::ldexp(static_cast<double>(mant), -1074);
  return (g.next_u64() & 1) ? -v : v;
}

}  // namespace

void subnormal_row(host_matrix& x, int64_t i, uint64_t seed) {
  rng g(seed);
  for (int64_t j = 0; j < x.cols; ++j) x(i, j) = random_subnormal(g);
}

void subnormal_col(host_matrix& x, int64_t j, uint64_t seed) {
  rng g(seed);
  for (int64_t i = 0; i < x.rows; ++i) x(i, j) = random_subnormal(g);
}

host_matrix with_ld(const host_matrix& x, int64_t ld, double pad) {
  if (ld < x.rows) throw std::invalid_argument("with_ld: ld < rows");
  host_matrix y = make_matrix(x.rows, x.cols, ld, pad);
  for (int64_t j = 0; j < x.cols; ++j)
    for (int64_t i = 0; i < x.rows; ++i) y(i, j) = x(i, j);
  return y;
}

host_matrix transposed(const host_matrix& x, int64_t ld, double pad) {
  host_matrix y = make_matrix(x.cols, x.rows, std::max(ld, x.cols), pad);
  for (int64_t j = 0; j < x.cols; ++j)
    for (int64_t i = 0; i < x.rows; ++i) y(j, i) = x(i, j);
  return y;
}

host_matrix store_for_op(const host_matrix& op, char trans, int64_t extra_ld) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (trans) {
    case 'N':
    case 'n':
      return with_ld(op, std::max<int64_t>(op.rows, 1) + extra_ld, nan);
    case 'T':
    case 't':
    case 'C':
    case 'c':
      return transposed(op, std::max<int64_t>(op.cols, 1) + extra_ld, nan);
    default:
      throw std::invalid_argument("store_for_op: trans must be N, T or C");
  }
}

operand_pair make_inputs(input_kind kind, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  const uint64_t sa = seed * 2 + 1, sb = seed * 2 + 2;
  auto phi_pair = [&](double phi) {
    return operand_pair{phi_matrix(m, k, phi, sa), phi_matrix(k, n, phi, sb)};
  };
  switch (kind) {
    case input_kind::phi_0p5:
      return phi_pair(0.5);
    case input_kind::phi_1:
      return phi_pair(1.0);
    case input_kind::phi_2:
      return phi_pair(2.0);
    case input_kind::phi_4:
      return phi_pair(4.0);
    case input_kind::nonnegative:
      return operand_pair{nonnegative_matrix(m, k, 1.0, sa), nonnegative_matrix(k, n, 1.0, sb)};
    case input_kind::rows_pm40:
    case input_kind::rows_pm300: {
      const int e = kind == input_kind::rows_pm40 ? 40 : 300;
      operand_pair p = phi_pair(1.0);
      for (int64_t i = 0; i < m; ++i) scale_row(p.a, i, i % 2 == 0 ? e : -e);
      for (int64_t j = 0; j < n; ++j) scale_col(p.b, j, j % 3 == 0 ? -e : e);
      return p;
    }
    case input_kind::inner_pm40:
    case input_kind::inner_pm300: {
      const int e = kind == input_kind::inner_pm40 ? 40 : 300;
      operand_pair p = phi_pair(1.0);
      for (int64_t l = 0; l < k; ++l) scale_col(p.a, l, l % 2 == 0 ? e : -e);
      for (int64_t l = 0; l < k; ++l) scale_row(p.b, l, l % 3 == 0 ? e : -e);
      return p;
    }
    case input_kind::subnormal_rows: {
      operand_pair p = phi_pair(1.0);
      subnormal_row(p.a, 0, seed + 101);
      if (m > 2) subnormal_row(p.a, m / 2, seed + 102);
      subnormal_col(p.b, n - 1, seed + 103);
      return p;
    }
    case input_kind::zero_rows_cols: {
      operand_pair p = phi_pair(1.0);
      zero_row(p.a, std::min<int64_t>(1, m - 1));
      zero_col(p.a, k / 2);
      zero_col(p.b, 0);
      zero_row(p.b, k - 1);
      return p;
    }
    case input_kind::huge_row: {
      operand_pair p = phi_pair(1.0);
      scale_row(p.a, 0, 600);
      return p;
    }
  }
  throw std::invalid_argument("make_inputs: unknown kind");
}

std::string input_kind_name(input_kind kind) {
  switch (kind) {
    case input_kind::phi_0p5: return "phi0p5";
    case input_kind::phi_1: return "phi1";
    case input_kind::phi_2: return "phi2";
    case input_kind::phi_4: return "phi4";
    case input_kind::nonnegative: return "nonnegative";
    case input_kind::rows_pm40: return "rows_pm40";
    case input_kind::rows_pm300: return "rows_pm300";
    case input_kind::inner_pm40: return "inner_pm40";
    case input_kind::inner_pm300: return "inner_pm300";
    case input_kind::subnormal_rows: return "subnormal_rows";
    case input_kind::zero_rows_cols: return "zero_rows_cols";
    case input_kind::huge_row: return "huge_row";
  }
  return "unknown";
}

std::vector<input_kind> all_input_kinds() {
  return {input_kind::phi_0p5,     input_kind::phi_1,          input_kind::phi_2,
          input_kind::phi_4,       input_kind::nonnegative,    input_kind::rows_pm40,
          input_kind::rows_pm300,  input_kind::inner_pm40,     input_kind::inner_pm300,
          input_kind::subnormal_rows, input_kind::zero_rows_cols, input_kind::huge_row};
}

}  // namespace ozdgemm::test
