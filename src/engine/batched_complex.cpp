#include "engine/batched_complex.hpp"

#include <cstdint>
#include <stdexcept>

#include "common/error.hpp"
#include "complex_pack.cuh"
#include "core/complex_embedding.hpp"
#include "engine/carver.hpp"

namespace ozdgemm::detail {
namespace {

// The packs after the batched engine's arrays: A' [qa][2k'][m], B* [qb][2n'][2k'], T
// [count][2n'][m] (doubles), qa and qb as the engine's (1 for a broadcast operand with fast
// scaling).
struct complex_batch_layout {
  size_t engine_bytes;
  int64_t qa, qb, a_elems, b_elems, t_elems;  // per matrix
  double* a_pack;
  double* b_pack;
  double* t;
  size_t total_bytes;
  bool fits;
};

complex_batch_layout make_layout(void* base, const batch_dims& d, int64_t count) {
  complex_batch_layout L{};
  const batch_dims e = embedded_dims(d);
  if (d.n > INT64_MAX / 4 || d.k > INT64_MAX / 4 ||
      !batched_emulation_workspace_bytes(e, count, &L.engine_bytes)) {
    L.fits = false;
    return L;
  }
  const bool accurate = d.mode == scaling_mode::accurate;
  L.qa = d.broadcast_a && !accurate ? 1 : count;
  L.qb = d.broadcast_b && !accurate ? 1 : count;
  carver c(base);
  c.take<char>(static_cast<int64_t>(L.engine_bytes));
  L.a_elems = c.count(e.m, e.k);
  L.b_elems = c.count(e.k, e.n);
  L.t_elems = c.count(e.m, e.n);
  L.a_pack = c.take<double>(c.count(L.qa, L.a_elems));
  L.b_pack = c.take<double>(c.count(L.qb, L.b_elems));
  L.t = c.take<double>(c.count(count, L.t_elems));
  L.total_bytes = c.used();
  L.fits = c.ok();
  return L;
}

}  // namespace

batch_dims embedded_dims(const batch_dims& d) noexcept {
  batch_dims e = d;
  e.n = 2 * embedding_half(d.n);
  e.k = 2 * embedding_half(d.k);
  return e;
}

bool batched_complex_workspace_bytes(const batch_dims& d, int64_t count, size_t* bytes) noexcept {
  const complex_batch_layout L = make_layout(nullptr, d, count);
  *bytes = L.fits ? L.total_bytes : 0;
  return L.fits;
}

int64_t complex_batch_chunk(const batch_dims& d, int64_t count, size_t budget) noexcept {
  return batch_chunk_by(count, budget, [&](int64_t q, size_t* bytes) {
    return batched_complex_workspace_bytes(d, q, bytes);
  });
}

const char* complex_batch_engine_refusal(int64_t m, int64_t n, int64_t k, moduli_setting moduli,
                                         scaling_mode mode, int8_gemm_backend gemm) noexcept {
  if (m < 1 || n < 1 || k < 1 || n > INT64_MAX / 4 || k > INT64_MAX / 4) return "sizes";
  return batch_engine_refusal(m, 2 * embedding_half(n), 2 * embedding_half(k), moduli, mode, gemm);
}

int enqueue_batched_complex(const complex_gemm_batch& b, void* workspace) {
  const complex_problem& p = b.call.p;
  const device_gemm& real = b.call.real;
  const batch_dims d{p.m,
                     p.n,
                     p.k,
                     real.moduli.count(),
                     b.count > 1 && b.stride_a == 0,
                     b.count > 1 && b.stride_b == 0,
                     resolve_int8_gemm(real.int8_gemm),
                     real.mode};
  const complex_batch_layout L = make_layout(workspace, d, b.count);
  if (!L.fits) throw std::length_error("batched complex workspace size overflows");
  const cudaStream_t st = real.stream;
  // 1. The packs (alpha == 0 in device pointer mode: zeros, reading neither A nor B).
  launch_pack_a(p.a, p.m, p.k, b.call.alpha.dev, L.a_pack, st,
                complex_batch_strides{L.qa, b.stride_a, L.a_elems});
  OZDGEMM_CHECK_LAUNCH();
  launch_pack_b(p.b, p.n, p.k, b.call.alpha.dev, L.b_pack, st,
                complex_batch_strides{L.qb, b.stride_b, L.b_elems});
  OZDGEMM_CHECK_LAUNCH();
  // 2. T_i = A'_i B*_i exactly as the single complex call's real call computes it: T = RN(1 v) = v.
  device_gemm_batch rb{real, b.count, L.qa > 1 ? L.a_elems : 0, L.qb > 1 ? L.b_elems : 0,
                       L.t_elems};
  rb.call.p = embedded_problem(p, L.a_pack, L.b_pack, L.t);
  rb.call.alpha = scalar_arg{nullptr, 1.0};
  rb.call.beta = scalar_arg{nullptr, 0.0};
  rb.call.events = nullptr;
  rb.call.karatsuba = {};
  rb.call.mirrored_b = 0;
  const int s = enqueue_batched_emulation(rb, workspace);
  // 3. C_i = alpha T_i + beta C_i.
  launch_complex_epilogue(p, L.t, b.call.alpha, b.call.beta, st,
                          complex_batch_strides{b.count, b.stride_c, L.t_elems});
  OZDGEMM_CHECK_LAUNCH();
  return s;
}

}  // namespace ozdgemm::detail
