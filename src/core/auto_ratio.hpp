// The per-vector term of the automatic moduli count's error model (core/moduli_choice.hpp):
//   r_v = k 2^-e_v / (nnz_v 2^(exp_sum_v / nnz_v)),
// evaluated with the same IEEE operations on the host and the device, so that the GPU's choice
// of s equals the host reference's bit for bit. std::exp2 and CUDA's exp2 may differ in the last
// place, which could flip "eps(s) <= target" at a tie; here the integer part of the mean
// exponent goes into an exact power-of-two scaling and the fractional part through a fixed
// polynomial evaluated with explicit fma_rn (core/hd.hpp), with correctly rounded divisions.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace ozdgemm::detail {

// Correctly rounded a / b on both sides (nvcc's plain '/' is IEEE too unless -prec-div=false;
// the intrinsic makes it independent of flags).
OZDGEMM_HD double div_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// 2^-x for x in [0, 1]: the Taylor series of exp(-x ln 2) to degree 17 (truncation below
// 2^-60 relative), coefficients rounded to nearest double, Horner with fma_rn. Accuracy matters
// little (the result feeds a model); determinism is the point.
OZDGEMM_HD double pow2_neg_unit(double x) {
  constexpr double c[18] = {
      0x1.0000000000000p+0,   -0x1.62e42fefa39efp-1,  0x1.ebfbdff82c58fp-3,
      -0x1.c6b08d704a0c0p-5,  0x1.3b2ab6fba4e77p-7,   -0x1.5d87fe78a6731p-10,
      0x1.430912f86c787p-13,  -0x1.ffcbfc588b0c7p-17, 0x1.62c0223a5c824p-20,
      -0x1.b5253d395e7c4p-24, 0x1.e4cf5158b8ecap-28,  -0x1.e8cac7351bb25p-32,
      0x1.c3bd650fc2986p-36,  -0x1.816193166d0f9p-40, 0x1.314964d5878a9p-44,
      -0x1.c36e843b04022p-49, 0x1.38e89ae79f8b4p-53,  -0x1.98444b41c25a8p-58};
  double p = c[17];
  OZDGEMM_UNROLL
  for (int i = 16; i >= 0; --i) p = fma_rn(p, x, c[i]);
  return p;
}

// r_v for a vector with nnz > 0 nonzero finite entries whose exponents sum to exp_sum, scaled by
// 2^e, in a product of depth k. The mean exponent exp_sum / nnz = q + rem / nnz with
// q = floor(exp_sum / nnz) (exact integers), so r_v = (k / nnz) 2^-(rem / nnz) 2^-(e + q).
// Overflow gives +inf (the model then rules every s out), never NaN.
OZDGEMM_HD double truncation_ratio(int64_t k, int64_t nnz, int64_t exp_sum, int e) {
  int64_t q = exp_sum / nnz;
  int64_t rem = exp_sum - q * nnz;
  if (rem < 0) {  // C++ division truncates toward zero; make it floor
    --q;
    rem += nnz;
  }
  const double frac = div_rn(static_cast<double>(rem), static_cast<double>(nnz));
  const double base = mul_rn(div_rn(static_cast<double>(k), static_cast<double>(nnz)),
                             pow2_neg_unit(frac));
  int64_t sh = -(static_cast<int64_t>(e) + q);
  sh = sh > 4000 ? 4000 : (sh < -4000 ? -4000 : sh);  // beyond the double range either way
  return scale_pow2(base, static_cast<int>(sh));
}

}  // namespace ozdgemm::detail
