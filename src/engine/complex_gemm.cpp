#include "engine/complex_gemm.hpp"

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "common/env.hpp"
#include "common/error.hpp"
#include "common/logging.hpp"
#include "complex_pack.cuh"
#include "core/checked_math.hpp"
#include "engine/run.hpp"

namespace ozdgemm::detail {
namespace {

// Where A', B* and T sit after the engine's arrays (256-byte aligned, as the engine's own).
struct complex_layout {
  double* a_pack;
  double* b_pack;
  double* t;
  size_t total_bytes;
  bool fits;
};

complex_layout layout_for(char* base, const complex_problem& p, size_t engine_bytes) {
  complex_layout L{};
  int64_t k2 = 0, n2 = 0, a_elems = 0, b_elems = 0, t_elems = 0;
  L.fits = checked_mul(int64_t{2}, embedding_half(p.k), &k2) &&
           checked_mul(int64_t{2}, embedding_half(p.n), &n2) && checked_mul(p.m, k2, &a_elems) &&
           checked_mul(k2, n2, &b_elems) && checked_mul(p.m, n2, &t_elems);
  size_t offset = engine_bytes;
  double** slots[3] = {&L.a_pack, &L.b_pack, &L.t};
  const int64_t elems[3] = {a_elems, b_elems, t_elems};
  for (int x = 0; x < 3 && L.fits; ++x) {
    size_t bytes = 0, aligned = 0;
    L.fits = checked_add(offset, size_t{255}, &aligned) &&
             checked_bytes(elems[x], sizeof(double), &bytes) &&
             checked_add(aligned / 256 * 256, bytes, &offset) &&
             offset <= static_cast<size_t>(PTRDIFF_MAX);
    *slots[x] = base == nullptr ? nullptr : reinterpret_cast<double*>(base + aligned / 256 * 256);
  }
  L.total_bytes = offset;
  return L;
}

std::atomic<int> forced_form{static_cast<int>(complex_form::setting)};

// op(B) as op(A) read the other way (device_gemm::embedded_b): the same memory, order and
// leading dimension, C square; op(A)^H when exactly one side conjugates.
b_source embedded_b_of(const complex_problem& p) {
  if (p.m != p.n || p.a.ptr != p.b.ptr || p.a.ld != p.b.ld || p.a.k_contiguous != p.b.k_contiguous)
    return b_source::own;
  return p.a.conjugate == p.b.conjugate ? b_source::a_transposed : b_source::a_conjugated;
}

}  // namespace

complex_form complex_form_from_env_value(const char* value) noexcept {
  if (value == nullptr) return complex_form::automatic;
  if (std::strcmp(value, "karatsuba") == 0) return complex_form::karatsuba;
  if (std::strcmp(value, "four") == 0) return complex_form::four;
  try {  // the wording of dispatch/settings.cpp's other settings
    logger().warn("OZDGEMM_ZGEMM_FORM='{}' is invalid (expected karatsuba|four); using the rule",
                  value);
  } catch (...) {
  }
  return complex_form::automatic;
}

complex_form complex_form_setting() noexcept {
  const auto f = static_cast<complex_form>(forced_form.load(std::memory_order_relaxed));
  if (f != complex_form::setting) return f;
  static const complex_form from_env =
      complex_form_from_env_value(setting_env("OZDGEMM_ZGEMM_FORM"));
  return from_env;
}

void set_complex_form_setting(complex_form f) noexcept {
  forced_form.store(static_cast<int>(f), std::memory_order_relaxed);
}

bool uses_karatsuba(complex_form form, scaling_mode mode, int64_t m, int64_t n,
                    int64_t k) noexcept {
  if (form == complex_form::setting) form = complex_form_setting();
  if (mode != scaling_mode::fast || form == complex_form::four) return false;
  if (form == complex_form::karatsuba) return true;
  // In double: the product of the padded sizes may not fit 64 bits.
  return static_cast<double>(round_up(m, kPad)) * static_cast<double>(embedding_half(n)) *
             static_cast<double>(embedding_half(k)) >=
         34359738368.0;  // 2^35
}

bool size_complex_workspace(complex_gemm* call, size_t* bytes) noexcept {
  const complex_problem& p = call->p;
  if (p.n > INT64_MAX / 4 || p.k > INT64_MAX / 4) return false;
  call->real.p = embedded_problem(p, nullptr, nullptr, nullptr);
  call->real.karatsuba = uses_karatsuba(complex_form::setting, call->real.mode, p.m, p.n, p.k)
                             ? karatsuba_halves{embedding_half(p.k), embedding_half(p.n)}
                             : karatsuba_halves{};
  if (!size_workspace(&call->real, &call->engine_bytes)) return false;
  const complex_layout L = layout_for(nullptr, p, call->engine_bytes);
  if (!L.fits) return false;
  *bytes = L.total_bytes;
  return true;
}

int enqueue_complex(const complex_gemm& call, void* workspace, moduli_choice* choice) {
  const complex_problem& p = call.p;
  const complex_layout L = layout_for(static_cast<char*>(workspace), p, call.engine_bytes);
  if (!L.fits) throw std::length_error("complex GEMM workspace size overflows");
  const cudaStream_t st = call.real.stream;
  launch_pack_a(p.a, p.m, p.k, call.alpha.dev, L.a_pack, st);
  OZDGEMM_CHECK_LAUNCH();
  launch_pack_b(p.b, p.n, p.k, call.alpha.dev, L.b_pack, st);
  OZDGEMM_CHECK_LAUNCH();
  // T = A' B* exactly as a real call with alpha 1, beta 0 computes it: T = RN(1 v) = v.
  device_gemm real = call.real;
  real.p = embedded_problem(p, L.a_pack, L.b_pack, L.t);
  real.alpha = scalar_arg{nullptr, 1.0};
  real.beta = scalar_arg{nullptr, 0.0};
  real.events = nullptr;
  real.mirrored_b = embedding_half(p.n);
  real.embedded_b = embedded_b_of(p);
  if (real.part != c_part::all && !real.karatsuba.on())
    throw std::invalid_argument("a triangle of a complex C needs the Karatsuba form");
  const int s = enqueue_emulation(real, workspace, choice);
  if (s == 0) return 0;  // nothing has touched C
  launch_complex_epilogue(p, L.t, call.alpha, call.beta, st, {}, static_cast<int>(real.part),
                          call.real_diagonal);
  OZDGEMM_CHECK_LAUNCH();
  return s;
}

}  // namespace ozdgemm::detail
