// One complex call on the device for the GPU ZGEMM tests (zgemm_test.cpp, zgemm_gpu_choice_test.cpp):
// the operands stored for their ops, C, device copies and the calls on them (ozdgemm_zgemm_ex,
// native cublasZgemm, the host reference), and a bit-for-bit comparison of complex results.
#pragma once

#include <cuComplex.h>
#include <cublas_v2.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/complex_reference.hpp"
#include "support/complex_inputs.hpp"
#include "support/zgemm_calls.hpp"

namespace ozdgemm::test {

inline cublasOperation_t to_op(char c) {
  return c == 'N' ? CUBLAS_OP_N : c == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
}

// Both parts bit for bit (any two NaNs equal); the count of differing elements.
inline int64_t differing(const std::vector<zdouble>& x, const std::vector<zdouble>& y) {
  if (x.size() != y.size()) return -1;
  int64_t d = 0;
  for (size_t i = 0; i < x.size(); ++i)
    d += !same_bits(x[i].real(), y[i].real()) || !same_bits(x[i].imag(), y[i].imag());
  return d;
}

// One complex call on the device: A, B, C and, for device pointer mode, alpha and beta.
struct zproblem {
  char ta, tb;
  int64_t m, n, k;
  zdouble alpha, beta;
  zmatrix A, B, C0;
  device_buffer<zdouble> a, b, c, scalars;
  zproblem(char ta_, char tb_, const zmatrix& op_a, const zmatrix& op_b, int64_t pad, zdouble al,
           zdouble be, uint64_t seed, bool nan_c = false)
      : ta(ta_),
        tb(tb_),
        m(op_a.rows),
        n(op_b.cols),
        k(op_a.cols),
        alpha(al),
        beta(be),
        A(store_for_zop(op_a, ta_, pad)),
        B(store_for_zop(op_b, tb_, pad)),
        C0(make_zmatrix(op_a.rows, op_b.cols, op_a.rows + pad, zdouble(-7.25e33, 3.5e-21))),
        a(A.data),
        b(B.data),
        c(C0.data),
        scalars(std::vector<zdouble>{al, be}) {
    const zmatrix data = phi_zmatrix(m, n, 1.0, seed);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i)
        C0(i, j) = nan_c ? zdouble(std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::quiet_NaN())
                         : data(i, j);
    reset_c();
  }
  // Synchronised: a pageable copy may return before its DMA lands, and the calls run on other
  // streams than the legacy one the copy is ordered on.
  void reset_c() {
    cudaMemcpy(c.ptr, C0.data.data(), C0.data.size() * sizeof(zdouble), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
  }
  // ozdgemm_zgemm_ex on the device (pointer mode as the handle has it); C reset first.
  ozdgemm_status_t run(cublasHandle_t h, const ozdgemm_options_t& o, bool device_scalars,
                       int* s_used) {
    reset_c();
    const cuDoubleComplex* al = device_scalars ? cu(scalars.ptr) : cu(&alpha);
    const cuDoubleComplex* be = device_scalars ? cu(scalars.ptr + 1) : cu(&beta);
    return ozdgemm_zgemm_ex(h, to_op(ta), to_op(tb), m, n, k, al, cu(a.ptr), A.ld, cu(b.ptr), B.ld,
                            be, cu(c.ptr), C0.ld, o, s_used);
  }
  // Native cublasZgemm_64 on the same arguments (host pointer mode scalars).
  cublasStatus_t run_native(cublasHandle_t h) {
    reset_c();
    return cublasZgemm_64(h, to_op(ta), to_op(tb), m, n, k, cu(&alpha), cu(a.ptr), A.ld, cu(b.ptr),
                          B.ld, cu(&beta), cu(c.ptr), C0.ld);
  }
  // The host reference on a copy of C0.
  std::vector<zdouble> reference(const ozdgemm_options_t& o) const {
    zmatrix C = C0;
    EXPECT_EQ(ozdgemm_zgemm_reference(ta, tb, m, n, k, cu(alpha), cu(A.ptr()), A.ld, cu(B.ptr()),
                                      B.ld, cu(beta), cu(C.ptr()), C.ld, o),
              OZDGEMM_STATUS_SUCCESS);
    return C.data;
  }
  // The moduli count the host reference runs for these options.
  int reference_s(int moduli, bool fast) const {
    zmatrix C = C0;
    const ozdgemm::detail::complex_problem p =
        ozdgemm::test::zproblem_of(ta, tb, m, n, k, A.ptr(), A.ld, B.ptr(), B.ld, C.ptr(), C.ld);
    const ozdgemm::detail::moduli_setting setting = ozdgemm::test::setting_of(moduli);
    return ozdgemm::detail::reference_zgemm(
        p, {alpha.real(), alpha.imag()}, {beta.real(), beta.imag()}, setting,
        fast ? ozdgemm::detail::scaling_mode::fast : ozdgemm::detail::scaling_mode::accurate,
        ozdgemm::detail::complex_target({}, setting));
  }
};

}  // namespace ozdgemm::test
