// Host BLAS GEMM entry points: cblas_dgemm and Fortran dgemm_ with its aliases, and their ZGEMM
// twins. A thin layer: check the arguments with reference BLAS's rules, translate a valid call
// into one column-major host_gemm (complex_problem), offer it to the GPU (try_host_offload,
// try_host_zgemm_offload), and otherwise forward the call unchanged to the CPU BLAS
// (cpu_blas.hpp).
//
// Invalid arguments are never reported from here: the call goes to the CPU BLAS exactly as
// the application made it, so that xerbla / cblas_xerbla is called by the real library with
// the parameter number it uses, through the xerbla the application would have reached
// without us (its own, if it defines one), with the same consequences (reference CBLAS's
// cblas_xerbla exits), and nothing is written.
//
// Integers are 32-bit (LP64 BLAS, the convention of libblas.so.3); ILP64 builds are not
// intercepted correctly.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/logging.hpp"
#include "interpose/cpu_blas.hpp"
#include "host_path/complex_offload.hpp"
#include "host_path/offload.hpp"
#include "interpose/real_symbol.hpp"
#include "ozdgemm/export.h"

namespace ozdgemm::detail {
namespace {

// CBLAS enum values (cblas.h); a C enum argument is passed as int. cblas.h is not included:
// its own cblas_dgemm prototype (enum parameters) would clash with the definition below.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasColMajor = 102;

// DGEMM's checks (reference dgemm.f, INFO 3, 4, 5, 8, 10, 13) on a column-major call.
bool valid_sizes(const host_gemm& g) {
  return valid_gemm_shape(g.opa, g.opb, g.m, g.n, g.k, g.lda, g.ldb, g.ldc);
}

// ---------------------------------------------------------------------------------------------
// Fortran DGEMM.

struct fortran_args {
  const char* transa;
  const char* transb;
  const int *m, *n, *k;
  const double* alpha;
  const double* a;
  const int* lda;
  const double* b;
  const int* ldb;
  const double* beta;
  double* c;
  const int* ldc;
  // Hidden CHARACTER lengths (gfortran convention). C callers often omit them; they are only
  // passed on, never read.
  std::size_t transa_len, transb_len;
};

bool to_host_gemm(const fortran_args& f, host_gemm* g) {
  if (f.transa == nullptr || f.transb == nullptr || f.m == nullptr || f.n == nullptr ||
      f.k == nullptr || f.alpha == nullptr || f.lda == nullptr || f.ldb == nullptr ||
      f.beta == nullptr || f.ldc == nullptr)
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

void forward(const char* entry, const fortran_args& f) noexcept {
  if (dgemm_fn real = cpu_dgemm()) {
    real(f.transa, f.transb, f.m, f.n, f.k, f.alpha, f.a, f.lda, f.b, f.ldb, f.beta, f.c, f.ldc,
         f.transa_len, f.transb_len);
    return;
  }
  try {
    logger().error("{}: no CPU BLAS to run this call (see above); C left unchanged", entry);
  } catch (...) {
  }
}

// ---------------------------------------------------------------------------------------------
// CBLAS.

struct cblas_args {
  int layout, transa, transb, m, n, k;
  double alpha;
  const double* a;
  int lda;
  const double* b;
  int ldb;
  double beta;
  double* c;
  int ldc;
};

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the row-major buffers read
// column-major are the transposes, so B's buffer becomes the first operand with B's op, and
// m and n swap. This is what reference CBLAS does before calling dgemm_.
bool to_host_gemm(const cblas_args& x, host_gemm* g) {
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

// Columns [first, first + count) of a valid column-major call, through the CPU BLAS's Fortran
// dgemm_.
void dgemm_columns(dgemm_fn real, const host_gemm& g, int64_t first, int64_t count) noexcept {
  const char ta = g.opa == op_kind::n ? 'N' : 'T', tb = g.opb == op_kind::n ? 'N' : 'T';
  const int m = static_cast<int>(g.m), n = static_cast<int>(count);
  const int k = static_cast<int>(g.k), lda = static_cast<int>(g.lda);
  const int ldb = static_cast<int>(g.ldb), ldc = static_cast<int>(g.ldc);
  const double* b = g.opb == op_kind::n ? g.b + first * g.ldb : g.b + first;
  real(&ta, &tb, &m, &n, &k, &g.alpha, g.a, &lda, b, &ldb, &g.beta, g.c + first * g.ldc, &ldc, 1,
       1);
}

void forward(const char* entry, const cblas_args& x) noexcept {
  if (cblas_dgemm_fn real = cpu_cblas_dgemm()) {
    real(x.layout, x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c,
         x.ldc);
    return;
  }
  // A CPU BLAS without CBLAS: a valid call runs as the equivalent column-major dgemm_.
  host_gemm g{};
  dgemm_fn real = cpu_dgemm();
  if (real != nullptr && to_host_gemm(x, &g)) {
    dgemm_columns(real, g, 0, g.n);
    return;
  }
  try {
    if (real != nullptr)
      logger().error(
          "{}: invalid arguments, and the CPU BLAS has no cblas_dgemm to report "
          "them; C left unchanged",
          entry);
    else
      logger().error("{}: no CPU BLAS to run this call (see above); C left unchanged", entry);
  } catch (...) {
  }
}

// The column ranges of a column-major call that the GPU path left (its workers failed part
// way), on the CPU BLAS. The other columns already hold their results and are not touched
// again: with beta != 0 computing them twice would read the result as C.
void finish_on_cpu(const char* entry, const host_gemm& g,
                   const std::vector<column_range>& left) noexcept {
  dgemm_fn real = cpu_dgemm();
  for (const column_range& r : left) {
    if (real != nullptr) {
      dgemm_columns(real, g, r.j0, r.count);
      continue;
    }
    try {
      logger().error("{}: no CPU BLAS to finish columns {}..{}; they are left unchanged", entry,
                     r.j0, r.j0 + r.count - 1);
    } catch (...) {
    }
  }
}

// One application call, one decision: offered to the GPU host path, else forwarded. Calls
// made while this thread is already inside an intercepted call (reference CBLAS's
// cblas_dgemm calls dgemm_, which resolves back to us) go straight to the CPU BLAS.
template <class Args>
void serve_host(const char* entry, const Args& x) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  if (outermost) {
    host_gemm g{};
    host_offload_result r;
    try {
      if (to_host_gemm(x, &g)) r = try_host_offload(g, entry);
    } catch (...) {
      try {
        logger().error("{}: internal error; using the CPU BLAS", entry);
      } catch (...) {
      }
    }
    if (r.served) {
      finish_on_cpu(entry, g, r.left);
      return;
    }
  }
  forward(entry, x);
}

// ---------------------------------------------------------------------------------------------
// ZGEMM. The Fortran arguments have DGEMM's layout (COMPLEX*16 values are (re, im) pairs of
// doubles, passed by address), so fortran_args carries them too; CBLAS passes alpha and beta by
// address.

struct cblas_zargs {
  int layout, transa, transb, m, n, k;
  const void* alpha;
  const void* a;
  int lda;
  const void* b;
  int ldb;
  const void* beta;
  void* c;
  int ldc;
};

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

bool to_complex_problem(const fortran_args& f, complex_problem* p, complex_value* alpha,
                        complex_value* beta) {
  if (f.transa == nullptr || f.transb == nullptr || f.m == nullptr || f.n == nullptr ||
      f.k == nullptr || f.alpha == nullptr || f.lda == nullptr || f.ldb == nullptr ||
      f.beta == nullptr || f.ldc == nullptr)
    return false;
  *alpha = complex_at(f.alpha);
  *beta = complex_at(f.beta);
  return to_complex_problem(*f.transa, *f.transb, op_spelling::blas_char, *f.m, *f.n, *f.k, f.a,
                            *f.lda, f.b, *f.ldb, f.c, *f.ldc, p);
}

// Row-major is the column-major transpose, as for DGEMM; the flags (conjugation included) stay
// with their matrices.
bool to_complex_problem(const cblas_zargs& x, complex_problem* p, complex_value* alpha,
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

void forward_zgemm(const char* entry, const fortran_args& f) noexcept {
  if (zgemm_fn real = cpu_zgemm()) {
    real(f.transa, f.transb, f.m, f.n, f.k, f.alpha, f.a, f.lda, f.b, f.ldb, f.beta, f.c, f.ldc,
         f.transa_len, f.transb_len);
    return;
  }
  try {
    logger().error("{}: no CPU BLAS to run this call (see above); C left unchanged", entry);
  } catch (...) {
  }
}

void forward_zgemm(const char* entry, const cblas_zargs& x) noexcept {
  if (cblas_zgemm_fn real = cpu_cblas_zgemm()) {
    real(x.layout, x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta,
         x.c, x.ldc);
    return;
  }
  // A CPU BLAS without CBLAS: a valid call runs as the equivalent column-major zgemm_.
  zgemm_fn real = cpu_zgemm();
  complex_problem p{};
  complex_value alpha{}, beta{};
  if (real != nullptr && to_complex_problem(x, &p, &alpha, &beta)) {
    // The column-major call to_complex_problem made of it (row-major already swapped).
    const char ta = !p.a.k_contiguous ? 'N' : p.a.conjugate ? 'C' : 'T';
    const char tb = p.b.k_contiguous ? 'N' : p.b.conjugate ? 'C' : 'T';
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int lda = static_cast<int>(p.a.ld), ldb = static_cast<int>(p.b.ld);
    real(&ta, &tb, &m, &n, &k, static_cast<const double*>(x.alpha), p.a.ptr, &lda, p.b.ptr, &ldb,
         static_cast<const double*>(x.beta), p.c, &x.ldc, 1, 1);
    return;
  }
  try {
    logger().error(real != nullptr ? "{}: invalid arguments, and the CPU BLAS has no cblas_zgemm "
                                     "to report them; C left unchanged"
                                   : "{}: no CPU BLAS to run this call (see above); C left unchanged",
                   entry);
  } catch (...) {
  }
}

// serve_host's complex twin: all or nothing on the GPU, else the CPU BLAS.
template <class Args>
void serve_host_zgemm(const char* entry, const Args& x) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  if (outermost) {
    bool served = false;
    try {
      complex_problem p{};
      complex_value alpha{}, beta{};
      if (to_complex_problem(x, &p, &alpha, &beta))
        served = try_host_zgemm_offload(p, alpha, beta, entry).served;
    } catch (...) {
      try {
        logger().error("{}: internal error; using the CPU BLAS", entry);
      } catch (...) {
      }
    }
    if (served) return;
  }
  forward_zgemm(entry, x);
}

}  // namespace
}  // namespace ozdgemm::detail

// ---------------------------------------------------------------------------------------------
// Exported entry points (cmake/ozdgemm.map). They shadow the CPU BLAS's definitions when the
// library is preloaded or linked in place of -lblas.

extern "C" {

OZDGEMM_API void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                             const double* a, int lda, const double* b, int ldb, double beta,
                             double* c, int ldc) noexcept {
  ozdgemm::detail::serve_host<ozdgemm::detail::cblas_args>(
      "cblas_dgemm", {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

// One Fortran spelling of xGEMM: the arguments by reference, then the hidden lengths of the two
// TRANS strings. (ZGEMM's complex scalars and matrices arrive as pointers to pairs of doubles.)
#define OZDGEMM_FORTRAN_GEMM(NAME, SERVE)                                                          \
  OZDGEMM_API void NAME(const char* transa, const char* transb, const int* m, const int* n,        \
                        const int* k, const double* alpha, const double* a, const int* lda,        \
                        const double* b, const int* ldb, const double* beta, double* c,            \
                        const int* ldc, std::size_t transa_len, std::size_t transb_len) noexcept { \
    ozdgemm::detail::SERVE<ozdgemm::detail::fortran_args>(                                         \
        #NAME,                                                                                     \
        {transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len});   \
  }

// The Fortran spellings: dgemm_ (gfortran, flang, ifort/ifx, nvfortran), dgemm (xlf without
// -qextname) and DGEMM (upper case, as MKL also exports it).
OZDGEMM_FORTRAN_GEMM(dgemm_, serve_host)
OZDGEMM_FORTRAN_GEMM(dgemm, serve_host)
OZDGEMM_FORTRAN_GEMM(DGEMM, serve_host)

OZDGEMM_API void cblas_zgemm(int layout, int transa, int transb, int m, int n, int k,
                             const void* alpha, const void* a, int lda, const void* b, int ldb,
                             const void* beta, void* c, int ldc) noexcept {
  ozdgemm::detail::serve_host_zgemm<ozdgemm::detail::cblas_zargs>(
      "cblas_zgemm", {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

// ZGEMM's Fortran spellings, as DGEMM's.
OZDGEMM_FORTRAN_GEMM(zgemm_, serve_host_zgemm)
OZDGEMM_FORTRAN_GEMM(zgemm, serve_host_zgemm)
OZDGEMM_FORTRAN_GEMM(ZGEMM, serve_host_zgemm)
#undef OZDGEMM_FORTRAN_GEMM

}  // extern "C"
