// The native Level-3 routines' speed against the native GEMM's on the GPU of a device call
// (level3/priced.hpp, native_efficiency), as auto mode prices them. Measured on an H100 with
// cuBLAS 13.0 at n = k = 8192 and 16384, two rounds (bench/results/level3/README.md, run 5:
// level3_bench's dsyrk, dtrsm, zherk, ztrsm against dgemm and zgemm of the same order): DSYRK
// 0.76-0.83 of DGEMM's rate on its half of the work, DTRSM 0.55-0.75, ZHERK 1.00-1.03 of ZGEMM's,
// ZTRSM 0.75-0.85. The model takes the fast end of each range (native predicted no slower than
// measured). Other architectures: not measured; GEMM's rate, which favours native.
#pragma once

#include "level3/priced.hpp"

namespace ozdgemm::detail {

inline native_efficiency level3_native_efficiency(int cc_major) {
  if (cc_major == 9) return native_efficiency{0.83, 0.74, 1.0, 0.84};  // Hopper
  return native_efficiency{};
}

}  // namespace ozdgemm::detail
