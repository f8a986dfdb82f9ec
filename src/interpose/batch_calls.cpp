// The strided-batch GEMM extensions of the CPU BLAS libraries that define them (blas_calls.hpp),
// LP64. Signatures and argument order: Intel oneMKL Developer Reference, cblas_?gemm_batch_strided
// and ?gemm_batch_strided; OpenBLAS 0.3.30 interface/gemm_batch_strided.c (cblas.h).
//
// A batch the host path would emulate is served matrix by matrix through the single DGEMM's
// offer (offer_host_gemm), so every matrix gets the bits of the single call on it; anything else
// is forwarded unchanged to the CPU BLAS's routine of the same name, whose xerbla reports invalid
// arguments. Only calls that MKL and OpenBLAS read the same way are emulated:
//  - complex strides: MKL counts them in complex elements (A_i at a + i stridea, a an array of
//    complex); OpenBLAS indexes its array of doubles with i * stridea, i.e. counts doubles. So no
//    complex batch is emulated.
//  - Fortran TRANSA and TRANSB: OpenBLAS applies TRANSB's op to A and TRANSA's to B (and reads
//    upper case only); MKL reads them as xGEMM does. A real Fortran call is emulated only when both
//    are the same upper-case op.
//  - negative strides and overlapping C matrices: neither library says what they mean (OpenBLAS
//    runs the matrices in parallel), so they are forwarded.
//
// A CPU BLAS without the routine (reference BLAS, OpenBLAS < 0.3.30, a program linked -lozdgemm in
// place of -lblas) gets a valid call as a loop of its single GEMM, with MKL's documented meaning
// (complex: only where both meanings coincide). An invalid call then writes nothing and is logged
// as an error; xerbla_ is not called: there is no reference numbering of the routine's parameters
// (OpenBLAS reports CBLAS calls with the Fortran numbers), and reference BLAS's xerbla_ stops a
// program that MKL's or OpenBLAS's would have let continue.
#include <cstdint>
#include <type_traits>

#include "common/logging.hpp"
#include "dispatch/call_log.hpp"
#include "interpose/blas_calls.hpp"

namespace ozdgemm::detail {
namespace {

constexpr gemm_family kLp64 = gemm_family::lp64;
constexpr const char* kComplexStrides =
    "complex batch: MKL counts strides in complex elements, OpenBLAS in doubles";

// The batch's integers as values. False for a Fortran call missing one of its arguments.
struct batch_ints {
  int64_t a, b, c, count;
};
bool ints_of(const fortran_batch_args& x, batch_ints* s) {
  if (!x.first.complete() || x.stride_a == nullptr || x.stride_b == nullptr ||
      x.stride_c == nullptr || x.count == nullptr)
    return false;
  *s = {*x.stride_a, *x.stride_b, *x.stride_c, *x.count};
  return true;
}
template <class Call>
bool ints_of(const strided_batch_args<Call, int>& x, batch_ints* s) {
  *s = {x.stride_a, x.stride_b, x.stride_c, x.count};
  return true;
}

// The caller's m, n, k for the decision line.
void shape(const fortran_gemm_args<kLp64>& f, int64_t* m, int64_t* n, int64_t* k) {
  *m = f.m != nullptr ? *f.m : 0, *n = f.n != nullptr ? *f.n : 0, *k = f.k != nullptr ? *f.k : 0;
}
template <class Call>
void shape(const Call& x, int64_t* m, int64_t* n, int64_t* k) {
  *m = x.m, *n = x.n, *k = x.k;
}

template <class P>
P* moved(P* p, int64_t doubles) {
  using D = std::conditional_t<std::is_const_v<P>, const double, double>;
  return p == nullptr ? p : static_cast<P*>(static_cast<D*>(p) + doubles);
}

// Matrix i's single call: the operands moved by i strides of w doubles per element.
template <class Call>
Call matrix(const Call& first, const batch_ints& s, int64_t i, int64_t w) {
  Call x = first;
  x.a = moved(first.a, i * s.a * w);
  x.b = moved(first.b, i * s.b * w);
  x.c = moved(first.c, i * s.c * w);
  return x;
}

// The real column-major call of a complex CBLAS call's shape and flags: the checks are DGEMM's.
cblas_dgemm_args<kLp64> real_view(const cblas_zgemm_args<kLp64>& x) {
  return {x.layout, x.transa, x.transb, x.m,   x.n, x.k,     1.0,
          nullptr,  x.lda,    nullptr,  x.ldb, 1.0, nullptr, x.ldc};
}
const fortran_gemm_args<kLp64>& real_view(const fortran_gemm_args<kLp64>& f) { return f; }
const cblas_dgemm_args<kLp64>& real_view(const cblas_dgemm_args<kLp64>& x) { return x; }

// A call with MKL's documented meaning: matrix 0 valid, count and strides not negative. g: matrix
// 0's column-major shape.
template <class Args>
bool valid_batch(const Args& x, batch_ints* s, host_gemm* g) {
  return ints_of(x, s) && to_host_gemm(real_view(x.first), g) && s->count >= 0 && s->a >= 0 &&
         s->b >= 0 && s->c >= 0;
}

// MKL and OpenBLAS read the Fortran flags differently unless they are the same upper-case op.
bool same_meaning(const fortran_gemm_args<kLp64>& f) {
  const auto upper_op = [](char t) { return t == 'N' ? 0 : t == 'T' || t == 'C' ? 1 : -1; };
  return upper_op(*f.transa) >= 0 && upper_op(*f.transa) == upper_op(*f.transb);
}
bool same_meaning(const cblas_dgemm_args<kLp64>&) { return true; }

// Why a real batch is not served per matrix (a static string), or nullptr.
template <class Args>
const char* dgemm_batch_declines(const Args& x, batch_ints* s, host_gemm* g) {
  if (!valid_batch(x, s, g)) return "invalid arguments or a negative stride";
  if (s->count == 0) return "empty batch";
  if (!same_meaning(x.first)) return "TRANSA differs from TRANSB (OpenBLAS swaps them)";
  if (s->count > 1 && g->m > 0 && g->n > 0 && s->c < g->ldc * (g->n - 1) + g->m)
    return "matrices of C overlap";
  if (cpu_fortran_gemm<kLp64, gemm_routine::dgemm>() == nullptr) return "no CPU BLAS dgemm_";
  return host_gemm_declines(g->m, g->n, g->k, false);
}

void log_forwarded(const char* entry, int64_t m, int64_t n, int64_t k, const char* why) noexcept {
  log_call({entry, m, n, k, outcome::native, why, 0, 0.0, 0.0, 0.0});
}

// The CPU BLAS's batch routine f on the caller's arguments, unchanged.
void call_cpu(fortran_gemm_batch_fn f, const fortran_batch_args& x) {
  const fortran_gemm_args<kLp64>& c = x.first;
  f(c.transa, c.transb, c.m, c.n, c.k, c.alpha, c.a, c.lda, x.stride_a, c.b, c.ldb, x.stride_b,
    c.beta, c.c, c.ldc, x.stride_c, x.count, c.transa_len, c.transb_len);
}
void call_cpu(cblas_dgemm_batch_fn f, const cblas_dgemm_batch_args& x) {
  const cblas_dgemm_args<kLp64>& c = x.first;
  f(c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha, c.a, c.lda, x.stride_a, c.b, c.ldb,
    x.stride_b, c.beta, c.c, c.ldc, x.stride_c, x.count);
}
void call_cpu(cblas_zgemm_batch_fn f, const cblas_zgemm_batch_args& x) {
  const cblas_zgemm_args<kLp64>& c = x.first;
  f(c.layout, c.transa, c.transb, c.m, c.n, c.k, c.alpha, c.a, c.lda, x.stride_a, c.b, c.ldb,
    x.stride_b, c.beta, c.c, c.ldc, x.stride_c, x.count);
}

// The call unchanged on the CPU BLAS's routine `cpu`; without one, matrix by matrix on its single
// GEMM (`single`) when the call is valid and `unambiguous`, else logged with C untouched.
template <class Fn, class Args, class Single>
void forward_batch(const char* entry, const char* cpu, const Args& x, bool unambiguous,
                   Single single) noexcept {
  if (void* f = cpu_routine(cpu, false)) return call_cpu(reinterpret_cast<Fn>(f), x);
  batch_ints s{};
  host_gemm g{};
  if (!valid_batch(x, &s, &g)) return log_not_run(entry, cpu);
  if (!unambiguous) {
    try {
      logger().error("{}: the CPU BLAS has no {}, and {}; C left unchanged", entry, cpu,
                     kComplexStrides);
    } catch (...) {
    }
    return;
  }
  for (int64_t i = 0; i < s.count; ++i) single(i, s);
}

void forward_real(const char* entry, const fortran_batch_args& x) noexcept {
  forward_batch<fortran_gemm_batch_fn>(
      entry, "dgemm_batch_strided_", x, true, [&](int64_t i, const batch_ints& s) {
        forward_fortran<kLp64, gemm_routine::dgemm>(entry, matrix(x.first, s, i, 1));
      });
}
void forward_real(const char* entry, const cblas_dgemm_batch_args& x) noexcept {
  forward_batch<cblas_dgemm_batch_fn>(entry, "cblas_dgemm_batch_strided", x, true,
                                      [&](int64_t i, const batch_ints& s) {
                                        forward_dgemm<kLp64>(entry, matrix(x.first, s, i, 1));
                                      });
}

// Both meanings of complex strides coincide: no matrix but the first, or no stride.
bool strides_coincide(const batch_ints& s) {
  return s.count <= 1 || (s.a == 0 && s.b == 0 && s.c == 0);
}

template <class Args>
void serve_real(const char* entry, const Args& x) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  if (outermost) {
    batch_ints s{};
    host_gemm g{};
    const char* why = dgemm_batch_declines(x, &s, &g);
    if (why == nullptr) {
      try {
        logger().debug("{}: {} matrices of m={} n={} k={}, each offered to the GPU host path",
                       entry, s.count, g.m, g.n, g.k);
      } catch (...) {
      }
      // Every matrix passes matrix 0's checks: only the pointers differ.
      for (int64_t i = 0; i < s.count; ++i) {
        host_gemm gi{};
        to_host_gemm(real_view(matrix(x.first, s, i, 1)), &gi);
        if (!offer_host_gemm<kLp64>(entry, gi)) cpu_dgemm<kLp64>(entry, gi);
      }
      return;
    }
    int64_t m, n, k;
    shape(x.first, &m, &n, &k);
    log_forwarded(entry, m, n, k, why);
  }
  forward_real(entry, x);
}

template <class Args, class Forward>
void serve_complex(const char* entry, const Args& x, Forward forward) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  if (outermost) {
    int64_t m, n, k;
    shape(x.first, &m, &n, &k);
    log_forwarded(entry, m, n, k, kComplexStrides);
  }
  forward(x);
}

}  // namespace

void serve_dgemm_batch(const char* entry, const fortran_batch_args& x) noexcept {
  serve_real(entry, x);
}

void serve_dgemm_batch(const char* entry, const cblas_dgemm_batch_args& x) noexcept {
  serve_real(entry, x);
}

void serve_zgemm_batch(const char* entry, const fortran_batch_args& x) noexcept {
  serve_complex(entry, x, [&](const fortran_batch_args& y) {
    batch_ints s{};
    const bool same = ints_of(y, &s) && strides_coincide(s);
    forward_batch<fortran_gemm_batch_fn>(
        entry, "zgemm_batch_strided_", y, same, [&](int64_t i, const batch_ints& t) {
          forward_fortran<kLp64, gemm_routine::zgemm>(entry, matrix(y.first, t, i, 2));
        });
  });
}

void serve_zgemm_batch(const char* entry, const cblas_zgemm_batch_args& x) noexcept {
  serve_complex(entry, x, [&](const cblas_zgemm_batch_args& y) {
    batch_ints s{};
    const bool same = ints_of(y, &s) && strides_coincide(s);
    forward_batch<cblas_zgemm_batch_fn>(entry, "cblas_zgemm_batch_strided", y, same,
                                        [&](int64_t i, const batch_ints& t) {
                                          forward_zgemm<kLp64>(entry, matrix(y.first, t, i, 2));
                                        });
  });
}

}  // namespace ozdgemm::detail
