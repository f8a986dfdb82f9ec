// What the GPU tests of the per-call moduli count share (auto_moduli_test.cpp, gpu_choice_test.cu):
// the issue's input sets, the accuracy targets, device copies of a problem, native cublasDgemm's
// result, and a fixture that releases the library's cache of the handle.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/moduli_choice.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/auto_reference.hpp"
#include "support/auto_inputs.hpp"
#include "support/inputs.hpp"

namespace ozdgemm::test::choice {

using ozdgemm::test::auto_case;
using ozdgemm::test::auto_set;
using ozdgemm::test::host_matrix;
using ozdgemm::test::operand_pair;

inline uint64_t bits_of(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// The sets of the issue (phi in {0.5, 1, 2, 4, 8} and the adversarial ones) at one shape.
inline std::vector<auto_case> issue_sets(int64_t m, int64_t n, int64_t k, uint64_t seed) {
  std::vector<auto_case> v;
  for (double phi : {0.5, 1.0, 2.0, 4.0, 8.0}) {
    char name[32];
    std::snprintf(name, sizeof name, "phi%g", phi);
    std::string s = name;
    for (char& ch : s)
      if (ch == '.') ch = 'p';
    v.push_back({s, auto_set::phi, phi, m, n, k, seed += 10});
  }
  v.push_back({"nonneg", auto_set::nonnegative, 1.0, m, n, k, seed += 10});
  v.push_back({"rows_pm40", auto_set::rows_pm40, 1.0, m, n, k, seed += 10});
  v.push_back({"huge_row", auto_set::huge_row, 1.0, m, n, k, seed += 10});
  v.push_back({"near_cancel", auto_set::near_cancel, 1.0, m, n, k, seed += 10});
  return v;
}

struct target_spec {
  const char* name;
  int accuracy;  // ozdgemm_options_t::accuracy
  ozdgemm::detail::accuracy_target host;
};

inline const target_spec kTargets[] = {
    {"native", OZDGEMM_ACCURACY_NATIVE, {ozdgemm::detail::accuracy_kind::native, 0}},
    {"max", OZDGEMM_ACCURACY_MAX, {ozdgemm::detail::accuracy_kind::max, 0}},
    {"bits40", 40, {ozdgemm::detail::accuracy_kind::bits, 40}},
};

inline ozdgemm_options_t auto_options(ozdgemm_scaling_t mode, int accuracy) {
  ozdgemm_options_t o = ozdgemm_default_options();
  o.num_moduli = OZDGEMM_MODULI_AUTO;
  o.scaling = mode;
  o.accuracy = accuracy;
  return o;
}

// Device copies of one problem (op = N, N) and a C to overwrite.
struct device_problem {
  int64_t m, n, k;
  device_buffer<double> a, b, c;
  device_problem(const operand_pair& in, const host_matrix& c0)
      : m(in.a.rows), n(in.b.cols), k(in.a.cols), a(in.a.data), b(in.b.data), c(c0.data) {}
  void reset_c(const host_matrix& c0) {
    cudaMemcpy(c.ptr, c0.data.data(), c0.data.size() * sizeof(double), cudaMemcpyHostToDevice);
  }
};

// Native cublasDgemm of alpha op(A) op(B) + beta C0, host pointer mode.
inline std::vector<double> native_result(cublasHandle_t h, device_problem& d, const host_matrix& c0,
                                  double alpha, double beta) {
  d.reset_c(c0);
  EXPECT_EQ(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d.m), static_cast<int>(d.n),
                        static_cast<int>(d.k), &alpha, d.a.ptr, static_cast<int>(d.m), d.b.ptr,
                        static_cast<int>(d.k), &beta, d.c.ptr, static_cast<int>(d.m)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return d.c.to_host();
}

// Releases what the library cached for the handle before the fixture destroys it.
class AutoGpuTest : public GpuTest {
 protected:
  void TearDown() override {
    if (handle_ != nullptr) {
      cudaDeviceSynchronize();
      ozdgemm_release_handle(handle_);
    }
    GpuTest::TearDown();
  }
};

inline ozdgemm_options_t certified_options(ozdgemm_scaling_t mode, int accuracy) {
  ozdgemm_options_t o = auto_options(mode, accuracy);
  o.num_moduli = OZDGEMM_MODULI_CERTIFIED;
  return o;
}

struct certified_case {
  auto_case c;
  bool anti;  // anti_aligned_inputs(c.phi, ...) instead of make_auto_inputs(c)
  operand_pair inputs() const {
    return anti ? ozdgemm::test::anti_aligned_inputs(c.phi, c.m, c.n, c.k, c.seed)
                : ozdgemm::test::make_auto_inputs(c);
  }
};

// One certified call of the identity tests (the count chosen on the host, auto_moduli_test.cpp,
// and on the GPU, gpu_choice_test.cu): a case, the scaling and an entry of kTargets.
struct certified_param {
  certified_case cc;
  bool fast;
  int target;
  std::string name() const {
    return cc.c.name + "_" + std::to_string(cc.c.m) + "x" + std::to_string(cc.c.n) + "x" +
           std::to_string(cc.c.k) + (fast ? "_fast_" : "_acc_") + kTargets[target].name;
  }
};

// The issue's sets at 128 x 96 x 300 (seeds from sets_seed), both scalings, every target; then
// anti-aligned inputs at phi 1, 2 and 4 (24 x 20 x 1024, seeds from anti_seed), both scalings,
// the native target.
inline std::vector<certified_param> certified_params(uint64_t sets_seed, uint64_t anti_seed) {
  std::vector<certified_param> v;
  for (const auto_case& c : issue_sets(128, 96, 300, sets_seed))
    for (bool fast : {true, false})
      for (int t = 0; t < 3; ++t) v.push_back({{c, false}, fast, t});
  for (double phi : {1.0, 2.0, 4.0}) {
    const auto_case c{"anti_phi" + std::to_string(static_cast<int>(phi)),
                      auto_set::phi,
                      phi,
                      24,
                      20,
                      1024,
                      anti_seed + static_cast<uint64_t>(phi)};
    for (bool fast : {true, false}) v.push_back({{c, true}, fast, 0});
  }
  return v;
}

// A certified call on the host reference: its operands, C0 = phi(m, n, 1, seed + 9), the
// reference's C = alpha A B + beta C0 and the reference's certified choice.
struct certified_reference {
  operand_pair in;
  host_matrix c0, ref;
  ozdgemm::detail::moduli_choice choice;
};
inline certified_reference host_certified(const certified_param& prm, double alpha, double beta) {
  const auto_case& c = prm.cc.c;
  certified_reference r{
      prm.cc.inputs(), ozdgemm::test::phi_matrix(c.m, c.n, 1.0, c.seed + 9), {}, {}};
  r.ref = r.c0;
  const ozdgemm::detail::gemm_problem hp{
      c.m,
      c.n,
      c.k,
      ozdgemm::detail::operand_a(ozdgemm::detail::op_kind::n, r.in.a.ptr(), r.in.a.ld),
      ozdgemm::detail::operand_b(ozdgemm::detail::op_kind::n, r.in.b.ptr(), r.in.b.ld),
      r.ref.ptr(),
      r.ref.ld};
  const auto mode =
      prm.fast ? ozdgemm::detail::scaling_mode::fast : ozdgemm::detail::scaling_mode::accurate;
  r.choice =
      ozdgemm::detail::reference_dgemm_auto(hp, alpha, beta, mode, kTargets[prm.target].host, true);
  return r;
}

}  // namespace ozdgemm::test::choice
