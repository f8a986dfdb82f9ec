#include "reference/complex_reference.hpp"

#include "core/checked_math.hpp"
#include "core/moduli.hpp"
#include "reference/auto_reference.hpp"
#include "reference/host_reference.hpp"

namespace ozdgemm::detail {

void complex_epilogue_on_host(const complex_problem& p, const double* t, complex_value alpha,
                              complex_value beta) {
  const int64_t nh = embedding_half(p.n);
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t i = 0; i < p.m; ++i) {
      double* c = p.c + 2 * (j * p.ldc + i);
      const double* t_re = t == nullptr ? nullptr : t + j * p.m + i;
      const double* t_im = t == nullptr ? nullptr : t + (nh + j) * p.m + i;
      const complex_value r = complex_epilogue(t_re, t_im, alpha, beta, c);
      c[0] = r.re;
      c[1] = r.im;
    }
}

host_embedding embed_on_host(const complex_problem& p) {
  host_embedding e;
  const int64_t kh = embedding_half(p.k), nh = embedding_half(p.n);
  e.a_pack.resize(static_cast<size_t>(p.m * 2 * kh));  // zeros in the padding
  e.b_pack.resize(static_cast<size_t>(2 * kh * 2 * nh));
  e.t.resize(static_cast<size_t>(p.m * 2 * nh));
  for (int64_t l = 0; l < p.k; ++l)
    for (int64_t i = 0; i < p.m; ++i) pack_a_element(p.a, p.m, p.k, i, l, false, e.a_pack.data());
  for (int64_t j = 0; j < p.n; ++j)
    for (int64_t l = 0; l < p.k; ++l) pack_b_element(p.b, p.n, p.k, j, l, false, e.b_pack.data());
  e.real = embedded_problem(p, e.a_pack.data(), e.b_pack.data(), e.t.data());
  return e;
}

bool reference_zgemm_scratch_bytes(int64_t m, int64_t n, int64_t k, int num_moduli, size_t* bytes) {
  int64_t n2 = 0, k2 = 0, packs = 0, a = 0, b = 0, t = 0;
  size_t real = 0, pack_bytes = 0;
  if (n < 0 || k < 0 || n > INT64_MAX / 4 || k > INT64_MAX / 4 ||
      !checked_mul(int64_t{2}, embedding_half(n), &n2) ||
      !checked_mul(int64_t{2}, embedding_half(k), &k2) || !checked_mul(m, k2, &a) ||
      !checked_mul(k2, n2, &b) || !checked_mul(m, n2, &t) || !checked_add(a, b, &packs) ||
      !checked_add(packs, t, &packs) || !checked_bytes(packs, sizeof(double), &pack_bytes) ||
      !reference_scratch_bytes(m, n2, k2, num_moduli, &real) ||
      !checked_add(real, pack_bytes, bytes))
    return false;
  return *bytes <= static_cast<size_t>(PTRDIFF_MAX);
}

int reference_zgemm(const complex_problem& p, complex_value alpha, complex_value beta,
                    moduli_setting moduli, scaling_mode mode, const accuracy_target& target,
                    moduli_choice* choice) {
  if (moduli.is_fixed()) moduli_for(moduli.count());  // throws for a count out of range
  const int trivial_s = moduli.is_fixed() ? moduli.count() : kMinModuli;
  if (p.m == 0 || p.n == 0) return trivial_s;
  if (p.k == 0 || is_zero(alpha)) {
    complex_epilogue_on_host(p, nullptr, complex_value{0.0, 0.0}, beta);
    return trivial_s;
  }
  host_embedding e = embed_on_host(p);
  int s = 0;
  if (moduli.chooses_per_call()) {
    const moduli_choice c =
        reference_dgemm_auto(e.real, 1.0, 0.0, mode, target, moduli.is_certified());
    if (choice != nullptr) *choice = c;
    s = c.s;
  } else {
    reference_dgemm(e.real, 1.0, 0.0, moduli.count(), mode);
    s = moduli.count();
  }
  complex_epilogue_on_host(p, e.t.data(), alpha, beta);
  return s;
}

}  // namespace ozdgemm::detail
