// The certified count of complex calls chosen on the GPU (engine/gpu_choice.hpp;
// docs/complex_calls.md, section 1), in the Karatsuba and the four-product form:
//   - eager ozdgemm_zgemm calls with the graph choice (set_gpu_choice_everywhere) run the s that the host's choice
//     (ozdgemm_zgemm_ex) reports, counted by the GPU's tally, and give that call's bits, over op
//     pairs, both scalings, both pointer modes and a depth whose halves need two k-blocks;
//     where no s serves (anti-aligned inputs), C is native DGEMM on the embedding followed by
//     the epilogue, bit for bit;
//   - graph capture: one captured ozdgemm_zgemm replayed on three inputs in the same buffers
//     (one of them anti-aligned) gives on each the s and the bits of the uncaptured call.
#include <cuComplex.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "choice_tally.hpp"
#include "engine/complex_gemm.hpp"
#include "engine/gpu_choice.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/complex_reference.hpp"
#include "support/complex_inputs.hpp"
#include "support/zgemm_calls.hpp"
#include "zgemm_problem.hpp"

namespace {

using ozdgemm::detail::complex_form;
using ozdgemm::test::anti_aligned_zinputs;
using ozdgemm::test::cu;
using ozdgemm::test::differing;
using ozdgemm::test::grown_slot;
using ozdgemm::test::phi_zmatrix;
using ozdgemm::test::tally_now;
using ozdgemm::test::to_op;
using ozdgemm::test::zdouble;
using ozdgemm::test::zmatrix;
using ozdgemm::test::zproblem;

const char* form_name(complex_form f) {
  return f == complex_form::karatsuba ? "karatsuba" : "four";
}

// What the GPU choice's native fallback gives for a complex call: T = A' B* by cublasDgemm on a
// handle with no workspace (as the IF body's, engine/emulate.cpp, native_body), then the
// epilogue (here its host twin, the same arithmetic) with the call's alpha and beta on C0.
std::vector<zdouble> native_on_embedding(const zproblem& p) {
  zmatrix C = p.C0;
  const ozdgemm::detail::complex_problem cp = ozdgemm::test::zproblem_of(
      p.ta, p.tb, p.m, p.n, p.k, p.A.ptr(), p.A.ld, p.B.ptr(), p.B.ld, C.ptr(), C.ld);
  const ozdgemm::detail::host_embedding e = ozdgemm::detail::embed_on_host(cp);
  device_buffer<double> a(e.a_pack), b(e.b_pack), t(e.t);
  cublasHandle_t h = nullptr;
  EXPECT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasSetWorkspace(h, nullptr, 0), CUBLAS_STATUS_SUCCESS);
  const double one = 1.0, zero = 0.0;
  EXPECT_EQ(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, e.real.m, e.real.n, e.real.k, &one, a.ptr,
                           e.real.a.ld, b.ptr, e.real.b.ld, &zero, t.ptr, e.real.ldc),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cublasDestroy(h);
  const std::vector<double> th = t.to_host();
  ozdgemm::detail::complex_epilogue_on_host(cp, th.data(), {p.alpha.real(), p.alpha.imag()},
                                            {p.beta.real(), p.beta.imag()});
  return C.data;
}

// ozdgemm_zgemm (the GPU's choice where it applies) on p's buffers, C reset first; the pointer
// mode is the handle's.
ozdgemm_status_t run_chosen(zproblem& p, cublasHandle_t h, const ozdgemm_options_t& o,
                            bool device_scalars) {
  p.reset_c();
  const cuDoubleComplex* al = device_scalars ? cu(p.scalars.ptr) : cu(&p.alpha);
  const cuDoubleComplex* be = device_scalars ? cu(p.scalars.ptr + 1) : cu(&p.beta);
  return ozdgemm_zgemm(h, to_op(p.ta), to_op(p.tb), p.m, p.n, p.k, al, cu(p.a.ptr), p.A.ld,
                       cu(p.b.ptr), p.B.ld, be, cu(p.c.ptr), p.C0.ld, o);
}

class ZgemmGpuChoice : public GpuTest {
 protected:
  void TearDown() override {
    ozdgemm::detail::clear_gpu_choice_override();
    GpuTest::TearDown();
  }
};

struct choice_case {
  char ta, tb;
  int64_t m, n, k;
  double phi;
  bool anti_aligned, fast, device_scalars;
};

TEST_F(ZgemmGpuChoice, SameSAndBitsAsTheHostChoice) {
  const choice_case cases[] = {
      {'N', 'N', 130, 70, 300, 1.0, false, true, false},
      {'C', 'T', 64, 48, 40, 2.0, false, true, true},
      {'T', 'C', 37, 29, 45, 0.5, false, false, false},
      {'N', 'C', 4, 3, 140000, 1.0, false, true, false},  // halves of two k-blocks
      {'N', 'N', 24, 20, 1024, 4.0, true, true, false},
      {'N', 'N', 24, 20, 1024, 4.0, true, false, true},
  };
  int emulated = 0, natives = 0;
  for (const choice_case& c : cases) {
    const uint64_t seed = 900 + c.m + 3 * c.n + 5 * c.k;
    zmatrix op_a, op_b;
    if (c.anti_aligned) {
      anti_aligned_zinputs(c.phi, c.m, c.n, c.k, seed, &op_a, &op_b);
    } else {
      op_a = phi_zmatrix(c.m, c.k, c.phi, seed);
      op_b = phi_zmatrix(c.k, c.n, c.phi, seed + 1);
    }
    zproblem p(c.ta, c.tb, op_a, op_b, 3, {-0.75, 0.5}, {0.25, -1.5}, seed + 2);
    if (c.device_scalars) {
      ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
    }
    const ozdgemm_options_t o = ozdgemm::test::zoptions(OZDGEMM_MODULI_CERTIFIED, c.fast);
    for (complex_form form : {complex_form::karatsuba, complex_form::four}) {
      ozdgemm::detail::set_complex_form_setting(form);
      const std::string what = std::string(1, c.ta) + c.tb + " " + std::to_string(c.m) + "x" +
                               std::to_string(c.n) + "x" + std::to_string(c.k) + " phi " +
                               std::to_string(c.phi) + (c.anti_aligned ? " anti-aligned " : " ") +
                               (c.fast ? "fast " : "accurate ") + form_name(form) +
                               (c.device_scalars ? " device scalars" : "");
      ozdgemm::detail::set_gpu_choice_everywhere(false);
      int s_host = -1;
      ASSERT_EQ(p.run(handle_, o, c.device_scalars, &s_host), OZDGEMM_STATUS_SUCCESS) << what;
      ASSERT_CUDA(cudaDeviceSynchronize());
      const std::vector<zdouble> host_chosen = p.c.to_host();

      ozdgemm::detail::set_gpu_choice_everywhere(true);
      const std::vector<unsigned long long> before = tally_now();
      ASSERT_EQ(run_chosen(p, handle_, o, c.device_scalars), OZDGEMM_STATUS_SUCCESS) << what;
      const int s_gpu = grown_slot(before, tally_now());
      const std::vector<zdouble> got = p.c.to_host();
      std::printf("[ zgemm gpu choice ] %s: s = %d (host %d)\n", what.c_str(), s_gpu, s_host);
      EXPECT_EQ(s_gpu, s_host) << what;
      if (s_host > 0) {
        ++emulated;
        EXPECT_EQ(differing(got, host_chosen), 0) << what;
        EXPECT_EQ(differing(got, p.reference(o)), 0) << what << ": the host reference";
      } else {
        ++natives;
        EXPECT_EQ(differing(got, native_on_embedding(p)), 0) << what << ": native on the embedding";
      }
    }
    ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
  }
  EXPECT_GE(emulated, 8) << "the emulated cases ran";
  EXPECT_GE(natives, 2) << "anti-aligned phi 4 defeats every s, as for DGEMM";
}

TEST_F(ZgemmGpuChoice, CapturedCallChoosesAgainAtEachReplay) {
  const int64_t m = 48, n = 40, k = 1024;
  zmatrix a[3], b[3];
  a[0] = phi_zmatrix(m, k, 0.5, 9101);
  b[0] = phi_zmatrix(k, n, 0.5, 9102);
  a[1] = phi_zmatrix(m, k, 2.0, 9103);
  b[1] = phi_zmatrix(k, n, 2.0, 9104);
  anti_aligned_zinputs(4.0, m, n, k, 9105, &a[2], &b[2]);
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  const ozdgemm_options_t o = ozdgemm_default_options();
  ozdgemm::detail::set_gpu_choice_everywhere(false);  // eager: the host's choice
  for (complex_form form : {complex_form::karatsuba, complex_form::four}) {
    ozdgemm::detail::set_complex_form_setting(form);
    // The same C0 (seed) for all three; the captured call uses the buffers of the first.
    std::vector<std::unique_ptr<zproblem>> in;
    for (int i = 0; i < 3; ++i)
      in.push_back(std::make_unique<zproblem>('N', 'C', a[i], b[i], 0, zdouble{1.5, -0.5},
                                              zdouble{-0.5, 0.25}, 9110));
    zproblem& d = *in[0];
    std::vector<zdouble> eager[3];
    int eager_s[3];
    for (int i = 0; i < 3; ++i) {  // also sizes the workspace before the capture
      ASSERT_EQ(in[i]->run(handle_, o, false, &eager_s[i]), OZDGEMM_STATUS_SUCCESS);
      ASSERT_CUDA(cudaStreamSynchronize(stream));
      eager[i] = eager_s[i] == 0 ? native_on_embedding(*in[i]) : in[i]->c.to_host();
    }
    EXPECT_GE(eager_s[0], ozdgemm::detail::kMinModuli);
    EXPECT_GE(eager_s[1], ozdgemm::detail::kMinModuli);
    EXPECT_EQ(eager_s[2], 0) << "anti-aligned phi 4: no s certifies";

    cudaGraph_t graph = nullptr;
    d.reset_c();
    ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const ozdgemm_status_t captured =
        ozdgemm_zgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_C, m, n, k, cu(&d.alpha), cu(d.a.ptr), d.A.ld,
                      cu(d.b.ptr), d.B.ld, cu(&d.beta), cu(d.c.ptr), d.C0.ld, o);
    ASSERT_CUDA(cudaStreamEndCapture(stream, &graph));
    ASSERT_EQ(captured, OZDGEMM_STATUS_SUCCESS);
    cudaGraphExec_t exec = nullptr;
    ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay)
      for (int i = 0; i < 3; ++i) {
        ASSERT_CUDA(cudaMemcpy(d.a.ptr, in[i]->A.data.data(),
                               in[i]->A.data.size() * sizeof(zdouble), cudaMemcpyHostToDevice));
        ASSERT_CUDA(cudaMemcpy(d.b.ptr, in[i]->B.data.data(),
                               in[i]->B.data.size() * sizeof(zdouble), cudaMemcpyHostToDevice));
        d.reset_c();
        const std::vector<unsigned long long> before = tally_now();
        ASSERT_CUDA(cudaGraphLaunch(exec, stream));
        ASSERT_CUDA(cudaStreamSynchronize(stream));
        EXPECT_EQ(grown_slot(before, tally_now()), eager_s[i]) << form_name(form) << " input " << i;
        EXPECT_EQ(differing(d.c.to_host(), eager[i]), 0)
            << form_name(form) << " input " << i << ", replay " << replay;
        std::printf("[ zgemm gpu choice ] captured, %s, replay %d input %d: s = %d\n",
                    form_name(form), replay, i, eager_s[i]);
      }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(stream);
}

}  // namespace
