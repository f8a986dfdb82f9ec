// Portable primitives shared by the CUDA kernels and the host reference.
//
// Everything in src/core is compiled twice: by nvcc for the device and by the host compiler
// for the reference pipeline. Bit-identity between the two rests on this file: integer
// helpers are exact, and the few floating-point operations go through explicit
// round-to-nearest intrinsics so that neither compiler may contract or reorder them.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define OZDGEMM_HD __host__ __device__ __forceinline__
#define OZDGEMM_UNROLL _Pragma("unroll")
#else
#define OZDGEMM_HD inline
#define OZDGEMM_UNROLL
#endif

namespace ozdgemm::detail {

// Count of leading zero bits of a nonzero 64-bit value.
OZDGEMM_HD int clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

OZDGEMM_HD uint32_t umulhi32(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
#endif
}

OZDGEMM_HD uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
#endif
}

OZDGEMM_HD double bits_double(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// Round-to-nearest arithmetic that no compiler may fuse differently on host and device.
OZDGEMM_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;  // the host reference is built with -ffp-contract=off
#endif
}

OZDGEMM_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

OZDGEMM_HD double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return __builtin_fma(a, b, c);
#endif
}

// Upper and lower bounds of a product, sum or fused product-sum. On the device they are the
// directed roundings; on the host one step past the rounded result, a bound (not the same bits:
// the ratio pass's filter, core/certified_bound.hpp, needs bounds only).
OZDGEMM_HD double mul_up(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_ru(a, b);
#else
  return __builtin_nextafter(a * b, __builtin_inf());
#endif
}

OZDGEMM_HD double mul_down(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rd(a, b);
#else
  return __builtin_nextafter(a * b, -__builtin_inf());
#endif
}

OZDGEMM_HD double add_up(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_ru(a, b);
#else
  return __builtin_nextafter(a + b, __builtin_inf());
#endif
}

OZDGEMM_HD double fma_up(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_ru(a, b, c);
#else
  return __builtin_nextafter(__builtin_fma(a, b, c), __builtin_inf());
#endif
}

OZDGEMM_HD double div_up(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_ru(a, b);
#else
  return __builtin_nextafter(a / b, __builtin_inf());
#endif
}

// Exact unsigned 64-bit -> double, round to nearest even.
OZDGEMM_HD double u64_to_double_rn(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ull2double_rn(static_cast<unsigned long long>(x));
#else
  return static_cast<double>(x);  // IEEE default rounding mode: round to nearest even
#endif
}

// x * 2^e, exact whenever the result is a normal double (one rounding when it is subnormal).
OZDGEMM_HD double scale_pow2(double x, int e) {
#if defined(__CUDA_ARCH__)
  return ::ldexp(x, e);
#else
  return __builtin_ldexp(x, e);
#endif
}

}  // namespace ozdgemm::detail
