// The engine's blocks of a call computing one triangle of C (engine/pipeline.hpp's block_cols over
// engine/layout.hpp's row blocks) against what the model prices and the kernels need: every
// element of the triangle lies in its row block's span of columns (so the INT8 GEMMs compute it),
// and the spans' products add up to level3/priced.hpp's triangle_share of the square, for real
// calls and for a complex call's Karatsuba halves. Host arithmetic only: no GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/gemm_problem.hpp"
#include "core/karatsuba.hpp"
#include "engine/emulate.hpp"
#include "engine/layout.hpp"
#include "engine/pipeline.hpp"
#include "level3/priced.hpp"

namespace ozdgemm::test {
namespace {

using detail::c_part;

struct spans_seen {
  bool covered = true;    // every element of the triangle inside its block's span
  double products = 0.0;  // rows x columns over the blocks (unpadded rows)
};

// n: C's order; complex: the embedding's Karatsuba halves (n' columns a side).
spans_seen walk(int64_t n, int64_t rows, c_part part, bool complex) {
  detail::device_gemm call{};
  call.part = part;
  call.row_block = rows;
  const int64_t half = detail::round_up(n, detail::kPad);
  if (complex) call.karatsuba = detail::karatsuba_halves{half, half};
  const detail::layout L = detail::layout_for(
      nullptr, n, complex ? 2 * half : n, complex ? 2 * half : n, 14, detail::scaling_mode::fast,
      false, false, detail::int8_gemm_backend::cublas, rows, call.karatsuba);
  EXPECT_TRUE(L.fits);
  spans_seen seen;
  for (int64_t rb = 0; rb < L.row_blocks; ++rb) {
    const auto [i0, block_rows] = detail::block_rows(L, rb);
    const detail::col_span s = detail::block_cols(call, L, i0, block_rows);
    const int64_t real_rows = n - i0 < block_rows ? n - i0 : block_rows;
    for (int64_t i = i0; i < i0 + real_rows; ++i) {
      // Row i's elements of the triangle: columns [0, i] (lower) or [i, n) (upper).
      const int64_t first = part == c_part::lower ? 0 : i, last = part == c_part::lower ? i : n - 1;
      seen.covered = seen.covered && s.c0 <= first && last < s.c1;
    }
    const int64_t c1 = s.c1 < n ? s.c1 : n;
    seen.products += static_cast<double>(real_rows) * static_cast<double>(c1 - s.c0);
  }
  return seen;
}

TEST(TriangleBlocks, SpansCoverTheTriangleAndAddUpToTheModelsShare) {
  for (const bool complex : {false, true})
    for (const c_part part : {c_part::lower, c_part::upper})
      for (const int64_t n : {200, 1100, 4096, 16384}) {
        const int64_t rows = n < 1024 ? 48 : detail::triangle_rows(n);
        const spans_seen seen = walk(n, rows, part, complex);
        EXPECT_TRUE(seen.covered) << n << (complex ? " complex" : " real");
        EXPECT_GT(seen.products, 0.5 * n * n);
        // The model counts whole blocks of `rows` rows over n columns; the engine's last block
        // and its columns stop at n.
        const double share = seen.products / (static_cast<double>(n) * n);
        EXPECT_NEAR(share, detail::triangle_share(n, rows), 1e-12)
            << n << (complex ? " complex" : " real")
            << (part == c_part::lower ? " lower" : " upper");
      }
}

}  // namespace
}  // namespace ozdgemm::test
