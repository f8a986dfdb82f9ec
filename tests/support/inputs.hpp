// Test inputs with a controlled exponent spread, and the adversarial cases a scaling rule
// must survive. Plain C++ (no GMP, no CUDA) so the GPU tests can reuse it.
//
// Every generator takes an explicit seed and uses its own generator and transforms (not
// <random>'s distributions, whose output differs between standard libraries), so a failing
// case reproduces bit for bit on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ozdgemm::test {

// A column-major host matrix: element (i, j) at data[j * ld + i], ld >= rows.
struct host_matrix {
  int64_t rows = 0, cols = 0, ld = 1;
  std::vector<double> data;

  double& operator()(int64_t i, int64_t j) { return data[static_cast<size_t>(j * ld + i)]; }
  double operator()(int64_t i, int64_t j) const { return data[static_cast<size_t>(j * ld + i)]; }
  double* ptr() { return data.data(); }
  const double* ptr() const { return data.data(); }
};

// rows x cols, leading dimension max(ld, rows, 1), every entry (padding included) = fill.
host_matrix make_matrix(int64_t rows, int64_t cols, int64_t ld = 0, double fill = 0.0);

// splitmix64: small, fast, and the same sequence everywhere.
class rng {
 public:
  explicit rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64();
  double uniform();  // in [0, 1), 53 random bits
  double normal();   // N(0, 1), Box-Muller
 private:
  uint64_t state_;
};

// Entries (U - 0.5) * exp(phi * N(0, 1)): phi controls the exponent spread (docs/accuracy.md).
host_matrix phi_matrix(int64_t rows, int64_t cols, double phi, uint64_t seed, int64_t ld = 0);

// Entries U * exp(phi * N(0, 1)) >= 0: no cancellation, so every output is as large as the
// scaling bound allows (the case that wraps the CRT when a bound is underestimated).
host_matrix nonnegative_matrix(int64_t rows, int64_t cols, double phi, uint64_t seed,
                               int64_t ld = 0);

// In-place modifiers. Scaling by 2^e uses ldexp (exact while results stay normal).
void scale_row(host_matrix& x, int64_t i, int e);
void scale_col(host_matrix& x, int64_t j, int e);
void zero_row(host_matrix& x, int64_t i);
void zero_col(host_matrix& x, int64_t j);
// Replaces row i / column j by subnormal values (random mantissas, binary exponents in
// [-1074, -1023], random signs).
void subnormal_row(host_matrix& x, int64_t i, uint64_t seed);
void subnormal_col(host_matrix& x, int64_t j, uint64_t seed);

// A copy with leading dimension ld (>= rows); the padding rows are filled with `pad`
// (NaN by default, so an implementation that reads outside the matrix is caught).
host_matrix with_ld(const host_matrix& x, int64_t ld, double pad);
// The transpose, with leading dimension max(ld, cols); padding filled with `pad`.
host_matrix transposed(const host_matrix& x, int64_t ld, double pad);
// The stored matrix whose op(.) under `trans` ('N', 'T' or 'C') is `op`, with `extra_ld`
// padding rows (filled with NaN). op(X) = X for 'N', X^T for 'T' and 'C' (real data).
host_matrix store_for_op(const host_matrix& op, char trans, int64_t extra_ld);

// Named input families for op(A) (m x k) and op(B) (k x n). "rows" means rows of op(A) and
// columns of op(B) (the directions the scaling is per-vector in); "inner" means the k
// direction (an exponent spread inside each dot product).
enum class input_kind {
  phi_0p5,
  phi_1,
  phi_2,
  phi_4,
  nonnegative,         // U * exp(N(0,1)) >= 0 in both operands
  rows_pm40,           // op(A) rows and op(B) columns scaled by 2^+40 / 2^-40 alternately
  rows_pm300,          // ... by 2^+300 / 2^-300
  inner_pm40,          // op(A) columns and op(B) rows scaled by 2^+-40
  inner_pm300,         // ... by 2^+-300
  subnormal_rows,      // two subnormal rows of op(A), one subnormal column of op(B)
  zero_rows_cols,      // zero rows and columns in both operands (inner ones too)
  huge_row,            // one row of op(A) scaled by 2^600
};

struct operand_pair {
  host_matrix a;  // op(A), m x k, ld = m
  host_matrix b;  // op(B), k x n, ld = k
};

operand_pair make_inputs(input_kind kind, int64_t m, int64_t n, int64_t k, uint64_t seed);
std::string input_kind_name(input_kind kind);  // identifier-safe, for test names
std::vector<input_kind> all_input_kinds();

}  // namespace ozdgemm::test
