// What the CPU and GPU ZGEMM tests share to call the library: std::complex <-> cuDoubleComplex
// views, the options of a moduli setting, and the internal complex_problem of stored matrices
// (for reference_zgemm, which reports the s a call uses). Header-only.
#pragma once

#include <cuComplex.h>

#include <cstdint>
#include <string>

#include "core/complex_embedding.hpp"
#include "core/moduli_setting.hpp"
#include "ozdgemm/ozdgemm.h"
#include "support/dd_reference.hpp"

namespace ozdgemm::test {

// std::complex<double> and cuDoubleComplex are both two doubles, (re, im).
inline const cuDoubleComplex* cu(const zdouble* z) {
  return reinterpret_cast<const cuDoubleComplex*>(z);
}
inline cuDoubleComplex* cu(zdouble* z) { return reinterpret_cast<cuDoubleComplex*>(z); }
inline cuDoubleComplex cu(zdouble z) { return make_cuDoubleComplex(z.real(), z.imag()); }

inline std::string setting_name(int moduli) {
  if (moduli == OZDGEMM_MODULI_AUTO) return "auto";
  if (moduli == OZDGEMM_MODULI_CERTIFIED) return "certified";
  return "s" + std::to_string(moduli);
}

inline ozdgemm_options_t zoptions(int moduli, bool fast) {
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = moduli;
  o.scaling = fast ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE;
  return o;
}

inline detail::moduli_setting setting_of(int moduli) {
  if (moduli == OZDGEMM_MODULI_AUTO) return detail::moduli_setting::automatic();
  if (moduli == OZDGEMM_MODULI_CERTIFIED) return detail::moduli_setting::certified();
  return detail::moduli_setting::fixed(moduli);
}

// The complex_problem of stored matrices for BLAS TRANS characters 'N', 'T', 'C'.
inline detail::complex_problem zproblem_of(char ta, char tb, int64_t m, int64_t n, int64_t k,
                                           const zdouble* A, int64_t lda, const zdouble* B,
                                           int64_t ldb, zdouble* C, int64_t ldc) {
  const auto kind = [](char t) { return t == 'N' ? detail::op_kind::n : detail::op_kind::t; };
  return detail::complex_problem{
      m,
      n,
      k,
      detail::complex_operand_a(kind(ta), ta == 'C', reinterpret_cast<const double*>(A), lda),
      detail::complex_operand_b(kind(tb), tb == 'C', reinterpret_cast<const double*>(B), ldb),
      reinterpret_cast<double*>(C),
      ldc};
}

}  // namespace ozdgemm::test
