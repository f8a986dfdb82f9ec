// Sizes from callers are untrusted: 2^31- to 2^62-scale dimensions and
// leading dimensions, whose products overflow int64_t or size_t, go through the argument
// checks of ozdgemm_dgemm and ozdgemm_dgemm_reference and come back as a clean status
// without allocating, reading or writing anything.
//
// Every pointer handed to the library (handle, A, B, C, alpha, beta) points into a PROT_NONE
// mapping: a single dereference would kill the test with SIGSEGV. The statuses follow the
// cuBLAS _64 API: arguments that cannot describe memory (negative sizes, ld < rows, extents
// past the address space) are CUBLAS_STATUS_INVALID_VALUE; valid arguments whose workspace
// cannot even be counted are an allocation failure (CUBLAS_STATUS_ALLOC_FAILED; the
// interposer then runs the native routine).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <limits>

#include "core/checked_math.hpp"
#include "engine/emulate.hpp"
#include "host_path/offload.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/host_reference.hpp"

namespace ozdgemm::test {
namespace {

constexpr int64_t kTwo31 = int64_t{1} << 31;
constexpr int64_t kTwo62 = int64_t{1} << 62;
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
// Largest m, n, k ozdgemm_dgemm accepts (the INT8 GEMMs take 32-bit sizes after padding).
constexpr int64_t kMaxDim = kTwo31 - 1 - 16;
// k such that an m x k matrix with m = kMaxDim still spans fewer than 2^63 bytes, while
// s m_pad k_pad residue bytes (s >= 8) overflow int64_t.
constexpr int64_t kBigK = (int64_t{1} << 29) - 1024;

// A 64 KiB PROT_NONE mapping: pointers into it are valid-looking and never dereferenceable.
class Poisoned : public testing::Test {
 protected:
  void SetUp() override {
    base_ = mmap(nullptr, kBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(base_, MAP_FAILED);
  }
  void TearDown() override {
    if (base_ != MAP_FAILED) munmap(base_, kBytes);
  }
  double* at(size_t offset) { return reinterpret_cast<double*>(static_cast<char*>(base_) + offset); }
  double* A() { return at(0); }
  double* B() { return at(8192); }
  double* C() { return at(16384); }
  const double* alpha() { return at(24576); }
  const double* beta() { return at(32768); }
  cublasHandle_t handle() { return reinterpret_cast<cublasHandle_t>(at(40960)); }

  ozdgemm_status_t device(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                          int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int s = 14,
                          const double* a = nullptr) {
    ozdgemm_options_t o = ozdgemm_default_options();
    o.num_moduli = s;
    return ozdgemm_dgemm(handle(), ta, tb, m, n, k, alpha(), a != nullptr ? a : A(), lda, B(),
                         ldb, beta(), C(), ldc, o);
  }
  ozdgemm_status_t reference(char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t lda,
                             int64_t ldb, int64_t ldc, int s = 14, double alpha = 1.0) {
    ozdgemm_options_t o = ozdgemm_default_options();
    o.num_moduli = s;
    return ozdgemm_dgemm_reference(ta, tb, m, n, k, alpha, A(), lda, B(), ldb, 0.5, C(), ldc, o);
  }

  static constexpr size_t kBytes = 65536;
  void* base_ = MAP_FAILED;
};

constexpr auto N = CUBLAS_OP_N;
constexpr auto T = CUBLAS_OP_T;
constexpr auto kInvalid = OZDGEMM_STATUS_INVALID_VALUE;
constexpr auto kAlloc = OZDGEMM_STATUS_ALLOC_FAILED;

TEST(CheckedMath, MultiplyAndAddReportOverflow) {
  using detail::checked_add;
  using detail::checked_mul;
  int64_t r = 0;
  EXPECT_TRUE(checked_mul(kTwo31, kTwo31, &r));
  EXPECT_EQ(r, kTwo62);
  EXPECT_FALSE(checked_mul(kTwo62, int64_t{2}, &r));
  EXPECT_FALSE(checked_mul(kTwo31 * 4, kTwo31 * 2, &r));  // 2^65
  EXPECT_FALSE(checked_mul(int64_t{-1}, std::numeric_limits<int64_t>::min(), &r));
  EXPECT_TRUE(checked_add(kMaxI64 - 1, int64_t{1}, &r));
  EXPECT_FALSE(checked_add(kMaxI64, int64_t{1}, &r));
  size_t z = 0;
  EXPECT_FALSE(checked_mul(size_t{1} << 32, size_t{1} << 32, &z));
  EXPECT_TRUE(checked_mul(size_t{1} << 32, size_t{1} << 31, &z));
  EXPECT_EQ(z, size_t{1} << 63);
}

TEST(CheckedMath, BytesAndExtents) {
  using detail::checked_bytes;
  using detail::matrix_extent;
  size_t b = 0;
  EXPECT_TRUE(checked_bytes(int64_t{1} << 59, 8, &b));
  EXPECT_EQ(b, size_t{1} << 62);
  EXPECT_FALSE(checked_bytes(int64_t{1} << 60, 8, &b));  // 2^63 > PTRDIFF_MAX
  EXPECT_FALSE(checked_bytes(int64_t{1} << 61, 8, &b));  // 2^64 wraps size_t
  EXPECT_FALSE(checked_bytes(-1, 1, &b));
  int64_t e = -1;
  EXPECT_TRUE(matrix_extent(0, kMaxI64, kMaxI64, &e));  // empty: no span at all
  EXPECT_EQ(e, 0);
  EXPECT_TRUE(matrix_extent(5, 1, kTwo62, &e));  // one column: ld never multiplies
  EXPECT_EQ(e, 5);
  EXPECT_TRUE(matrix_extent(3, 4, 10, &e));
  EXPECT_EQ(e, 33);
  EXPECT_FALSE(matrix_extent(1, 3, kTwo62, &e));       // 2 * 2^62 overflows
  EXPECT_FALSE(matrix_extent(kMaxI64, 2, kMaxI64, &e));  // ld + rows overflows
  EXPECT_FALSE(matrix_extent(-1, 2, 2, &e));
  const void* top = reinterpret_cast<const void*>(~uintptr_t{0} - 4095);
  EXPECT_TRUE(detail::addressable_matrix(top, 4, 1, 4));       // 32 bytes below the top
  EXPECT_FALSE(detail::addressable_matrix(top, 1024, 1, 1024));  // 8 KiB would wrap
}

TEST(CheckedMath, StridedElementsOfABatch) {
  using detail::strided_element;
  const void* at = nullptr;
  const auto* base = reinterpret_cast<const char*>(uintptr_t{1} << 40);
  EXPECT_TRUE(strided_element(base, 3, 10, 8, &at));
  EXPECT_EQ(at, base + 240);
  EXPECT_TRUE(strided_element(base, 3, -10, 16, &at));  // a negative stride walks back
  EXPECT_EQ(at, base - 480);
  EXPECT_TRUE(strided_element(base, 1000, 0, 8, &at));  // broadcast
  EXPECT_EQ(at, base);
  EXPECT_FALSE(strided_element(base, 2, kMaxI64 / 2 + 1, 1, &at));  // index * stride overflows
  EXPECT_FALSE(strided_element(base, 1, kTwo62, 8, &at));            // the bytes overflow
  EXPECT_FALSE(strided_element(base, 1, -(int64_t{1} << 41), 1, &at));  // below address 0
  EXPECT_FALSE(strided_element(base, 1, std::numeric_limits<int64_t>::min(), 1, &at));
  const void* top = reinterpret_cast<const void*>(~uintptr_t{0} - 4095);
  EXPECT_FALSE(strided_element(top, 1, 4096, 1, &at));  // wraps past the top
}

// ILP64 host names can pass sizes the GPU path's 32-bit INT8 GEMMs cannot take: the host path
// declines them (the CPU BLAS runs them) before anything else is asked.
TEST(CheckedMath, HostPathDeclinesSizesBeyondTheGpuPath) {
  EXPECT_TRUE(detail::fits_gpu_path(kMaxDim, kMaxDim, kMaxDim, false));
  EXPECT_FALSE(detail::fits_gpu_path(kMaxDim + 1, 1, 1, false));
  EXPECT_FALSE(detail::fits_gpu_path(1, 1, kMaxDim + 1, false));
  EXPECT_TRUE(detail::fits_gpu_path(kMaxDim, detail::kMaxHalfDim, detail::kMaxHalfDim, true));
  EXPECT_FALSE(detail::fits_gpu_path(1, detail::kMaxHalfDim + 1, 1, true));
  EXPECT_STREQ(detail::host_gemm_declines(kTwo31 + 5, 3, 3, false),
               "beyond the GPU path's 32-bit dimensions");
  EXPECT_STREQ(detail::host_gemm_declines(3, 3, int64_t{1} << 30, true),
               "beyond the GPU path's 32-bit dimensions");
}

TEST(CheckedMath, WorkspaceAndScratchSizesRefuseOverflow) {
  using detail::scaling_mode;
  size_t b = 0;
  for (auto mode : {scaling_mode::fast, scaling_mode::accurate}) {
    ASSERT_TRUE(detail::emulation_workspace_bytes(100, 200, 300, detail::moduli_setting::fixed(14),
                                                  mode, &b));
    EXPECT_GE(b, size_t{14} * 112 * 304 + size_t{14} * 208 * 304 + size_t{4} * 14 * 112 * 208);
    EXPECT_FALSE(detail::emulation_workspace_bytes(kMaxDim, 16, kBigK,
                                                   detail::moduli_setting::fixed(14), mode, &b));
    EXPECT_FALSE(detail::emulation_workspace_bytes(kMaxDim, kMaxDim, kMaxDim,
                                                   detail::moduli_setting::fixed(20), mode, &b));
    EXPECT_FALSE(detail::emulation_workspace_bytes(kMaxI64, 1, 1, detail::moduli_setting::fixed(2),
                                                   mode, &b));
    EXPECT_FALSE(
        detail::emulation_workspace_bytes(-1, 1, 1, detail::moduli_setting::fixed(2), mode, &b));
    EXPECT_THROW(detail::emulation_workspace_bytes(kTwo62, kTwo62, 1,
                                                   detail::moduli_setting::fixed(2), mode),
                 std::length_error);
  }
  ASSERT_TRUE(detail::reference_scratch_bytes(10, 20, 30, 14, &b));
  EXPECT_EQ(b, size_t{10 * 30 + 20 * 30 + 14 * 10 * 30 + 14 * 20 * 30 + 8 * 10 * 20});
  EXPECT_FALSE(detail::reference_scratch_bytes(kTwo31, 1, kBigK, 14, &b));
  EXPECT_FALSE(detail::reference_scratch_bytes(kTwo62, kTwo62, kTwo62, 2, &b));
}

TEST_F(Poisoned, DeviceEntryRefusesBadSizesWithoutTouchingAnything) {
  EXPECT_EQ(device(N, N, -1, 4, 4, 4, 4, 4), kInvalid);
  EXPECT_EQ(device(N, N, 4, 4, -kTwo62, 4, 4, 4), kInvalid);
  EXPECT_EQ(device(N, N, 8, 4, 4, 7, 4, 8), kInvalid);                 // lda < m
  EXPECT_EQ(device(N, N, kTwo31, 16, 16, kTwo31, 16, kTwo31), kInvalid);  // m past 32-bit INT8
  EXPECT_EQ(device(N, N, 16, 16, kTwo62, 16, kTwo62, 16), kInvalid);
  EXPECT_EQ(device(N, N, kMaxI64, kMaxI64, kMaxI64, kMaxI64, kMaxI64, kMaxI64), kInvalid);
  // ld up to 2^62 with 2^30 columns: (cols - 1) ld overflows int64_t.
  EXPECT_EQ(device(N, N, 16, 16, int64_t{1} << 30, kTwo62, kTwo62, 16), kInvalid);
  EXPECT_EQ(device(T, T, 1 << 30, 1 << 30, 16, kTwo62, kTwo62, kTwo62), kInvalid);
  // Extents that fit int64_t but not PTRDIFF_MAX bytes (2^61 elements = 2^64 bytes).
  EXPECT_EQ(device(N, N, 16, 16, int64_t{1} << 30, kTwo31, kTwo31, 16), kInvalid);
  // C of kMaxDim^2 elements: 2^65 bytes.
  EXPECT_EQ(device(N, N, kMaxDim, kMaxDim, 1, kMaxDim, 1, kMaxDim), kInvalid);
  // An A that would wrap past the top of the address space.
  const double* top = reinterpret_cast<const double*>(~uintptr_t{0} - 4095);
  EXPECT_EQ(device(N, N, 1024, 16, 16, 1024, 16, 1024, 14, top), kInvalid);
  // Valid sizes whose workspace cannot be counted: an allocation failure, refused before the
  // handle or alpha is read.
  EXPECT_EQ(device(N, N, kMaxDim, 16, kBigK, kMaxDim, kBigK, kMaxDim), kAlloc);
  EXPECT_EQ(device(N, T, kMaxDim, 16, kBigK, kMaxDim, 16, kMaxDim, 20), kAlloc);
  EXPECT_EQ(ozdgemm_status_to_cublas(kAlloc), CUBLAS_STATUS_ALLOC_FAILED);
  EXPECT_EQ(ozdgemm_status_to_cublas(kInvalid), CUBLAS_STATUS_INVALID_VALUE);
  // Empty results: nothing to do, whatever the other sizes.
  EXPECT_EQ(device(N, N, 0, kTwo62, kTwo62, 1, kTwo62, 1), OZDGEMM_STATUS_SUCCESS);
  EXPECT_EQ(device(N, N, kTwo62, 0, kTwo62, kTwo62, kTwo62, kTwo62), OZDGEMM_STATUS_SUCCESS);
}

TEST_F(Poisoned, ReferenceEntryRefusesBadSizesWithoutTouchingAnything) {
  EXPECT_EQ(reference('N', 'N', -1, 4, 4, 4, 4, 4), kInvalid);
  EXPECT_EQ(reference('N', 'N', 4, 4, 4, 3, 4, 4), kInvalid);  // lda < m
  EXPECT_EQ(reference('N', 'N', kTwo62, kTwo62, kTwo62, kTwo62, kTwo62, kTwo62), kInvalid);
  EXPECT_EQ(reference('T', 'N', 16, 16, kTwo62, kTwo62, kTwo62, 16), kInvalid);
  EXPECT_EQ(reference('N', 'T', 2, 2, 2, kTwo62, kTwo62, 2), kInvalid);
  EXPECT_EQ(reference('N', 'N', kTwo31, kTwo31, 0, kTwo31, 1, kTwo31), kInvalid);  // C 2^65 B
  EXPECT_EQ(reference('N', 'N', kMaxI64, 2, 0, kMaxI64, 1, kMaxI64), kInvalid);
  // Valid, addressable operands; the scratch s m k overflows: refused before A is scanned.
  EXPECT_EQ(reference('N', 'N', kTwo31, 1, kBigK, kTwo31, kBigK, kTwo31), kAlloc);
  EXPECT_EQ(reference('T', 'N', kTwo31, 1, kBigK, kBigK, kBigK, kTwo31, 20), kAlloc);
  EXPECT_EQ(reference('N', 'N', 0, kTwo62, kTwo62, 1, kTwo62, 1), OZDGEMM_STATUS_SUCCESS);
}

}  // namespace
}  // namespace ozdgemm::test
