// A GEMM whose B is A read the other way (engine/pipeline.hpp's b_from_a: a SYRK's or HERK's
// square or triangle, a GEMM of A and A^T or A^H) reads A's residues (real calls: A's whole
// scaling) as B's. Its bits must be those of the same call whose B is an equal copy of A in memory
// of its own, which computes every pass of B from B: at a fixed count and at the certified default
// (its first call chooses on the host, its second launches the speculated count with the FP64
// fallback behind it), on the whole square and on one triangle, op(A) = A and A^T (A^H), real and
// complex (Karatsuba form; ^T and ^H). The data: exponents over a few binades, a row of op(A)
// scaled up and one scaled down by 2^24 (fixed count only: the certified default finds no count
// for them), a row holding Inf and one holding NaN.
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "api/dgemm_internal.hpp"
#include "api/zgemm_internal.hpp"
#include "engine/complex_gemm.hpp"
#include "gpu_fixture.hpp"
#include "part_case.hpp"

namespace {

using namespace ozdgemm::detail;

constexpr int64_t kN = 1100, kK = 200;

using ozdgemm::test::part_case;

class SharedOperand : public GpuTest, public ::testing::WithParamInterface<part_case> {
 protected:
  int64_t ld() const { return (GetParam().transposed ? kK : kN) + 5; }
  int64_t cols() const { return GetParam().transposed ? kN : kK; }
  // w doubles per element (2: complex).
  std::vector<double> operand(int w) const {
    std::mt19937_64 g(41);
    std::normal_distribution<double> nd;
    std::vector<double> a(static_cast<size_t>(ld() * cols() * w));
    for (double& x : a) x = nd(g) * std::exp2(std::round(1.5 * nd(g)));
    const auto at = [&](int64_t row, int64_t l) {
      return static_cast<size_t>(GetParam().transposed ? row * ld() + l : l * ld() + row) * w;
    };
    if (GetParam().moduli > 0)
      for (int64_t l = 0; l < kK; ++l) {
        a[at(30, l)] *= 0x1p24;
        a[at(31, l)] *= 0x1p-24;
      }
    a[at(7, 3)] = INFINITY;
    a[at(kN - 20, 50) + w - 1] = NAN;
    return a;
  }
  std::vector<double> c_values(int w) const {
    std::mt19937_64 g(42);
    std::normal_distribution<double> nd;
    std::vector<double> c(static_cast<size_t>(ldc() * kN * w));
    for (double& x : c) x = nd(g);
    return c;
  }
  int64_t ldc() const { return kN + 2; }
  // Both calls emulated, and C (w doubles per element) of the shared call bit for bit the other's.
  void expect_same(const device_result& shared_r, const device_result& separate_r,
                   const device_buffer<double>& shared, const device_buffer<double>& separate,
                   const std::vector<double>& c0, int round) {
    for (const device_result* r : {&shared_r, &separate_r}) {
      ASSERT_EQ(r->status, OZDGEMM_STATUS_SUCCESS);
      ASSERT_NE(r->s, 0) << (r->not_emulated != nullptr ? r->not_emulated : "");
    }
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<double> got = shared.to_host(), want = separate.to_host();
    int64_t differ = 0, changed = 0;
    for (size_t at = 0; at < got.size(); ++at) {
      changed += !same_bits(got[at], c0[at]);
      if (!same_bits(got[at], want[at]) && ++differ <= 3)
        ADD_FAILURE() << "round " << round << " element " << at << ": " << got[at] << " expected "
                      << want[at];
    }
    EXPECT_EQ(differ, 0) << "round " << round;
    EXPECT_GT(changed, static_cast<int64_t>(got.size()) / 3) << "round " << round;  // C written
  }
};

TEST_P(SharedOperand, ATimesItsTransposeEqualsTheCallWithACopyOfA) {
  ozdgemm_options_t options = ozdgemm_default_options();
  options.num_moduli = GetParam().moduli;
  const std::vector<double> ha = operand(1), hc = c_values(1);
  const device_buffer<double> da(ha), copy(ha);
  const double alpha = -1.25, beta = 0.5;
  const cublasOperation_t ta = GetParam().transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = ta == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
  const c_triangle triangle{GetParam().part, false};
  for (int round = 0; round < 2; ++round) {  // certified: the host's choice, then speculated
    const device_buffer<double> shared(hc), separate(hc);
    const device_result r1 =
        dgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, da.ptr, ld(), da.ptr, ld(), &beta,
                     shared.ptr, ldc(), options, false, true, nullptr, triangle);
    const device_result r2 =
        dgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, da.ptr, ld(), copy.ptr, ld(), &beta,
                     separate.ptr, ldc(), options, false, true, nullptr, triangle);
    expect_same(r1, r2, shared, separate, hc, round);
  }
}

// HERK's product (op(B) = op(A)^H) and ZSYRK's (op(A)^T), Karatsuba form.
TEST_P(SharedOperand, ComplexATimesItsTransposeOrAdjointEqualsTheCallWithACopyOfA) {
  set_complex_form_setting(complex_form::karatsuba);
  ozdgemm_options_t options = ozdgemm_default_options();
  options.num_moduli = GetParam().moduli;
  const std::vector<double> ha = operand(2), hc = c_values(2);
  const device_buffer<double> da(ha), copy(ha);
  const auto* a = reinterpret_cast<const cuDoubleComplex*>(da.ptr);
  const auto* a_copy = reinterpret_cast<const cuDoubleComplex*>(copy.ptr);
  const cuDoubleComplex alpha = make_cuDoubleComplex(0.75, -0.25),
                        beta = make_cuDoubleComplex(-0.5, 0.125);
  for (const bool adjoint : {true, false}) {
    const cublasOperation_t other = adjoint ? CUBLAS_OP_C : CUBLAS_OP_T;
    const cublasOperation_t ta = GetParam().transposed ? other : CUBLAS_OP_N;
    const cublasOperation_t tb = ta == CUBLAS_OP_N ? other : CUBLAS_OP_N;
    const c_triangle triangle{GetParam().part, adjoint && GetParam().part != c_part::all};
    forget_learnt_counts();
    for (int round = 0; round < 2; ++round) {
      const device_buffer<double> shared(hc), separate(hc);
      const device_result r1 = zgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, a, ld(), a, ld(),
                                            &beta, reinterpret_cast<cuDoubleComplex*>(shared.ptr),
                                            ldc(), options, false, true, nullptr, triangle);
      const device_result r2 =
          zgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, a, ld(), a_copy, ld(), &beta,
                       reinterpret_cast<cuDoubleComplex*>(separate.ptr), ldc(), options, false,
                       true, nullptr, triangle);
      SCOPED_TRACE(adjoint ? "op(A)^H" : "op(A)^T");
      expect_same(r1, r2, shared, separate, hc, round);
    }
  }
}

// The count chosen on the GPU runs its INT8 GEMMs from CUDA graphs kept per workspace and shape
// (engine/graph_choice.cpp). Calls of one shape on one handle that alternate between reading A's
// planes as B's and a B of their own (B other data than A), each the first of its shape (the
// graph path, not a speculated count), must each run their own graphs: the calls with B of their
// own give the same bits before and after, and the shared one those of its copy.
class SharedOperandGraphs : public GpuTest {};

TEST_F(SharedOperandGraphs, ASharedAndAnOwnBOfOneShapeRunTheirOwnGraphs) {
  constexpr int64_t n = 640, k = 160;
  std::mt19937_64 g(43);
  std::normal_distribution<double> nd;
  std::vector<double> ha(static_cast<size_t>(2 * n * k)), hb(ha.size());
  for (double& x : ha) x = nd(g);
  for (double& x : hb) x = nd(g);
  const std::vector<double> hc(static_cast<size_t>(2 * n * n), 0.0);
  const device_buffer<double> da(ha), copy(ha), db(hb);
  const ozdgemm_options_t options = ozdgemm_default_options();  // the certified count
  for (const bool complex : {false, true}) {
    SCOPED_TRACE(complex ? "complex" : "real");
    if (complex) set_complex_form_setting(complex_form::karatsuba);
    // op(B) = B (k x n, ld k), or A^T / A^H (A n x k, ld n).
    const auto call = [&](const double* b, bool shared_shape, const device_buffer<double>& c) {
      forget_learnt_counts();
      const cublasOperation_t tb = !shared_shape ? CUBLAS_OP_N
                                   : complex     ? CUBLAS_OP_C
                                                 : CUBLAS_OP_T;
      const int64_t ldb = shared_shape ? n : k;
      if (!complex) {
        const double one = 1.0, zero = 0.0;
        return dgemm_device(handle_, CUBLAS_OP_N, tb, n, n, k, &one, da.ptr, n, b, ldb, &zero,
                            c.ptr, n, options, false, true);
      }
      const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0), zero = make_cuDoubleComplex(0, 0);
      return zgemm_device(handle_, CUBLAS_OP_N, tb, n, n, k, &one,
                          reinterpret_cast<const cuDoubleComplex*>(da.ptr), n,
                          reinterpret_cast<const cuDoubleComplex*>(b), ldb, &zero,
                          reinterpret_cast<cuDoubleComplex*>(c.ptr), n, options, false, true);
    };
    const device_buffer<double> own0(hc), shared(hc), own1(hc), separate(hc);
    const device_result r[4] = {call(db.ptr, false, own0), call(da.ptr, true, shared),
                                call(db.ptr, false, own1), call(copy.ptr, true, separate)};
    for (const device_result& x : r) {
      ASSERT_EQ(x.status, OZDGEMM_STATUS_SUCCESS);
      ASSERT_NE(x.s, 0) << (x.not_emulated != nullptr ? x.not_emulated : "");
    }
    ASSERT_CUDA(cudaDeviceSynchronize());
    const size_t elements = static_cast<size_t>(n * n * (complex ? 2 : 1));
    for (const auto& [got, want] : {std::pair{&own1, &own0}, std::pair{&shared, &separate}}) {
      const std::vector<double> x = got->to_host(), y = want->to_host();
      int64_t differ = 0, zero = 0;
      for (size_t e = 0; e < elements; ++e) {
        differ += !same_bits(x[e], y[e]);
        zero += x[e] == 0.0;
      }
      EXPECT_EQ(differ, 0);
      EXPECT_LT(zero, static_cast<int64_t>(elements) / 100);  // the calls wrote C
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PartsOpsCounts, SharedOperand,
                         ::testing::Values(part_case{c_part::all, false, 14},
                                           part_case{c_part::all, true, -1},
                                           part_case{c_part::lower, true, 15},
                                           part_case{c_part::upper, false, -1},
                                           part_case{c_part::lower, false, -1}),
                         ozdgemm::test::part_case_name);

}  // namespace
