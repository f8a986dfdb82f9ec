// A GEMM whose B is A read the other way (engine/pipeline.hpp's b_is_a: a SYRK's square or
// triangle, a GEMM of A and A^T) scans, scales and reduces A once and reads it as both factors.
// Its bits must be those of the same call whose B is an equal copy of A in memory of its own,
// which computes every pass of B from B: at a fixed count and at the certified default (its first
// call chooses on the host, its second launches the speculated count with the FP64 fallback
// behind it), on the whole square and on one triangle, op(A) = A and A^T. The data: exponents
// over a few binades, a row of op(A) scaled up and one scaled down by 2^24 (fixed count only: the
// certified default finds no count for them), a row holding Inf and one holding NaN.
#include <cmath>
#include <random>
#include <vector>

#include "api/dgemm_internal.hpp"
#include "gpu_fixture.hpp"

namespace {

using namespace ozdgemm::detail;

constexpr int64_t kN = 1100, kK = 200;

struct shared_case {
  c_part part;
  bool transposed;  // op(A) = A^T (A stored k x n)
  int moduli;       // a count, or -1 for the certified default
};

class SharedOperand : public GpuTest, public ::testing::WithParamInterface<shared_case> {
 protected:
  int64_t ld() const { return (GetParam().transposed ? kK : kN) + 5; }
  int64_t cols() const { return GetParam().transposed ? kN : kK; }
  std::vector<double> operand() const {
    std::mt19937_64 g(41);
    std::normal_distribution<double> nd;
    std::vector<double> a(static_cast<size_t>(ld() * cols()));
    for (double& x : a) x = nd(g) * std::exp2(std::round(1.5 * nd(g)));
    const auto at = [&](int64_t row, int64_t l) {
      return static_cast<size_t>(GetParam().transposed ? row * ld() + l : l * ld() + row);
    };
    if (GetParam().moduli > 0)
      for (int64_t l = 0; l < kK; ++l) {
        a[at(30, l)] *= 0x1p24;
        a[at(31, l)] *= 0x1p-24;
      }
    a[at(7, 3)] = INFINITY;
    a[at(kN - 20, 50)] = NAN;
    return a;
  }
};

TEST_P(SharedOperand, ATimesItsTransposeEqualsTheCallWithACopyOfA) {
  ozdgemm_options_t options = ozdgemm_default_options();
  options.num_moduli = GetParam().moduli;
  const int64_t ldc = kN + 2;
  const std::vector<double> ha = operand();
  std::mt19937_64 g(42);
  std::normal_distribution<double> nd;
  std::vector<double> hc(static_cast<size_t>(ldc * kN));
  for (double& x : hc) x = nd(g);
  const device_buffer<double> da(ha), copy(ha);
  const double alpha = -1.25, beta = 0.5;
  const cublasOperation_t ta = GetParam().transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = ta == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
  const c_triangle triangle{GetParam().part, false};
  for (int round = 0; round < 2; ++round) {  // certified: the host's choice, then speculated
    const device_buffer<double> shared(hc), separate(hc);
    const device_result r1 =
        dgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, da.ptr, ld(), da.ptr, ld(), &beta,
                     shared.ptr, ldc, options, false, true, nullptr, triangle);
    const device_result r2 =
        dgemm_device(handle_, ta, tb, kN, kN, kK, &alpha, da.ptr, ld(), copy.ptr, ld(), &beta,
                     separate.ptr, ldc, options, false, true, nullptr, triangle);
    for (const device_result* r : {&r1, &r2}) {
      ASSERT_EQ(r->status, OZDGEMM_STATUS_SUCCESS);
      ASSERT_NE(r->s, 0) << (r->not_emulated != nullptr ? r->not_emulated : "");
    }
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<double> got = shared.to_host(), want = separate.to_host();
    int64_t differ = 0, changed = 0;
    for (size_t at = 0; at < got.size(); ++at) {
      changed += !same_bits(got[at], hc[at]);
      if (!same_bits(got[at], want[at]) && ++differ <= 3)
        ADD_FAILURE() << "round " << round << " element " << at << ": " << got[at] << " expected "
                      << want[at];
    }
    EXPECT_EQ(differ, 0) << "round " << round;
    EXPECT_GT(changed, kN * kN / 3) << "round " << round;  // the call wrote C
  }
}

INSTANTIATE_TEST_SUITE_P(PartsOpsCounts, SharedOperand,
                         ::testing::Values(shared_case{c_part::all, false, 14},
                                           shared_case{c_part::all, true, -1},
                                           shared_case{c_part::lower, true, 15},
                                           shared_case{c_part::upper, false, -1},
                                           shared_case{c_part::lower, false, -1}));

}  // namespace
