// What an eager call with the certified count may write (docs/default.md, the speculated
// count), checked bit for bit by the cuBLAS test programs of this folder:
//   - the host reference at the smallest count the data certifies;
//   - the host reference at a larger count (the shape's recent calls certified it, and the
//     chooser kept it only because this call's data certifies it too);
//   - the FP64 fallback (kernels/fallback_gemm.cu) where the launched count was too small: one
//     fused multiply-add chain per element over k, in k steps of 16, then alpha and beta;
//   - native cuBLAS's result where the shape's latest count was none and the call ran native.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "client_support.hpp"

// A column-major GEMM on the host: C = alpha op(A) op(B) + beta C0 (op: 'N' or 'T').
struct host_gemm_case {
  char ta, tb;
  int m, n, k;
  double alpha;
  const double* a;
  int lda;
  const double* b;
  int ldb;
  double beta;
  const std::vector<double>* c0;
  int ldc;
};

// The fallback kernel's result, element for element (its k loop runs in steps of 16, padded with
// zero products, which turn a -0 sum into +0 as on the GPU).
inline std::vector<double> fallback_result(const host_gemm_case& g) {
  constexpr int kStep = 16;
  std::vector<double> c = *g.c0;
  const int k_padded = (g.k + kStep - 1) / kStep * kStep;
  for (int j = 0; j < g.n; ++j)
    for (int i = 0; i < g.m; ++i) {
      double acc = 0.0;
      if (g.alpha != 0.0)
        for (int l = 0; l < k_padded; ++l) {
          const double x = l >= g.k      ? 0.0
                           : g.ta == 'N' ? g.a[i + size_t(l) * g.lda]
                                         : g.a[l + size_t(i) * g.lda];
          const double y = l >= g.k      ? 0.0
                           : g.tb == 'N' ? g.b[l + size_t(j) * g.ldb]
                                         : g.b[j + size_t(l) * g.ldb];
          acc = std::fma(x, y, acc);
        }
      double& e = c[i + size_t(j) * g.ldc];
      const double v = g.alpha == 0.0 ? 0.0 : g.alpha * acc;
      e = g.beta == 0.0 ? v : std::fma(g.beta, e, v);
    }
  return c;
}

// Which of the results above `got` is ("" when none), compared with `same`. `reference` is the
// library's host reference, `native` what native cuBLAS wrote for the same call. Options other
// than the certified count allow the reference at those options only.
template <class Same>
std::string certified_result(ref_fn reference, const ozdgemm_options_t& options,
                             const host_gemm_case& g, const std::vector<double>& native,
                             const std::vector<double>& got, Same same) {
  auto at = [&](const ozdgemm_options_t& o, std::vector<double>* r) {
    *r = *g.c0;
    return reference(g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, r->data(),
                     g.ldc, o) == 0;
  };
  std::vector<double> smallest;
  if (!at(options, &smallest)) return "";
  if (same(smallest, got)) return "reference";
  if (options.num_moduli != OZDGEMM_MODULI_CERTIFIED) return "";
  ozdgemm_options_t fixed = options;
  int certified = 0;
  for (int s = 2; s <= 20; ++s) {
    std::vector<double> r;
    fixed.num_moduli = s;
    if (!at(fixed, &r)) continue;
    if (certified == 0 && same(r, smallest)) certified = s;
    if (certified != 0 && s > certified && same(r, got))
      return "reference at s=" + std::to_string(s);
  }
  if (same(fallback_result(g), got)) return "FP64 fallback";
  if (same(native, got)) return "native";
  return "";
}
