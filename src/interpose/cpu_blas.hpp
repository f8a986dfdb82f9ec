// The CPU BLAS that host calls go to when they are not emulated, and that the forwarders of
// the replacement libblas (blas_symbols.txt) call into. Resolved lazily on first use, never
// at load time, and never to a definition inside libozdgemm.so itself (that would recurse,
// e.g. when libblas.so.3 is an alternative pointing at this library):
//   1. OZDGEMM_CPU_BLAS set: that library (dlopen RTLD_NOW | RTLD_LOCAL), and only it;
//   2. otherwise the next definition in the process (dlsym RTLD_NEXT: the application's BLAS
//      when the library is preloaded);
//   3. otherwise the system libblas.so.3.
// Each library that ends up serving calls is logged once at info level; a routine found
// nowhere is logged once as an error.
#pragma once

#include <cstddef>

namespace ozdgemm::detail {

// Fortran DGEMM, gfortran/ifort/flang calling convention (LP64): every argument by
// reference, then the hidden lengths of the two CHARACTER arguments.
using dgemm_fn = void (*)(const char* transa, const char* transb, const int* m, const int* n,
                          const int* k, const double* alpha, const double* a, const int* lda,
                          const double* b, const int* ldb, const double* beta, double* c,
                          const int* ldc, std::size_t transa_len, std::size_t transb_len);

// cblas_dgemm; the CBLAS enums travel as int in the C ABI.
using cblas_dgemm_fn = void (*)(int layout, int transa, int transb, int m, int n, int k,
                                double alpha, const double* a, int lda, const double* b, int ldb,
                                double beta, double* c, int ldc);

// Fortran ZGEMM: as DGEMM, alpha and beta (and the matrices) COMPLEX*16, i.e. (re, im) pairs.
using zgemm_fn = void (*)(const char* transa, const char* transb, const int* m, const int* n,
                          const int* k, const double* alpha, const double* a, const int* lda,
                          const double* b, const int* ldb, const double* beta, double* c,
                          const int* ldc, std::size_t transa_len, std::size_t transb_len);

// cblas_zgemm: alpha and beta by address.
using cblas_zgemm_fn = void (*)(int layout, int transa, int transb, int m, int n, int k,
                                const void* alpha, const void* a, int lda, const void* b, int ldb,
                                const void* beta, void* c, int ldc);

// The CPU BLAS definition of `name`, or nullptr if there is none (logged as an error, or at
// info level when the caller has a way around it: `required` false). Thread-safe; never
// throws.
void* cpu_blas_symbol(const char* name, bool required = true) noexcept;

// Typed accessors for the routines the library intercepts (cached after the first call). A CPU
// BLAS without CBLAS is legitimate: cblas_dgemm (cblas_zgemm) calls then go to its dgemm_
// (zgemm_).
dgemm_fn cpu_dgemm() noexcept;
cblas_dgemm_fn cpu_cblas_dgemm() noexcept;
zgemm_fn cpu_zgemm() noexcept;
cblas_zgemm_fn cpu_cblas_zgemm() noexcept;

// The Fortran Level-3 routines other than GEMM (LP64), by the shape of their arguments; scalars
// and matrices by address (double, or COMPLEX*16 pairs; ZHERK's alpha and beta, ZHER2K's beta
// are DOUBLE PRECISION), then the hidden lengths of the CHARACTER arguments.
//   xSYRK, xHERK:           UPLO TRANS N K ALPHA A LDA BETA C LDC
using rank_k_fn = void (*)(const char*, const char*, const int*, const int*, const void*,
                           const void*, const int*, const void*, void*, const int*, std::size_t,
                           std::size_t);
//   xSYR2K, xHER2K, xSYMM, xHEMM: two CHARACTERs, two sizes, ALPHA A LDA B LDB BETA C LDC
using two_operand_fn = void (*)(const char*, const char*, const int*, const int*, const void*,
                                const void*, const int*, const void*, const int*, const void*,
                                void*, const int*, std::size_t, std::size_t);
//   xTRMM, xTRSM:           SIDE UPLO TRANSA DIAG M N ALPHA A LDA B LDB
using triangular_fn = void (*)(const char*, const char*, const char*, const char*, const int*,
                               const int*, const void*, const void*, const int*, void*,
                               const int*, std::size_t, std::size_t, std::size_t, std::size_t);

// The CPU BLAS's routine `name` ("dsyrk_", "cblas_ztrsm", ...), cached after the first call;
// nullptr when it has none (logged as cpu_blas_symbol logs it).
void* cpu_level3(const char* name, bool required = true) noexcept;

}  // namespace ozdgemm::detail
