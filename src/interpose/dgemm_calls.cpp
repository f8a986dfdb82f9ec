// DGEMM's host entry points (blas_calls.hpp), Fortran and CBLAS, for every name family.
#include <cstdint>
#include <vector>

#include "common/logging.hpp"
#include "host_path/offload.hpp"
#include "interpose/blas_calls.hpp"

namespace ozdgemm::detail {

void log_not_run(const char* entry, const char* missing_cblas) noexcept {
  try {
    if (missing_cblas != nullptr)
      logger().error(
          "{}: invalid arguments, and the CPU BLAS has no {} to report them; C left "
          "unchanged",
          entry, missing_cblas);
    else
      logger().error("{}: no CPU BLAS to run this call (see above); C left unchanged", entry);
  } catch (...) {
  }
}

namespace {

// DGEMM's checks (reference dgemm.f, INFO 3, 4, 5, 8, 10, 13) on a column-major call.
bool valid_sizes(const host_gemm& g) {
  return valid_gemm_shape(g.opa, g.opb, g.m, g.n, g.k, g.lda, g.ldb, g.ldc);
}

}  // namespace

template <gemm_family F>
bool to_host_gemm(const fortran_gemm_args<F>& f, host_gemm* g) {
  if (!f.complete())
    return false;  // not a valid Fortran call: let the CPU BLAS do what it does with it
  if (!parse_op(*f.transa, op_spelling::blas_char, &g->opa) ||
      !parse_op(*f.transb, op_spelling::blas_char, &g->opb))
    return false;
  g->m = *f.m;
  g->n = *f.n;
  g->k = *f.k;
  g->alpha = *f.alpha;
  g->a = f.a;
  g->lda = *f.lda;
  g->b = f.b;
  g->ldb = *f.ldb;
  g->beta = *f.beta;
  g->c = f.c;
  g->ldc = *f.ldc;
  return valid_sizes(*g);
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the row-major buffers read
// column-major are the transposes, so B's buffer becomes the first operand with B's op, and
// m and n swap. This is what reference CBLAS does before calling dgemm_.
template <gemm_family F>
bool to_host_gemm(const cblas_dgemm_args<F>& x, host_gemm* g) {
  op_kind opa, opb;
  if (!parse_op(x.transa, op_spelling::cblas, &opa) ||
      !parse_op(x.transb, op_spelling::cblas, &opb))
    return false;
  if (x.layout == kCblasColMajor)
    *g = host_gemm{opa, opb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc};
  else if (x.layout == kCblasRowMajor)
    *g = host_gemm{opb, opa, x.n, x.m, x.k, x.alpha, x.b, x.ldb, x.a, x.lda, x.beta, x.c, x.ldc};
  else
    return false;
  return valid_sizes(*g);
}

namespace {

template <gemm_family F>
void forward(const char* entry, const fortran_gemm_args<F>& f) noexcept {
  forward_fortran<F, gemm_routine::dgemm>(entry, f);
}

template <gemm_family F>
void forward(const char* entry, const cblas_dgemm_args<F>& x) noexcept {
  forward_dgemm<F>(entry, x);
}

}  // namespace

template <gemm_family F>
void forward_dgemm(const char* entry, const cblas_dgemm_args<F>& x) noexcept {
  if (auto real = cpu_cblas_dgemm<F>()) {
    real(x.layout, x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c,
         x.ldc);
    return;
  }
  // A CPU BLAS without CBLAS: a valid call runs as the equivalent column-major Fortran call.
  host_gemm g{};
  auto real = cpu_fortran_gemm<F, gemm_routine::dgemm>();
  if (real != nullptr && to_host_gemm(x, &g)) {
    dgemm_columns<F>(real, g, 0, g.n);
    return;
  }
  log_not_run(entry, real != nullptr ? gemm_name(F, gemm_routine::cblas_dgemm) : nullptr);
}

namespace {

// The column ranges of a column-major call that the GPU path left (its workers failed part
// way), on the CPU BLAS. The other columns already hold their results and are not touched
// again: with beta != 0 computing them twice would read the result as C.
template <gemm_family F>
void finish_on_cpu(const char* entry, const host_gemm& g,
                   const std::vector<column_range>& left) noexcept {
  auto real = cpu_fortran_gemm<F, gemm_routine::dgemm>();
  for (const column_range& r : left) {
    if (real != nullptr) {
      dgemm_columns<F>(real, g, r.j0, r.count);
      continue;
    }
    try {
      logger().error("{}: no CPU BLAS to finish columns {}..{}; they are left unchanged", entry,
                     r.j0, r.j0 + r.count - 1);
    } catch (...) {
    }
  }
}

template <gemm_family F, class Args>
void serve(const char* entry, const Args& x) noexcept {
  serve_call(
      entry,
      [&] {
        host_gemm g{};
        return to_host_gemm(x, &g) && offer_host_gemm<F>(entry, g);
      },
      [&] { forward(entry, x); });
}

}  // namespace

template <gemm_family F>
bool offer_host_gemm(const char* entry, const host_gemm& g) noexcept {
  const host_offload_result r = try_host_offload(g, entry);
  if (r.served) finish_on_cpu<F>(entry, g, r.left);
  return r.served;
}

template <gemm_family F>
void cpu_dgemm(const char* entry, const host_gemm& g) noexcept {
  if (auto real = cpu_fortran_gemm<F, gemm_routine::dgemm>())
    dgemm_columns<F>(real, g, 0, g.n);
  else
    log_not_run(entry);
}

template <gemm_family F>
void serve_dgemm(const char* entry, const fortran_gemm_args<F>& x) noexcept {
  serve<F>(entry, x);
}

template <gemm_family F>
void serve_dgemm(const char* entry, const cblas_dgemm_args<F>& x) noexcept {
  serve<F>(entry, x);
}

#define OZDGEMM_INSTANTIATE(F)                                                     \
  template void serve_dgemm<F>(const char*, const fortran_gemm_args<F>&) noexcept; \
  template void serve_dgemm<F>(const char*, const cblas_dgemm_args<F>&) noexcept;
OZDGEMM_INSTANTIATE(gemm_family::lp64)
OZDGEMM_INSTANTIATE(gemm_family::ilp64)
OZDGEMM_INSTANTIATE(gemm_family::scipy_lp64)
OZDGEMM_INSTANTIATE(gemm_family::scipy_ilp64)
#undef OZDGEMM_INSTANTIATE

// What the strided-batch hooks use (LP64 only).
template bool to_host_gemm(const fortran_gemm_args<gemm_family::lp64>&, host_gemm*);
template bool to_host_gemm(const cblas_dgemm_args<gemm_family::lp64>&, host_gemm*);
template bool offer_host_gemm<gemm_family::lp64>(const char*, const host_gemm&) noexcept;
template void cpu_dgemm<gemm_family::lp64>(const char*, const host_gemm&) noexcept;
template void forward_dgemm<gemm_family::lp64>(const char*,
                                               const cblas_dgemm_args<gemm_family::lp64>&) noexcept;

}  // namespace ozdgemm::detail
