// The certified moduli count chosen on the GPU (engine/gpu_choice.hpp), which ozdgemm_dgemm and
// the cuBLAS hooks use under graph capture always, and for eager calls where a test asks for it (set_gpu_choice_everywhere)
// (the tests set it with set_gpu_choice_everywhere):
//   - the same s as the host reference's certified choice (the GPU's tally counts it) and the
//     same bits, over the issue's sets, anti-aligned inputs, both scalings and three targets; a
//     call that no s serves gives native cublasDgemm's bits, in both pointer modes;
//   - no host synchronisation with the graph choice: behind a 200 ms spinning kernel on the
//     same stream, an emulated 4096^3 call returns to the host while the kernel still spins;
//   - graph capture: one captured call replayed on three inputs in the same buffers (one of them
//     anti-aligned, which no s serves) gives on each the s and the bits of the uncaptured call
//     chosen on the host (OZDGEMM_CHOICE=host).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "auto_fixture.hpp"
#include "choice_tally.hpp"
#include "core/gemm_problem.hpp"
#include "core/moduli.hpp"
#include "engine/gpu_choice.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.h"
#include "reference/auto_reference.hpp"
#include "spin_kernel.cuh"
#include "support/auto_inputs.hpp"
#include "support/inputs.hpp"

namespace {

using namespace ozdgemm::test::choice;
using ozdgemm::test::auto_case;
using ozdgemm::test::auto_set;
using ozdgemm::test::grown_slot;
using ozdgemm::test::host_matrix;
using ozdgemm::test::operand_pair;
using ozdgemm::test::tally_now;

size_t differing(const std::vector<double>& got, const std::vector<double>& want) {
  size_t diff = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], want[i])) ++diff;
  return diff;
}

// What the GPU choice's native fallback runs: cublasDgemm on a handle with no workspace (a CUDA
// graph conditional body cannot hold cuBLAS's split-k; engine/emulate.cpp, native_body), in the
// pointer mode given.
std::vector<double> native_without_workspace(device_problem& d, const host_matrix& c0,
                                             const double* alpha, const double* beta,
                                             bool device_mode) {
  cublasHandle_t h = nullptr;
  EXPECT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasSetWorkspace(h, nullptr, 0), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasSetPointerMode(h, device_mode ? CUBLAS_POINTER_MODE_DEVICE
                                                : CUBLAS_POINTER_MODE_HOST),
            CUBLAS_STATUS_SUCCESS);
  d.reset_c(c0);
  EXPECT_EQ(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d.m), static_cast<int>(d.n),
                        static_cast<int>(d.k), alpha, d.a.ptr, static_cast<int>(d.m), d.b.ptr,
                        static_cast<int>(d.k), beta, d.c.ptr, static_cast<int>(d.m)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cublasDestroy(h);
  return d.c.to_host();
}

// Every call chooses on the GPU in graph conditionals (the test override), whatever the
// environment.
class GpuChoiceTest : public AutoGpuTest {
 protected:
  void SetUp() override {
    ozdgemm::detail::set_gpu_choice_everywhere(true);
    AutoGpuTest::SetUp();
  }
  void TearDown() override {
    AutoGpuTest::TearDown();
    ozdgemm::detail::clear_gpu_choice_override();
  }
};

class GpuChoiceIdentity : public GpuChoiceTest,
                          public ::testing::WithParamInterface<certified_param> {};

TEST_P(GpuChoiceIdentity, SameSAndSameBitsAsTheHostReference) {
  const certified_param& prm = GetParam();
  const auto_case& c = prm.cc.c;
  const double alpha = -0.75, beta = 0.5;
  const certified_reference h = host_certified(prm, alpha, beta);
  const ozdgemm::detail::moduli_choice& hc = h.choice;
  const host_matrix& c0 = h.c0;
  device_problem d(h.in, c0);
  const std::vector<unsigned long long> before = tally_now();
  ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &alpha, d.a.ptr, c.m,
                          d.b.ptr, c.k, &beta, d.c.ptr, c.m,
                          certified_options(prm.fast ? OZDGEMM_SCALING_FAST : OZDGEMM_SCALING_ACCURATE,
                                            kTargets[prm.target].accuracy)),
            OZDGEMM_STATUS_SUCCESS);
  const std::vector<unsigned long long> after = tally_now();
  const std::vector<double> got = d.c.to_host();
  const int s_gpu = grown_slot(before, after);
  std::printf("[ gpu choice ] %s: s = %d (host %d)\n", prm.name().c_str(), s_gpu, hc.s);
  ASSERT_EQ(s_gpu, hc.s) << "host bound " << hc.predicted << " against " << hc.target;
  const std::vector<double> want =
      hc.s == 0 ? native_without_workspace(d, c0, &alpha, &beta, false) : h.ref.data;
  EXPECT_EQ(differing(got, want), 0u)
      << "elements differing from the " << (hc.s == 0 ? "native" : "reference") << " result";
}

// certified_params' cases, and two k-blocks (a fold inside each SWITCH body); several blocks of
// rows: row_blocks_test.cpp.
std::vector<certified_param> choice_params() {
  std::vector<certified_param> v = certified_params(7001, 8001);
  v.push_back({{{"phi1_deep", auto_set::phi, 1.0, 32, 16, 140000, 9001}, false}, true, 0});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Sets, GpuChoiceIdentity, ::testing::ValuesIn(choice_params()),
                         [](const ::testing::TestParamInfo<certified_param>& i) {
                           return i.param.name();
                         });

class GpuChoice : public GpuChoiceTest {};

// A call that no s serves runs native DGEMM inside the call: cublasDgemm's bits (on a handle with
// no workspace) in both pointer modes, and the caller's handle keeps its stream and pointer mode.
TEST_F(GpuChoice, NoCountServesNativeBitsInBothPointerModes) {
  const auto_case c{"phi8", auto_set::phi, 8.0, 300, 200, 256, 4243};
  const operand_pair in = ozdgemm::test::make_auto_inputs(c);
  const host_matrix c0 = ozdgemm::test::phi_matrix(c.m, c.n, 1.0, 98);
  device_problem d(in, c0);
  const double alpha = 0.75, beta = 2.0;
  const std::vector<double> native = native_without_workspace(d, c0, &alpha, &beta, false);
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  device_buffer<double> scalars(std::vector<double>{alpha, beta});
  for (bool device_mode : {false, true}) {
    for (ozdgemm_scaling_t mode : {OZDGEMM_SCALING_FAST, OZDGEMM_SCALING_ACCURATE}) {
      ASSERT_CUBLAS(cublasSetPointerMode(
          handle_, device_mode ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
      d.reset_c(c0);
      const std::vector<unsigned long long> before = tally_now();
      ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k,
                              device_mode ? scalars.ptr : &alpha, d.a.ptr, c.m, d.b.ptr, c.k,
                              device_mode ? scalars.ptr + 1 : &beta, d.c.ptr, c.m,
                              certified_options(mode, OZDGEMM_ACCURACY_NATIVE)),
                OZDGEMM_STATUS_SUCCESS);
      EXPECT_EQ(grown_slot(before, tally_now()), 0);
      const std::vector<double> got = d.c.to_host();
      EXPECT_EQ(differing(got, native), 0u) << (device_mode ? "device" : "host") << " pointer mode";
      cublasPointerMode_t pm;
      cudaStream_t st;
      ASSERT_CUBLAS(cublasGetPointerMode(handle_, &pm));
      ASSERT_CUBLAS(cublasGetStream(handle_, &st));
      EXPECT_EQ(pm, device_mode ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
      EXPECT_EQ(st, stream);
    }
  }
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(stream);
}

using ozdgemm::test::spin_cycles;
using ozdgemm::test::spin_kernel;

TEST_F(GpuChoiceTest, ReturnsBeforeASpinningKernelOnTheStreamEnds) {
  const int64_t n = 4096;
  const auto_case c{"phi0p5", auto_set::phi, 0.5, n, n, n, 5150};
  const operand_pair in = ozdgemm::test::make_auto_inputs(c);
  const host_matrix c0 = ozdgemm::test::make_matrix(n, n);
  device_problem d(in, c0);
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  const double alpha = 1.0, beta = 0.0;
  const ozdgemm_options_t o = ozdgemm_default_options();
  // Once to size the workspace and cache the graphs, as any first call does.
  ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, d.a.ptr, n, d.b.ptr,
                          n, &beta, d.c.ptr, n, o),
            OZDGEMM_STATUS_SUCCESS);
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  const std::vector<double> first = d.c.to_host();
  const std::vector<unsigned long long> before = tally_now();
  d.reset_c(c0);
  spin_kernel<<<1, 1, 0, stream>>>(spin_cycles(200.0));
  ASSERT_CUDA(cudaGetLastError());
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, d.a.ptr, n, d.b.ptr,
                          n, &beta, d.c.ptr, n, o),
            OZDGEMM_STATUS_SUCCESS);
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const cudaError_t pending = cudaStreamQuery(stream);
  std::printf("[ gpu choice ] 4096^3 behind a 200 ms spin: returned after %.3f ms, stream %s\n",
              host_ms, pending == cudaErrorNotReady ? "still busy" : "idle");
  EXPECT_EQ(pending, cudaErrorNotReady) << "the call waited for the spinning kernel";
  EXPECT_LT(host_ms, 100.0);
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  const int s = grown_slot(before, tally_now());
  EXPECT_GE(s, ozdgemm::detail::kMinModuli) << "phi 0.5 at 4096 is emulated";
  EXPECT_EQ(differing(d.c.to_host(), first), 0u);
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ozdgemm_release_handle(handle_);  // its workspace is freed on the stream it last used
  cudaStreamDestroy(stream);
}

TEST_F(GpuChoice, CapturedCallChoosesAgainAtEachReplay) {
  const int64_t m = 256, n = 192, k = 1024;
  const operand_pair inputs[] = {
      ozdgemm::test::make_auto_inputs({"phi0p5", auto_set::phi, 0.5, m, n, k, 6101}),
      ozdgemm::test::make_auto_inputs({"phi2", auto_set::phi, 2.0, m, n, k, 6102}),
      ozdgemm::test::anti_aligned_inputs(4.0, m, n, k, 6103),
  };
  const host_matrix c0 = ozdgemm::test::phi_matrix(m, n, 1.0, 6104);
  device_problem d(inputs[0], c0);
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  const double alpha = 1.5, beta = -0.5;
  const ozdgemm_options_t o = ozdgemm_default_options();
  // Eager calls choose on the host (OZDGEMM_CHOICE=host), captured ones on the GPU.
  ozdgemm::detail::set_gpu_choice_everywhere(false);
  auto load = [&](const operand_pair& in) {
    ASSERT_CUDA(cudaMemcpy(d.a.ptr, in.a.data.data(), in.a.data.size() * 8, cudaMemcpyHostToDevice));
    ASSERT_CUDA(cudaMemcpy(d.b.ptr, in.b.data.data(), in.b.data.size() * 8, cudaMemcpyHostToDevice));
    d.reset_c(c0);
  };
  auto call = [&] {
    return ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d.a.ptr, m, d.b.ptr,
                         k, &beta, d.c.ptr, m, o);
  };
  // The uncaptured results and counts (the host's choice, reported by the _ex entry), which
  // also size the workspace before the capture.
  std::vector<double> eager[3];
  int eager_s[3];
  for (int i = 0; i < 3; ++i) {
    load(inputs[i]);
    ASSERT_EQ(call(), OZDGEMM_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    eager[i] = d.c.to_host();
    load(inputs[i]);
    ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d.a.ptr, m,
                               d.b.ptr, k, &beta, d.c.ptr, m, o, &eager_s[i]),
              OZDGEMM_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    if (eager_s[i] == 0) {
      // No s serves: the eager call ran native on the caller's handle, the captured one runs it
      // on the library's handle with no workspace (native_without_workspace).
      eager[i] = native_without_workspace(d, c0, &alpha, &beta, false);
    }
  }
  EXPECT_EQ(eager_s[2], 0) << "anti-aligned phi 4: no s certifies, native DGEMM";
  EXPECT_GE(eager_s[0], ozdgemm::detail::kMinModuli);
  EXPECT_NE(eager_s[0], eager_s[1]) << "the sets should need different counts";

  cudaGraph_t graph = nullptr;
  ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const ozdgemm_status_t captured = call();
  ASSERT_CUDA(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(captured, OZDGEMM_STATUS_SUCCESS);
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay)  // twice round: the same bits every time
    for (int i = 0; i < 3; ++i) {
      load(inputs[i]);
      const std::vector<unsigned long long> before = tally_now();
      ASSERT_CUDA(cudaGraphLaunch(exec, stream));
      ASSERT_CUDA(cudaStreamSynchronize(stream));
      EXPECT_EQ(grown_slot(before, tally_now()), eager_s[i]) << "input " << i;
      EXPECT_EQ(differing(d.c.to_host(), eager[i]), 0u) << "input " << i << ", replay " << replay;
      std::printf("[ gpu choice ] replay %d input %d: s = %d\n", replay, i, eager_s[i]);
    }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(stream);
}

// ozdgemm_dgemm_ex reports s, so it chooses on the host (one synchronisation): the same s and
// bits as the GPU's choice.
TEST_F(GpuChoice, HostChoiceOfTheExEntryGivesTheSameBits) {
  const auto_case c{"phi2", auto_set::phi, 2.0, 200, 150, 700, 6201};
  const operand_pair in = ozdgemm::test::make_auto_inputs(c);
  const host_matrix c0 = ozdgemm::test::phi_matrix(c.m, c.n, 1.0, 6202);
  device_problem d(in, c0);
  const double alpha = 1.0, beta = 1.0;
  for (ozdgemm_scaling_t mode : {OZDGEMM_SCALING_FAST, OZDGEMM_SCALING_ACCURATE}) {
    const ozdgemm_options_t o = certified_options(mode, OZDGEMM_ACCURACY_NATIVE);
    d.reset_c(c0);
    const std::vector<unsigned long long> before = tally_now();
    ASSERT_EQ(ozdgemm_dgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &alpha, d.a.ptr, c.m,
                            d.b.ptr, c.k, &beta, d.c.ptr, c.m, o),
              OZDGEMM_STATUS_SUCCESS);
    const int s_gpu = grown_slot(before, tally_now());
    const std::vector<double> on_gpu = d.c.to_host();
    d.reset_c(c0);
    int s_host = -1;
    ASSERT_EQ(ozdgemm_dgemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &alpha, d.a.ptr,
                               c.m, d.b.ptr, c.k, &beta, d.c.ptr, c.m, o, &s_host),
              OZDGEMM_STATUS_SUCCESS);
    ASSERT_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(s_gpu, s_host);
    EXPECT_EQ(differing(d.c.to_host(), on_gpu), 0u);
  }
}

}  // namespace
