// The engine's workspace against the workspace bound, s(m+n)k + (s+4)mn bytes (an implementation
// that reduces every INT32 product to bytes before the next): where the INT32 products of all
// of C would exceed it, the GEMM and CRT steps run on blocks of rows of C (engine/emulate.cpp,
// rule_row_block), and the workspace must then fit the bound whenever blocks of at least 1024
// rows can. cuBLASLt's workspace (the lt backend's, at most 64 MB) is not counted, as cuBLAS's
// own is not on the peer's side. Sizing is host code: no GPU needed. The GPU test RowBlocks
// checks the bits.
#include <gtest/gtest.h>

#include <cstdint>

#include "engine/emulate.hpp"

namespace ozdgemm::test {
namespace {

using detail::int8_gemm_backend;
using detail::scaling_mode;

double peer_bound(int64_t m, int64_t n, int64_t k, int s) {
  return static_cast<double>(s) * (static_cast<double>(m) + n) * k +
         (s + 4.0) * static_cast<double>(m) * n;
}

size_t bytes(int64_t m, int64_t n, int64_t k, int s, scaling_mode mode, int8_gemm_backend gemm,
             int64_t row_block = 0) {
  return detail::emulation_workspace_bytes(m, n, k, detail::moduli_setting::fixed(s), mode, gemm,
                                           row_block);
}

TEST(WorkspaceBound, LargeShapesFitThePeersBound) {
  struct shape {
    int64_t m, n, k;
  };
  for (const shape sh :
       {shape{16384, 16384, 16384}, shape{16384, 16384, 4096}, shape{8192, 8192, 8192},
        shape{4096, 4096, 65536}, shape{32768, 8192, 8192}})
    for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
      for (int8_gemm_backend gemm : {int8_gemm_backend::cublas, int8_gemm_backend::lt})
        for (int s : {14, 15, 18, 20}) {
          const size_t b = bytes(sh.m, sh.n, sh.k, s, mode, gemm) -
                           detail::int8_gemm_workspace_bytes(gemm, detail::round_up(sh.m, 16),
                                                             detail::round_up(sh.n, 16));
          const size_t one_block = bytes(sh.m, sh.n, sh.k, s, mode, gemm, sh.m);
          EXPECT_LE(static_cast<double>(b), peer_bound(sh.m, sh.n, sh.k, s))
              << sh.m << "x" << sh.n << "x" << sh.k << " s=" << s;
          EXPECT_LT(b, one_block) << "blocks must shrink the workspace here";
        }
  // The headline shape, s = 15 fast: 24.2 GB as one block, under the bound's 13.2 GB now.
  EXPECT_LT(bytes(16384, 16384, 16384, 15, scaling_mode::fast, int8_gemm_backend::lt),
            size_t{13200} << 20);
}

TEST(WorkspaceBound, SmallShapesKeepOneBlock) {
  // The products fit the bound, or blocks would be under 1024 rows or 2^22 elements of C (the
  // GEMMs get slower: 2048^2 and 2048 x 2048 x 262144 measured so): one block, the layout of
  // before (the same bytes as asking for one block).
  struct shape {
    int64_t m, n, k;
  };
  for (const shape sh :
       {shape{1, 1, 1}, shape{0, 64, 64}, shape{64, 0, 64}, shape{64, 64, 0}, shape{256, 256, 8192},
        shape{1000, 3000, 64}, shape{1024, 1024, 1024}, shape{40, 16384, 16384},
        shape{2048, 2048, 2048}, shape{2048, 2048, 262144}, shape{4096, 1024, 4096}})
    for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
      EXPECT_EQ(bytes(sh.m, sh.n, sh.k, 15, mode, int8_gemm_backend::lt),
                bytes(sh.m, sh.n, sh.k, 15, mode, int8_gemm_backend::lt, sh.m))
          << sh.m << "x" << sh.n << "x" << sh.k;
}

TEST(WorkspaceBound, SmallerBlocksNeedLessWorkspace) {
  size_t last = bytes(4096, 2048, 1024, 15, scaling_mode::fast, int8_gemm_backend::cublas, 4096);
  for (int64_t rows : {2048, 1024, 512, 64, 16}) {
    const size_t b =
        bytes(4096, 2048, 1024, 15, scaling_mode::fast, int8_gemm_backend::cublas, rows);
    // Each halving of the block saves half of the products' 4 s rows n bytes.
    EXPECT_LT(b, last) << rows;
    last = b;
  }
  // Accurate mode: the products share their bytes with the bound GEMM's output (4 m n per
  // k-block), so they never need less than that.
  const size_t acc16 =
      bytes(4096, 2048, 1024, 15, scaling_mode::accurate, int8_gemm_backend::cublas, 16);
  const size_t acc64 =
      bytes(4096, 2048, 1024, 15, scaling_mode::accurate, int8_gemm_backend::cublas, 64);
  EXPECT_EQ(acc16, acc64);
}

}  // namespace
}  // namespace ozdgemm::test
