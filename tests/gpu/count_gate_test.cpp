// Auto mode's gate on the count a per-call choice returns (core/moduli_choice.hpp,
// dispatch/decision.hpp): asked once, with the count the host chose; a count it lets run gives
// the bits of a call without a gate; a count it declines runs nothing (C untouched, the chosen
// count reported, the reason kChosenCountSlower), or native cublasDgemm when the entry runs the
// fallback itself. Real (dgemm_device) and complex (zgemm_device) calls.
#include <cuComplex.h>

#include <cstring>
#include <vector>

#include "api/dgemm_internal.hpp"
#include "api/zgemm_internal.hpp"
#include "auto_fixture.hpp"
#include "core/moduli_choice.hpp"
#include "engine/run.hpp"
#include "gpu_fixture.hpp"
#include "support/inputs.hpp"

namespace {

using namespace ozdgemm::test::choice;
using ozdgemm::detail::device_result;
using ozdgemm::test::host_matrix;

// Runs the counts up to `largest`; remembers what it was asked.
class test_gate final : public ozdgemm::detail::moduli_gate {
 public:
  explicit test_gate(int largest) : largest_(largest) {}
  bool runs(int s) const override {
    ++asked;
    last = s;
    return s <= largest_;
  }
  mutable int asked = 0, last = 0;

 private:
  int largest_;
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

class CountGate : public AutoGpuTest {};

TEST_F(CountGate, RealCallRunsOrDeclinesTheChosenCount) {
  const int64_t m = 300, n = 200, k = 256;
  const host_matrix a = ozdgemm::test::phi_matrix(m, k, 0.5, 71);
  const host_matrix b = ozdgemm::test::phi_matrix(k, n, 0.5, 72);
  const host_matrix c0 = ozdgemm::test::phi_matrix(m, n, 1.0, 73);
  device_buffer<double> da(a.data), db(b.data), dc(c0.data);
  const double alpha = 1.25, beta = -0.5;
  const ozdgemm_options_t o = certified_options(OZDGEMM_SCALING_FAST, OZDGEMM_ACCURACY_NATIVE);
  const auto run = [&](const test_gate* gate, bool run_native) {
    cudaMemcpy(dc.ptr, c0.data.data(), c0.data.size() * sizeof(double), cudaMemcpyHostToDevice);
    const device_result r =
        ozdgemm::detail::dgemm_device(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da.ptr, m,
                                      db.ptr, k, &beta, dc.ptr, m, o, run_native, false, gate);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return r;
  };

  const device_result plain = run(nullptr, false);
  ASSERT_EQ(plain.status, OZDGEMM_STATUS_SUCCESS);
  ASSERT_GE(plain.s, ozdgemm::detail::kMinModuli) << "phi = 0.5 is certified at some s <= 20";
  EXPECT_EQ(plain.chosen, plain.s);
  const std::vector<double> emulated = dc.to_host();

  test_gate lets(plain.s);
  const device_result ran = run(&lets, false);
  EXPECT_EQ(ran.s, plain.s);
  EXPECT_EQ(lets.asked, 1);
  EXPECT_EQ(lets.last, plain.s);
  EXPECT_TRUE(same_bits(dc.to_host(), emulated));

  test_gate declines(plain.s - 1);
  const device_result declined = run(&declines, false);
  EXPECT_EQ(declined.status, OZDGEMM_STATUS_SUCCESS);
  EXPECT_EQ(declined.s, 0);
  EXPECT_EQ(declined.chosen, plain.s);
  EXPECT_EQ(declined.not_emulated, ozdgemm::detail::kChosenCountSlower);
  EXPECT_TRUE(same_bits(dc.to_host(), c0.data)) << "a declined count touches no C";

  device_problem d(ozdgemm::test::operand_pair{a, b}, c0);
  const std::vector<double> native = native_result(handle_, d, c0, alpha, beta);
  const device_result fell_back = run(&declines, true);
  EXPECT_EQ(fell_back.s, 0);
  EXPECT_TRUE(same_bits(dc.to_host(), native)) << "the entry's own fallback is native cublasDgemm";
}

TEST_F(CountGate, ComplexCallRunsOrDeclinesTheChosenCount) {
  const int64_t m = 130, n = 96, k = 160;
  const host_matrix pa = ozdgemm::test::phi_matrix(2 * m, k, 0.5, 81);
  const host_matrix pb = ozdgemm::test::phi_matrix(2 * k, n, 0.5, 82);
  const host_matrix pc = ozdgemm::test::phi_matrix(2 * m, n, 1.0, 83);
  // Interleaved (re, im) columns of m x k, k x n and m x n complex matrices.
  device_buffer<double> da(pa.data), db(pb.data), dc(pc.data);
  const cuDoubleComplex alpha = make_cuDoubleComplex(0.5, -1.0),
                        beta = make_cuDoubleComplex(0.25, 0.0);
  const ozdgemm_options_t o = certified_options(OZDGEMM_SCALING_FAST, OZDGEMM_ACCURACY_NATIVE);
  const auto as_z = [](double* p) { return reinterpret_cast<cuDoubleComplex*>(p); };
  const auto run = [&](const test_gate* gate) {
    cudaMemcpy(dc.ptr, pc.data.data(), pc.data.size() * sizeof(double), cudaMemcpyHostToDevice);
    const device_result r = ozdgemm::detail::zgemm_device(
        handle_, CUBLAS_OP_N, CUBLAS_OP_C, m, n, k, &alpha, as_z(da.ptr), m, as_z(db.ptr), n, &beta,
        as_z(dc.ptr), m, o, false, false, gate);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return r;
  };
  const device_result plain = run(nullptr);
  ASSERT_EQ(plain.status, OZDGEMM_STATUS_SUCCESS);
  ASSERT_GE(plain.s, ozdgemm::detail::kMinModuli);
  const std::vector<double> emulated = dc.to_host();

  test_gate lets(ozdgemm::detail::kMaxModuli);
  EXPECT_EQ(run(&lets).s, plain.s);
  EXPECT_EQ(lets.last, plain.s);
  EXPECT_TRUE(same_bits(dc.to_host(), emulated));

  test_gate declines(plain.s - 1);
  const device_result declined = run(&declines);
  EXPECT_EQ(declined.s, 0);
  EXPECT_EQ(declined.chosen, plain.s);
  EXPECT_EQ(declined.not_emulated, ozdgemm::detail::kChosenCountSlower);
  EXPECT_TRUE(same_bits(dc.to_host(), pc.data));
}

}  // namespace
