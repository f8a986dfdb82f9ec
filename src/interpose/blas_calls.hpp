// The thin layer behind the host BLAS GEMM entry points of blas_hooks.cpp, one implementation
// for every name family (cpu_blas.hpp: LP64 and ILP64, plain and scipy-openblas): check the
// arguments with reference BLAS's rules, translate a valid call into one column-major host_gemm
// (complex_problem), offer it to the GPU (try_host_offload, try_host_zgemm_offload), and
// otherwise forward the call unchanged (same pointers, the caller's integers untouched) to the
// CPU BLAS's definition of the same name. dgemm_calls.cpp is DGEMM's, zgemm_calls.cpp ZGEMM's.
//
// Invalid arguments are never reported from here: the call goes to the CPU BLAS exactly as
// the application made it, so that xerbla / cblas_xerbla is called by the real library with
// the parameter number it uses, through the xerbla the application would have reached
// without us (its own, if it defines one), with the same consequences (reference CBLAS's
// cblas_xerbla exits), and nothing is written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/logging.hpp"
#include "host_path/offload.hpp"
#include "interpose/cpu_blas.hpp"
#include "interpose/real_symbol.hpp"

namespace ozdgemm::detail {

// CBLAS enum values (cblas.h); a C enum argument is passed as int. cblas.h is not included:
// its own prototypes (enum parameters) would clash with the definitions of blas_hooks.cpp.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasColMajor = 102;

// A Fortran xGEMM call as received. ZGEMM's arguments have DGEMM's layout (COMPLEX*16 values
// are (re, im) pairs of doubles, passed by address), so one type carries both.
template <gemm_family F>
struct fortran_gemm_args {
  using integer = blas_int<F>;
  const char* transa;
  const char* transb;
  const integer *m, *n, *k;
  const double* alpha;
  const double* a;
  const integer* lda;
  const double* b;
  const integer* ldb;
  const double* beta;
  double* c;
  const integer* ldc;
  // Hidden CHARACTER lengths (gfortran convention). C callers often omit them; they are only
  // passed on, never read.
  std::size_t transa_len, transb_len;

  // Every argument read through a pointer is there (else the call is not a valid Fortran call:
  // the CPU BLAS does what it does with it).
  bool complete() const {
    return transa != nullptr && transb != nullptr && m != nullptr && n != nullptr && k != nullptr &&
           alpha != nullptr && lda != nullptr && ldb != nullptr && beta != nullptr &&
           ldc != nullptr;
  }
};

template <gemm_family F>
struct cblas_dgemm_args {
  using integer = blas_int<F>;
  int layout, transa, transb;
  integer m, n, k;
  double alpha;
  const double* a;
  integer lda;
  const double* b;
  integer ldb;
  double beta;
  double* c;
  integer ldc;
};

// CBLAS passes ZGEMM's alpha and beta by address.
template <gemm_family F>
struct cblas_zgemm_args {
  using integer = blas_int<F>;
  int layout, transa, transb;
  integer m, n, k;
  const void* alpha;
  const void* a;
  integer lda;
  const void* b;
  integer ldb;
  const void* beta;
  void* c;
  integer ldc;
};

// A strided batch of GEMMs (MKL's and OpenBLAS's ?gemm_batch_strided, LP64): matrix 0's call
// as the single routine receives it, the distance between consecutive matrices of A, B and C in
// elements, and the number of matrices. Fortran passes the four integers by address.
template <class Call, class Int>
struct strided_batch_args {
  Call first;
  Int stride_a, stride_b, stride_c, count;
};
using fortran_batch_args = strided_batch_args<fortran_gemm_args<gemm_family::lp64>, const int*>;
using cblas_dgemm_batch_args = strided_batch_args<cblas_dgemm_args<gemm_family::lp64>, int>;
using cblas_zgemm_batch_args = strided_batch_args<cblas_zgemm_args<gemm_family::lp64>, int>;

// One application call of a strided-batch routine, one decision (batch_calls.cpp): served per
// matrix through the GPU host path, or forwarded unchanged to the CPU BLAS's routine of that
// name (a loop of its single GEMM when it has none). Never throw.
void serve_dgemm_batch(const char* entry, const fortran_batch_args& x) noexcept;
void serve_dgemm_batch(const char* entry, const cblas_dgemm_batch_args& x) noexcept;
void serve_zgemm_batch(const char* entry, const fortran_batch_args& x) noexcept;
void serve_zgemm_batch(const char* entry, const cblas_zgemm_batch_args& x) noexcept;

// A group batch of GEMMs (MKL's, OpenBLAS's and AOCL's ?gemm_batch, LP64) as received: group g's
// flags, sizes and leading dimensions at index g of their arrays, its alpha and beta at
// alpha + w g and beta + w g (w = 1 real, 2 complex doubles), the matrices' pointers group after
// group. Fortran passes the group count by address, CBLAS by value; the CBLAS flags are CBLAS
// enum values, the Fortran ones CHARACTER*1 arrays.
template <class Flag, class Count>
struct group_batch_args {
  int layout;  // CBLAS only (column-major for Fortran)
  const Flag* transa;
  const Flag* transb;
  const int *m, *n, *k;
  const double* alpha;
  const void* const* a;
  const int* lda;
  const void* const* b;
  const int* ldb;
  const double* beta;
  void* const* c;
  const int* ldc;
  Count group_count;
  const int* group_size;
  std::size_t transa_len, transb_len;  // Fortran only: passed on, never read
};
using fortran_group_args = group_batch_args<char, const int*>;
using cblas_group_args = group_batch_args<int, int>;

// One application call of a group-batch routine (group_batch_calls.cpp): the groups the host path
// takes served matrix by matrix like single calls, the others forwarded to the CPU BLAS's routine
// of that name (a loop of its single GEMM when it has none); an invalid call forwarded whole.
// Never throw.
void serve_dgemm_group(const char* entry, const fortran_group_args& x) noexcept;
void serve_dgemm_group(const char* entry, const cblas_group_args& x) noexcept;
void serve_zgemm_group(const char* entry, const fortran_group_args& x) noexcept;
void serve_zgemm_group(const char* entry, const cblas_group_args& x) noexcept;

// One application call, one decision: offered to the GPU host path, else forwarded. `entry`
// names the intercepted symbol for the log. Calls made while this thread is already inside an
// intercepted call (reference CBLAS's cblas_dgemm calls dgemm_, which resolves back to us) go
// straight to the CPU BLAS. Never throw. Instantiated for every gemm_family.
template <gemm_family F>
void serve_dgemm(const char* entry, const fortran_gemm_args<F>& x) noexcept;
template <gemm_family F>
void serve_dgemm(const char* entry, const cblas_dgemm_args<F>& x) noexcept;
template <gemm_family F>
void serve_zgemm(const char* entry, const fortran_gemm_args<F>& x) noexcept;
template <gemm_family F>
void serve_zgemm(const char* entry, const cblas_zgemm_args<F>& x) noexcept;

// The pieces of the single calls that the strided-batch hooks (batch_calls.cpp) reuse per matrix.
// to_host_gemm: the column-major host_gemm of a call, false when the call is invalid (BLAS's
// rules; CBLAS row-major translated as reference CBLAS does). offer_host_gemm: g offered to the
// GPU host path, the columns its workers left finished on the family's Fortran DGEMM; true when
// C is final, false when nothing was written. cpu_dgemm: g on the family's Fortran DGEMM (logged
// when there is none). forward_dgemm, forward_zgemm: a CBLAS call forwarded unchanged to the CPU
// BLAS (its Fortran routine when it has no CBLAS). Never throw.
template <gemm_family F>
bool to_host_gemm(const fortran_gemm_args<F>& f, host_gemm* g);
template <gemm_family F>
bool to_host_gemm(const cblas_dgemm_args<F>& x, host_gemm* g);
template <gemm_family F>
bool offer_host_gemm(const char* entry, const host_gemm& g) noexcept;
template <gemm_family F>
void cpu_dgemm(const char* entry, const host_gemm& g) noexcept;
template <gemm_family F>
void forward_dgemm(const char* entry, const cblas_dgemm_args<F>& x) noexcept;
template <gemm_family F>
void forward_zgemm(const char* entry, const cblas_zgemm_args<F>& x) noexcept;
// A valid ZGEMM call offered to the GPU host path as serve_zgemm offers it: true when C is final,
// false when nothing was written (the caller then forwards it). Never throws.
template <gemm_family F>
bool offer_host_zgemm(const char* entry, const fortran_gemm_args<F>& x) noexcept;
template <gemm_family F>
bool offer_host_zgemm(const char* entry, const cblas_zgemm_args<F>& x) noexcept;

// Logs that `entry`'s call ran nowhere and C is left unchanged: there is no CPU BLAS routine
// for it (`missing_cblas` null), or the call is invalid and the CPU BLAS lacks the CBLAS routine
// `missing_cblas` that would report it. Never throws.
void log_not_run(const char* entry, const char* missing_cblas = nullptr) noexcept;

// What serve_dgemm and serve_zgemm share: `offer()` hands the call to the GPU host path and is
// true when the call was served there; it is tried for the outermost intercepted call of this
// thread only, and `forward()` runs the call on the CPU BLAS otherwise, when the offer declines
// or when it throws (logged).
template <class Offer, class Forward>
void serve_call(const char* entry, Offer offer, Forward forward) noexcept {
  const bool outermost = !inside_interception();
  interception_scope scope;
  if (outermost) {
    bool served = false;
    try {
      served = offer();
    } catch (...) {
      try {
        logger().error("{}: internal error; using the CPU BLAS", entry);
      } catch (...) {
      }
    }
    if (served) return;
  }
  forward();
}

// A Fortran call forwarded unchanged to the CPU BLAS's routine R (dgemm or zgemm) of family F.
template <gemm_family F, gemm_routine R>
void forward_fortran(const char* entry, const fortran_gemm_args<F>& f) noexcept {
  if (auto real = cpu_fortran_gemm<F, R>()) {
    real(f.transa, f.transb, f.m, f.n, f.k, f.alpha, f.a, f.lda, f.b, f.ldb, f.beta, f.c, f.ldc,
         f.transa_len, f.transb_len);
    return;
  }
  log_not_run(entry);
}

// Columns [first, first + count) of a valid column-major call, through the family's Fortran
// DGEMM (the integers of a valid call fit the family's width: they came from it).
template <gemm_family F>
void dgemm_columns(fortran_gemm_fn<blas_int<F>> real, const host_gemm& g, int64_t first,
                   int64_t count) noexcept {
  using integer = blas_int<F>;
  const char ta = g.opa == op_kind::n ? 'N' : 'T', tb = g.opb == op_kind::n ? 'N' : 'T';
  const integer m = static_cast<integer>(g.m), n = static_cast<integer>(count);
  const integer k = static_cast<integer>(g.k), lda = static_cast<integer>(g.lda);
  const integer ldb = static_cast<integer>(g.ldb), ldc = static_cast<integer>(g.ldc);
  const double* b = g.opb == op_kind::n ? g.b + first * g.ldb : g.b + first;
  real(&ta, &tb, &m, &n, &k, &g.alpha, g.a, &lda, b, &ldb, &g.beta, g.c + first * g.ldc, &ldc, 1,
       1);
}

}  // namespace ozdgemm::detail
