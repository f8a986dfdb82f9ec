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

#include "core/moduli_choice.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
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


}  // namespace ozdgemm::test::choice
