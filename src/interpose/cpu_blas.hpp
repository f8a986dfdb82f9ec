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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>

namespace ozdgemm::detail {

// The name families of the routines the library intercepts (GEMM, and the Level-3 routines of
// level3_hooks.cpp likewise). Each intercepted name is forwarded to the CPU BLAS's definition
// of the same name, so one family is one library's naming and integer width:
//   lp64         dgemm_, cblas_dgemm, zgemm_, cblas_zgemm (libblas.so.3; 32-bit integers)
//   ilp64        dgemm_64_, cblas_dgemm64_, zgemm_64_, cblas_zgemm64_ (the 64-bit builds of
//                reference BLAS and OpenBLAS)
//   scipy_lp64   scipy_dgemm_, scipy_cblas_dgemm, ... (scipy-openblas, bundled by scipy's wheels)
//   scipy_ilp64  scipy_dgemm_64_, scipy_cblas_dgemm64_, ... (scipy-openblas64, numpy's wheels)
enum class gemm_family { lp64, ilp64, scipy_lp64, scipy_ilp64 };
enum class gemm_routine { dgemm, cblas_dgemm, zgemm, cblas_zgemm };

// Every INTEGER argument (Fortran) and every size and leading dimension (CBLAS) has this type.
// The CBLAS layout and transpose arguments stay C enums, passed as int, in the ILP64 families
// too: OpenBLAS's cblas.h declares them `enum CBLAS_ORDER` / `enum CBLAS_TRANSPOSE` and only the
// sizes `blasint`, which openblas_config.h makes 64-bit (BLASLONG) under USE64BITINT.
constexpr bool is_ilp64(gemm_family f) {
  return f == gemm_family::ilp64 || f == gemm_family::scipy_ilp64;
}
template <gemm_family F>
using blas_int = std::conditional_t<is_ilp64(F), std::int64_t, int>;

// The symbol name of routine r in family f (e.g. scipy_cblas_dgemm64_).
inline constexpr const char* kGemmNames[4][4] = {
    {"dgemm_", "cblas_dgemm", "zgemm_", "cblas_zgemm"},
    {"dgemm_64_", "cblas_dgemm64_", "zgemm_64_", "cblas_zgemm64_"},
    {"scipy_dgemm_", "scipy_cblas_dgemm", "scipy_zgemm_", "scipy_cblas_zgemm"},
    {"scipy_dgemm_64_", "scipy_cblas_dgemm64_", "scipy_zgemm_64_", "scipy_cblas_zgemm64_"}};
constexpr const char* gemm_name(gemm_family f, gemm_routine r) {
  return kGemmNames[static_cast<int>(f)][static_cast<int>(r)];
}

// Fortran DGEMM and ZGEMM, gfortran/ifort/flang calling convention: every argument by
// reference (ZGEMM's COMPLEX*16 scalars and matrices as (re, im) pairs of doubles), then the
// hidden lengths of the two CHARACTER arguments.
template <class Int>
using fortran_gemm_fn = void (*)(const char* transa, const char* transb, const Int* m, const Int* n,
                                 const Int* k, const double* alpha, const double* a, const Int* lda,
                                 const double* b, const Int* ldb, const double* beta, double* c,
                                 const Int* ldc, std::size_t transa_len, std::size_t transb_len);

// cblas_dgemm; the CBLAS enums travel as int in the C ABI.
template <class Int>
using cblas_dgemm_fn = void (*)(int layout, int transa, int transb, Int m, Int n, Int k,
                                double alpha, const double* a, Int lda, const double* b, Int ldb,
                                double beta, double* c, Int ldc);

// cblas_zgemm: alpha and beta by address.
template <class Int>
using cblas_zgemm_fn = void (*)(int layout, int transa, int transb, Int m, Int n, Int k,
                                const void* alpha, const void* a, Int lda, const void* b, Int ldb,
                                const void* beta, void* c, Int ldc);

// The CPU BLAS definition of `name`, or nullptr if there is none (logged as an error, or at
// info level when the caller has a way around it: `required` false). Thread-safe; never
// throws.
void* cpu_blas_symbol(const char* name, bool required = true) noexcept;

// How many objects the process has loaded so far (glibc's dl_phdr_info::dlpi_adds).
unsigned long long objects_loaded() noexcept;

// One routine's definition, looked up on first use and kept. A name no library defines is looked
// up again once the process has loaded another object (a Python module may load its BLAS after a
// first call), so a routine that appears later is not left undone.
class cpu_symbol {
 public:
  void* get(const char* name, bool required) noexcept {
    if (void* p = p_.load(std::memory_order_acquire)) return p;
    std::lock_guard<std::mutex> lock(mutex_);  // as a function-local static's initialisation
    if (void* p = p_.load(std::memory_order_relaxed)) return p;
    const unsigned long long loaded = objects_loaded();
    if (loaded == tried_) return nullptr;
    void* p = cpu_blas_symbol(name, required);
    if (p == nullptr) tried_ = loaded;
    p_.store(p, std::memory_order_release);
    return p;
  }

 private:
  std::atomic<void*> p_{nullptr};
  std::mutex mutex_;
  unsigned long long tried_ = ~0ull;  // objects_loaded() at the last failed lookup
};

// The CPU BLAS's definition of routine R of family F. A CPU BLAS without CBLAS is legitimate
// (not required): cblas calls then go to the family's Fortran routine.
template <gemm_family F, gemm_routine R>
void* cpu_gemm_symbol() noexcept {
  static cpu_symbol s;
  return s.get(gemm_name(F, R), R == gemm_routine::dgemm || R == gemm_routine::zgemm);
}

// Typed accessors.
template <gemm_family F, gemm_routine R>
fortran_gemm_fn<blas_int<F>> cpu_fortran_gemm() noexcept {
  static_assert(R == gemm_routine::dgemm || R == gemm_routine::zgemm);
  return reinterpret_cast<fortran_gemm_fn<blas_int<F>>>(cpu_gemm_symbol<F, R>());
}
template <gemm_family F>
cblas_dgemm_fn<blas_int<F>> cpu_cblas_dgemm() noexcept {
  return reinterpret_cast<cblas_dgemm_fn<blas_int<F>>>(
      cpu_gemm_symbol<F, gemm_routine::cblas_dgemm>());
}
template <gemm_family F>
cblas_zgemm_fn<blas_int<F>> cpu_cblas_zgemm() noexcept {
  return reinterpret_cast<cblas_zgemm_fn<blas_int<F>>>(
      cpu_gemm_symbol<F, gemm_routine::cblas_zgemm>());
}

// The Fortran Level-3 routines other than GEMM, by the shape of their arguments, INTEGERs of a
// family's width; scalars and matrices by address (double, or COMPLEX*16 pairs; ZHERK's alpha
// and beta, ZHER2K's beta are DOUBLE PRECISION), then the hidden lengths of the CHARACTERs.
//   xSYRK, xHERK:           UPLO TRANS N K ALPHA A LDA BETA C LDC
template <class Int>
using rank_k_fn = void (*)(const char*, const char*, const Int*, const Int*, const void*,
                           const void*, const Int*, const void*, void*, const Int*, std::size_t,
                           std::size_t);
//   xSYR2K, xHER2K, xSYMM, xHEMM: two CHARACTERs, two sizes, ALPHA A LDA B LDB BETA C LDC
template <class Int>
using two_operand_fn = void (*)(const char*, const char*, const Int*, const Int*, const void*,
                                const void*, const Int*, const void*, const Int*, const void*,
                                void*, const Int*, std::size_t, std::size_t);
//   xTRMM, xTRSM:           SIDE UPLO TRANSA DIAG M N ALPHA A LDA B LDB
template <class Int>
using triangular_fn = void (*)(const char*, const char*, const char*, const char*, const Int*,
                               const Int*, const void*, const void*, const Int*, void*, const Int*,
                               std::size_t, std::size_t, std::size_t, std::size_t);

// The Fortran name of the Level-3 routine `routine` ("dsyrk", "ztrsm") in family f: dsyrk_,
// dsyrk_64_, scipy_dsyrk_, scipy_dsyrk_64_. OpenBLAS's exports/gensymbol.pl names a Fortran
// routine SYMBOLPREFIX + name + "_" + SYMBOLSUFFIX and a CBLAS one SYMBOLPREFIX + cblas_name +
// SYMBOLSUFFIX (cblas_dsyrk64_, scipy_cblas_dsyrk64_); its 64-bit builds use SYMBOLSUFFIX=64_
// and scipy-openblas adds SYMBOLPREFIX=scipy_ (MacPython/openblas-libs, tools/build_steps.sh).
std::string fortran_name(gemm_family f, const char* routine);

// The strided-batch GEMM extensions of MKL and OpenBLAS >= 0.3.30 (LP64): xGEMM's arguments with
// a stride after each matrix's leading dimension and the batch size last. Fortran: every
// argument by address (complex scalars and matrices as pairs of doubles), then the CHARACTER
// lengths; CBLAS: cblas_dgemm's by value, cblas_zgemm's alpha and beta by address.
using fortran_gemm_batch_fn = void (*)(const char*, const char*, const int*, const int*, const int*,
                                       const double*, const double*, const int*, const int*,
                                       const double*, const int*, const int*, const double*,
                                       double*, const int*, const int*, const int*, std::size_t,
                                       std::size_t);
using cblas_dgemm_batch_fn = void (*)(int, int, int, int, int, int, double, const double*, int, int,
                                      const double*, int, int, double, double*, int, int, int);
using cblas_zgemm_batch_fn = void (*)(int, int, int, int, int, int, const void*, const void*, int,
                                      int, const void*, int, int, const void*, void*, int, int,
                                      int);

// The group-batch GEMM routines of MKL, OpenBLAS >= 0.3.30 and AOCL (LP64): xGEMM's arguments as
// arrays with one entry per group (scalars: one value per group, complex ones as pairs of
// doubles), the matrices as arrays of pointers (one per matrix, group after group), then the
// group count and each group's size. Fortran: every argument by address (the two flag arrays of
// CHARACTER*1), then the hidden lengths of the flag arrays; CBLAS: the layout and the group count
// by value.
using fortran_gemm_group_fn = void (*)(const char*, const char*, const int*, const int*, const int*,
                                       const double*, const void* const*, const int*,
                                       const void* const*, const int*, const double*, void* const*,
                                       const int*, const int*, const int*, std::size_t,
                                       std::size_t);
using cblas_gemm_group_fn = void (*)(int, const int*, const int*, const int*, const int*,
                                     const int*, const void*, const void* const*, const int*,
                                     const void* const*, const int*, const void*, void* const*,
                                     const int*, int, const int*);

// The CPU BLAS's routine `name` ("dsyrk_", "cblas_ztrsm", "dgemm_batch_strided_", ...), cached
// by name as cpu_symbol does; nullptr when it has none (logged as cpu_blas_symbol logs it).
void* cpu_routine(const char* name, bool required = true) noexcept;

}  // namespace ozdgemm::detail
