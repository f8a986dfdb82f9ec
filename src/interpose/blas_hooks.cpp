// The host BLAS GEMM entry points the library exports (cmake/ozdgemm.map): DGEMM and ZGEMM
// under the names of each family of cpu_blas.hpp, and their strided- and group-batch extensions
// (LP64). They
// shadow the CPU BLAS's definitions when the library is preloaded or linked in place of -lblas, and
// hand the call to the one layer of blas_calls.hpp, which forwards what it does not emulate to the
// CPU BLAS's definition of the same name. No other routine of those libraries is shadowed.
#include <cstddef>
#include <cstdint>

#include "interpose/blas_calls.hpp"
#include "ozdgemm/export.h"

using ozdgemm::detail::blas_int;
using ozdgemm::detail::gemm_family;

extern "C" {

// One Fortran spelling of xGEMM: the arguments by reference, then the hidden lengths of the two
// TRANS strings. (ZGEMM's complex scalars and matrices arrive as pointers to pairs of doubles.)
#define OZDGEMM_FORTRAN_GEMM(NAME, FAMILY, SERVE)                                                  \
  OZDGEMM_API void NAME(const char* transa, const char* transb, const blas_int<FAMILY>* m,         \
                        const blas_int<FAMILY>* n, const blas_int<FAMILY>* k, const double* alpha, \
                        const double* a, const blas_int<FAMILY>* lda, const double* b,             \
                        const blas_int<FAMILY>* ldb, const double* beta, double* c,                \
                        const blas_int<FAMILY>* ldc, std::size_t transa_len,                       \
                        std::size_t transb_len) noexcept {                                         \
    ozdgemm::detail::SERVE<FAMILY>(#NAME, {transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,   \
                                           c, ldc, transa_len, transb_len});                       \
  }

// cblas_dgemm in one family: the enums as int, sizes and leading dimensions of its width.
#define OZDGEMM_CBLAS_DGEMM(NAME, FAMILY)                                                         \
  OZDGEMM_API void NAME(int layout, int transa, int transb, blas_int<FAMILY> m,                   \
                        blas_int<FAMILY> n, blas_int<FAMILY> k, double alpha, const double* a,    \
                        blas_int<FAMILY> lda, const double* b, blas_int<FAMILY> ldb, double beta, \
                        double* c, blas_int<FAMILY> ldc) noexcept {                               \
    ozdgemm::detail::serve_dgemm<FAMILY>(                                                         \
        #NAME, {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});           \
  }

// cblas_zgemm likewise, alpha and beta by address.
#define OZDGEMM_CBLAS_ZGEMM(NAME, FAMILY)                                                         \
  OZDGEMM_API void NAME(int layout, int transa, int transb, blas_int<FAMILY> m,                   \
                        blas_int<FAMILY> n, blas_int<FAMILY> k, const void* alpha, const void* a, \
                        blas_int<FAMILY> lda, const void* b, blas_int<FAMILY> ldb,                \
                        const void* beta, void* c, blas_int<FAMILY> ldc) noexcept {               \
    ozdgemm::detail::serve_zgemm<FAMILY>(                                                         \
        #NAME, {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});           \
  }

// LP64, the names of libblas.so.3. Fortran: dgemm_ (gfortran, flang, ifort/ifx, nvfortran),
// dgemm (xlf without -qextname) and DGEMM (upper case, as MKL also exports it).
OZDGEMM_CBLAS_DGEMM(cblas_dgemm, gemm_family::lp64)
OZDGEMM_FORTRAN_GEMM(dgemm_, gemm_family::lp64, serve_dgemm)
OZDGEMM_FORTRAN_GEMM(dgemm, gemm_family::lp64, serve_dgemm)
OZDGEMM_FORTRAN_GEMM(DGEMM, gemm_family::lp64, serve_dgemm)
OZDGEMM_CBLAS_ZGEMM(cblas_zgemm, gemm_family::lp64)
OZDGEMM_FORTRAN_GEMM(zgemm_, gemm_family::lp64, serve_zgemm)
OZDGEMM_FORTRAN_GEMM(zgemm, gemm_family::lp64, serve_zgemm)
OZDGEMM_FORTRAN_GEMM(ZGEMM, gemm_family::lp64, serve_zgemm)

// ILP64: the 64_ suffix of reference BLAS's and OpenBLAS's 64-bit builds (-fdefault-integer-8
// Fortran callers; OpenBLAS's cblas_dgemm64_).
OZDGEMM_CBLAS_DGEMM(cblas_dgemm64_, gemm_family::ilp64)
OZDGEMM_FORTRAN_GEMM(dgemm_64_, gemm_family::ilp64, serve_dgemm)
OZDGEMM_CBLAS_ZGEMM(cblas_zgemm64_, gemm_family::ilp64)
OZDGEMM_FORTRAN_GEMM(zgemm_64_, gemm_family::ilp64, serve_zgemm)

// scipy-openblas: the LP64 library scipy's wheels bundle, and the ILP64 one numpy's (its
// matmul calls scipy_cblas_dgemm64_).
OZDGEMM_CBLAS_DGEMM(scipy_cblas_dgemm, gemm_family::scipy_lp64)
OZDGEMM_FORTRAN_GEMM(scipy_dgemm_, gemm_family::scipy_lp64, serve_dgemm)
OZDGEMM_CBLAS_ZGEMM(scipy_cblas_zgemm, gemm_family::scipy_lp64)
OZDGEMM_FORTRAN_GEMM(scipy_zgemm_, gemm_family::scipy_lp64, serve_zgemm)
OZDGEMM_CBLAS_DGEMM(scipy_cblas_dgemm64_, gemm_family::scipy_ilp64)
OZDGEMM_FORTRAN_GEMM(scipy_dgemm_64_, gemm_family::scipy_ilp64, serve_dgemm)
OZDGEMM_CBLAS_ZGEMM(scipy_cblas_zgemm64_, gemm_family::scipy_ilp64)
OZDGEMM_FORTRAN_GEMM(scipy_zgemm_64_, gemm_family::scipy_ilp64, serve_zgemm)

// The strided-batch extensions of MKL and OpenBLAS >= 0.3.30 (LP64; batch_calls.cpp): xGEMM's
// arguments with each matrix's stride after its leading dimension and the batch size last (Intel
// oneMKL Developer Reference, ?gemm_batch_strided; OpenBLAS interface/gemm_batch_strided.c).
// Fortran: every argument by address, then the hidden lengths of the two TRANS strings.
#define OZDGEMM_FORTRAN_GEMM_BATCH(NAME, SERVE)                                                   \
  OZDGEMM_API void NAME(const char* transa, const char* transb, const int* m, const int* n,       \
                        const int* k, const double* alpha, const double* a, const int* lda,       \
                        const int* stridea, const double* b, const int* ldb, const int* strideb,  \
                        const double* beta, double* c, const int* ldc, const int* stridec,        \
                        const int* batch_size, std::size_t transa_len,                            \
                        std::size_t transb_len) noexcept {                                        \
    ozdgemm::detail::SERVE(#NAME, {{transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, \
                                    transa_len, transb_len},                                      \
                                   stridea,                                                       \
                                   strideb,                                                       \
                                   stridec,                                                       \
                                   batch_size});                                                  \
  }
OZDGEMM_FORTRAN_GEMM_BATCH(dgemm_batch_strided_, serve_dgemm_batch)
OZDGEMM_FORTRAN_GEMM_BATCH(dgemm_batch_strided, serve_dgemm_batch)
OZDGEMM_FORTRAN_GEMM_BATCH(DGEMM_BATCH_STRIDED, serve_dgemm_batch)
OZDGEMM_FORTRAN_GEMM_BATCH(zgemm_batch_strided_, serve_zgemm_batch)
OZDGEMM_FORTRAN_GEMM_BATCH(zgemm_batch_strided, serve_zgemm_batch)
OZDGEMM_FORTRAN_GEMM_BATCH(ZGEMM_BATCH_STRIDED, serve_zgemm_batch)

// CBLAS: cblas_dgemm's alpha and beta by value, cblas_zgemm's by address.
OZDGEMM_API void cblas_dgemm_batch_strided(int layout, int transa, int transb, int m, int n, int k,
                                           double alpha, const double* a, int lda, int stridea,
                                           const double* b, int ldb, int strideb, double beta,
                                           double* c, int ldc, int stridec,
                                           int batch_size) noexcept {
  ozdgemm::detail::serve_dgemm_batch(
      "cblas_dgemm_batch_strided",
      {{layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc},
       stridea,
       strideb,
       stridec,
       batch_size});
}

OZDGEMM_API void cblas_zgemm_batch_strided(int layout, int transa, int transb, int m, int n, int k,
                                           const void* alpha, const void* a, int lda, int stridea,
                                           const void* b, int ldb, int strideb, const void* beta,
                                           void* c, int ldc, int stridec, int batch_size) noexcept {
  ozdgemm::detail::serve_zgemm_batch(
      "cblas_zgemm_batch_strided",
      {{layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc},
       stridea,
       strideb,
       stridec,
       batch_size});
}

// The group-batch routines of MKL, OpenBLAS >= 0.3.30 and AOCL (LP64; group_batch_calls.cpp):
// xGEMM's arguments as arrays of one entry per group, the matrices as arrays of pointers, then
// the group count and the group sizes (Intel oneMKL Developer Reference, ?gemm_batch; OpenBLAS
// interface/gemm_batch.c). Fortran: every argument by address, then the hidden lengths of the two
// flag arrays.
#define OZDGEMM_FORTRAN_GEMM_GROUP(NAME, SERVE)                                                   \
  OZDGEMM_API void NAME(const char* transa, const char* transb, const int* m, const int* n,       \
                        const int* k, const double* alpha, const void* const* a, const int* lda,  \
                        const void* const* b, const int* ldb, const double* beta, void* const* c, \
                        const int* ldc, const int* group_count, const int* group_size,            \
                        std::size_t transa_len, std::size_t transb_len) noexcept {                \
    ozdgemm::detail::SERVE(#NAME, {102, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,  \
                                   ldc, group_count, group_size, transa_len, transb_len});        \
  }
OZDGEMM_FORTRAN_GEMM_GROUP(dgemm_batch_, serve_dgemm_group)
OZDGEMM_FORTRAN_GEMM_GROUP(dgemm_batch, serve_dgemm_group)
OZDGEMM_FORTRAN_GEMM_GROUP(DGEMM_BATCH, serve_dgemm_group)
OZDGEMM_FORTRAN_GEMM_GROUP(zgemm_batch_, serve_zgemm_group)
OZDGEMM_FORTRAN_GEMM_GROUP(zgemm_batch, serve_zgemm_group)
OZDGEMM_FORTRAN_GEMM_GROUP(ZGEMM_BATCH, serve_zgemm_group)

// CBLAS: the layout and the group count by value; the flags as arrays of CBLAS enum values.
OZDGEMM_API void cblas_dgemm_batch(int layout, const int* transa, const int* transb, const int* m,
                                   const int* n, const int* k, const double* alpha,
                                   const double** a, const int* lda, const double** b,
                                   const int* ldb, const double* beta, double** c, const int* ldc,
                                   int group_count, const int* group_size) noexcept {
  ozdgemm::detail::serve_dgemm_group(
      "cblas_dgemm_batch",
      {layout, transa, transb, m, n, k, alpha, reinterpret_cast<const void* const*>(a), lda,
       reinterpret_cast<const void* const*>(b), ldb, beta, reinterpret_cast<void* const*>(c), ldc,
       group_count, group_size, 0, 0});
}

OZDGEMM_API void cblas_zgemm_batch(int layout, const int* transa, const int* transb, const int* m,
                                   const int* n, const int* k, const void* alpha, const void** a,
                                   const int* lda, const void** b, const int* ldb, const void* beta,
                                   void** c, const int* ldc, int group_count,
                                   const int* group_size) noexcept {
  ozdgemm::detail::serve_zgemm_group(
      "cblas_zgemm_batch",
      {layout, transa, transb, m, n, k, static_cast<const double*>(alpha), a, lda, b, ldb,
       static_cast<const double*>(beta), c, ldc, group_count, group_size, 0, 0});
}

#undef OZDGEMM_FORTRAN_GEMM_BATCH
#undef OZDGEMM_FORTRAN_GEMM
#undef OZDGEMM_CBLAS_DGEMM
#undef OZDGEMM_CBLAS_ZGEMM

}  // extern "C"
