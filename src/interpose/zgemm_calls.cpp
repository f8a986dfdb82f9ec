// ZGEMM's host entry points (blas_calls.hpp), Fortran and CBLAS, for every name family. A call
// is emulated all or nothing (host_path/complex_offload.hpp), else forwarded.
#include <cstdint>

#include "common/logging.hpp"
#include "host_path/complex_offload.hpp"
#include "interpose/blas_calls.hpp"

namespace ozdgemm::detail {
namespace {

complex_value complex_at(const void* z) {
  const double* d = static_cast<const double*>(z);
  return complex_value{d[0], d[1]};
}

// The column-major complex call of valid arguments (ZGEMM's checks, as DGEMM's; C is the
// conjugate transpose).
bool to_complex_problem(int transa, int transb, op_spelling spelling, int64_t m, int64_t n,
                        int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, void* c,
                        int64_t ldc, complex_problem* p) {
  op_kind oa, ob;
  bool ca = false, cb = false;
  if (!parse_op(transa, spelling, &oa, &ca) || !parse_op(transb, spelling, &ob, &cb) ||
      !valid_gemm_shape(oa, ob, m, n, k, lda, ldb, ldc))
    return false;
  *p = complex_problem{m,
                       n,
                       k,
                       complex_operand_a(oa, ca, static_cast<const double*>(a), lda),
                       complex_operand_b(ob, cb, static_cast<const double*>(b), ldb),
                       static_cast<double*>(c),
                       ldc};
  return true;
}

template <gemm_family F>
bool to_complex_problem(const fortran_gemm_args<F>& f, complex_problem* p, complex_value* alpha,
                        complex_value* beta) {
  if (!f.complete()) return false;
  *alpha = complex_at(f.alpha);
  *beta = complex_at(f.beta);
  return to_complex_problem(*f.transa, *f.transb, op_spelling::blas_char, *f.m, *f.n, *f.k, f.a,
                            *f.lda, f.b, *f.ldb, f.c, *f.ldc, p);
}

// Row-major is the column-major transpose, as for DGEMM; the flags (conjugation included) stay
// with their matrices.
template <gemm_family F>
bool to_complex_problem(const cblas_zgemm_args<F>& x, complex_problem* p, complex_value* alpha,
                        complex_value* beta) {
  if (x.alpha == nullptr || x.beta == nullptr) return false;
  *alpha = complex_at(x.alpha);
  *beta = complex_at(x.beta);
  if (x.layout == kCblasColMajor)
    return to_complex_problem(x.transa, x.transb, op_spelling::cblas, x.m, x.n, x.k, x.a, x.lda,
                              x.b, x.ldb, x.c, x.ldc, p);
  if (x.layout == kCblasRowMajor)
    return to_complex_problem(x.transb, x.transa, op_spelling::cblas, x.n, x.m, x.k, x.b, x.ldb,
                              x.a, x.lda, x.c, x.ldc, p);
  return false;
}

template <gemm_family F>
void forward(const char* entry, const fortran_gemm_args<F>& f) noexcept {
  forward_fortran<F, gemm_routine::zgemm>(entry, f);
}

template <gemm_family F>
void forward(const char* entry, const cblas_zgemm_args<F>& x) noexcept {
  forward_zgemm<F>(entry, x);
}

// A valid call offered to the GPU host path: true when it was served there (throws what the
// offload throws).
template <class Args>
bool offer(const char* entry, const Args& x) {
  complex_problem p{};
  complex_value alpha{}, beta{};
  return to_complex_problem(x, &p, &alpha, &beta) &&
         try_host_zgemm_offload(p, alpha, beta, entry).served;
}

template <class Args>
void serve(const char* entry, const Args& x) noexcept {
  serve_call(
      entry, [&] { return offer(entry, x); }, [&] { forward(entry, x); });
}

template <class Args>
bool offer_noexcept(const char* entry, const Args& x) noexcept {
  try {
    return offer(entry, x);
  } catch (...) {
    try {
      logger().error("{}: internal error; using the CPU BLAS", entry);
    } catch (...) {
    }
    return false;
  }
}

}  // namespace

template <gemm_family F>
bool offer_host_zgemm(const char* entry, const fortran_gemm_args<F>& x) noexcept {
  return offer_noexcept(entry, x);
}

template <gemm_family F>
bool offer_host_zgemm(const char* entry, const cblas_zgemm_args<F>& x) noexcept {
  return offer_noexcept(entry, x);
}

template <gemm_family F>
void forward_zgemm(const char* entry, const cblas_zgemm_args<F>& x) noexcept {
  if (auto real = cpu_cblas_zgemm<F>()) {
    real(x.layout, x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c,
         x.ldc);
    return;
  }
  // A CPU BLAS without CBLAS: a valid call runs as the equivalent column-major Fortran call
  // (the integers of a valid call fit the family's width: they came from it).
  using integer = blas_int<F>;
  auto real = cpu_fortran_gemm<F, gemm_routine::zgemm>();
  complex_problem p{};
  complex_value alpha{}, beta{};
  if (real != nullptr && to_complex_problem(x, &p, &alpha, &beta)) {
    // The column-major call to_complex_problem made of it (row-major already swapped).
    const char ta = !p.a.k_contiguous ? 'N' : p.a.conjugate ? 'C' : 'T';
    const char tb = p.b.k_contiguous ? 'N' : p.b.conjugate ? 'C' : 'T';
    const integer m = static_cast<integer>(p.m), n = static_cast<integer>(p.n);
    const integer k = static_cast<integer>(p.k), lda = static_cast<integer>(p.a.ld);
    const integer ldb = static_cast<integer>(p.b.ld);
    real(&ta, &tb, &m, &n, &k, static_cast<const double*>(x.alpha), p.a.ptr, &lda, p.b.ptr, &ldb,
         static_cast<const double*>(x.beta), p.c, &x.ldc, 1, 1);
    return;
  }
  log_not_run(entry, real != nullptr ? gemm_name(F, gemm_routine::cblas_zgemm) : nullptr);
}

template <gemm_family F>
void serve_zgemm(const char* entry, const fortran_gemm_args<F>& x) noexcept {
  serve(entry, x);
}

template <gemm_family F>
void serve_zgemm(const char* entry, const cblas_zgemm_args<F>& x) noexcept {
  serve(entry, x);
}

#define OZDGEMM_INSTANTIATE(F)                                                     \
  template void serve_zgemm<F>(const char*, const fortran_gemm_args<F>&) noexcept; \
  template void serve_zgemm<F>(const char*, const cblas_zgemm_args<F>&) noexcept;
OZDGEMM_INSTANTIATE(gemm_family::lp64)
OZDGEMM_INSTANTIATE(gemm_family::ilp64)
OZDGEMM_INSTANTIATE(gemm_family::scipy_lp64)
OZDGEMM_INSTANTIATE(gemm_family::scipy_ilp64)
#undef OZDGEMM_INSTANTIATE
// What the batch hooks use (LP64 only).
template void forward_zgemm<gemm_family::lp64>(const char*,
                                               const cblas_zgemm_args<gemm_family::lp64>&) noexcept;
template bool offer_host_zgemm<gemm_family::lp64>(
    const char*, const fortran_gemm_args<gemm_family::lp64>&) noexcept;
template bool offer_host_zgemm<gemm_family::lp64>(
    const char*, const cblas_zgemm_args<gemm_family::lp64>&) noexcept;

}  // namespace ozdgemm::detail
