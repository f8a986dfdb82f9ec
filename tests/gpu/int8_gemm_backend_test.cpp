// The two INT8 GEMM backends (engine/int8_gemm.hpp) give the same bits: integer GEMM with INT32
// accumulation is exact whichever algorithm runs it, so OZDGEMM_INT8_GEMM=lt must reproduce the
// default cublas backend bit for bit, through the C API and through the engine, with k-blocks,
// strided batches and one GEMM per modulus, odd leading dimensions, a large shape whose
// algorithm is timed, under CUDA graph capture, when cuBLASLt fails (the fallback), and when
// timing hands a shape to cublasGemmEx. Each test also checks, with the lt backend's counters,
// that cuBLASLt really served the GEMMs, so that no comparison is cublas against itself; for a
// large (timed) shape, cuBLASLt or cublasGemmEx chosen by that timing, whichever won on the GPU.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "engine/emulate.hpp"
#include "engine/handle_context.hpp"
#include "engine/int8_gemm.hpp"
#include "engine/int8_gemm_lt.hpp"
#include "engine_product.hpp"
#include "gpu_fixture.hpp"
#include "ozdgemm/ozdgemm.hpp"

namespace {

using namespace ozdgemm::detail;

// Restores the environment's backend (and no test failures injected) however a test ends.
struct backend_scope {
  ~backend_scope() {
    set_int8_gemm_setting(int8_gemm_backend::setting);
    lt_fail_next_for_testing(0);
    lt_prefer_cublas_next_for_testing(0);
  }
};

std::vector<double> random_values(size_t count, double phi, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  std::vector<double> x(count);
  for (double& e : x) e = nd(g) * std::exp(phi * nd(g));
  return x;
}

struct api_case {
  int64_t m, n, k;
  cublasOperation_t ta, tb;
  int64_t pad;  // added to every leading dimension (odd: unaligned columns)
  int s;
  ozdgemm::scaling mode;
};

// The operands of one case, on the device, and C's initial value (beta = 0.5 reads it).
struct api_inputs {
  int64_t lda, ldb, ldc;
  std::vector<double> c0;
  device_buffer<double> a, b;
  explicit api_inputs(const api_case& t)
      : lda((t.ta == CUBLAS_OP_N ? t.m : t.k) + t.pad),
        ldb((t.tb == CUBLAS_OP_N ? t.k : t.n) + t.pad),
        ldc(t.m + t.pad),
        c0(random_values(ldc * t.n, 0.0, 3)),
        a(random_values(lda * (t.ta == CUBLAS_OP_N ? t.k : t.m), 1.5, 1)),
        b(random_values(ldb * (t.tb == CUBLAS_OP_N ? t.n : t.k), 0.5, 2)) {}
};

// C after ozdgemm::dgemm with the process-wide backend set to `backend`.
std::vector<double> run_api(cublasHandle_t h, int8_gemm_backend backend, const api_case& t,
                            const api_inputs& in) {
  set_int8_gemm_setting(backend);
  device_buffer<double> c(in.c0);
  const double alpha = 1.0, beta = 0.5;
  ozdgemm::options o;
  o.num_moduli = t.s;
  o.scaling = t.mode;
  EXPECT_EQ(ozdgemm::dgemm(h, t.ta, t.tb, t.m, t.n, t.k, &alpha, in.a.ptr, in.lda, in.b.ptr,
                           in.ldb, &beta, c.ptr, in.ldc, o),
            OZDGEMM_STATUS_SUCCESS);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return c.to_host();
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

// Entries that differ from C's initial value: the comparison must be over real results.
int64_t written(const std::vector<double>& c, const std::vector<double>& c0) {
  int64_t n = 0;
  for (size_t i = 0; i < c.size(); ++i) n += c[i] != c0[i];
  return n;
}

// The lt backend's counters from construction on: done() prints how they moved, under
// `what`, and returns that change for the checks.
class lt_watch {
 public:
  lt_counts done(const char* what) const {
    const lt_counts now = lt_counts_now();
    const lt_counts d{now.matmuls - start_.matmuls, now.fallbacks - start_.fallbacks,
                      now.plans - start_.plans, now.timed - start_.timed,
                      now.cublas_chosen - start_.cublas_chosen};
    std::printf(
        "[ lt       ] %s: %lld cuBLASLt matmuls, %lld fallbacks, %lld plans, %lld timed, "
        "%lld cublasGemmEx by choice\n",
        what, d.matmuls, d.fallbacks, d.plans, d.timed, d.cublas_chosen);
    return d;
  }

 private:
  const lt_counts start_ = lt_counts_now();
};

// GEMMs the lt backend served as it chose: on cuBLASLt, or on cublasGemmEx where timing found
// that faster (fallbacks excluded).
long long served(const lt_counts& d) { return d.matmuls + d.cublas_chosen; }

// The suite of this file: GpuTest (skips without a device, one cuBLAS handle per test).
class Int8GemmBackend : public GpuTest {};

TEST_F(Int8GemmBackend, LtBackendMatchesCublasBitwiseThroughTheCApi) {
  backend_scope restore;
  const api_case cases[] = {
      {300, 200, 500, CUBLAS_OP_N, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::accurate},
      {300, 200, 500, CUBLAS_OP_T, CUBLAS_OP_N, 3, 14, ozdgemm::scaling::fast},  // odd ld
      {257, 129, 1001, CUBLAS_OP_N, CUBLAS_OP_T, 7, 20, ozdgemm::scaling::accurate},
      {5, 3, 131056 + 77, CUBLAS_OP_T, CUBLAS_OP_N, 1, 16, ozdgemm::scaling::fast},  // 2 k-blocks
      {5, 3, 131056 + 77, CUBLAS_OP_T, CUBLAS_OP_N, 0, 8, ozdgemm::scaling::accurate},
      {1024, 1024, 1024, CUBLAS_OP_N, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::fast},
  };
  for (const api_case& t : cases) {
    SCOPED_TRACE(testing::Message() << t.m << "x" << t.n << "x" << t.k << " s=" << t.s
                                    << " pad=" << t.pad);
    api_inputs in(t);
    const auto ref = run_api(handle_, int8_gemm_backend::cublas, t, in);
    const lt_watch watch;
    const auto lt = run_api(handle_, int8_gemm_backend::lt, t, in);
    const lt_counts d = watch.done("C API case");
    EXPECT_TRUE(same_bits(ref, lt)) << "OZDGEMM_INT8_GEMM=lt changed the result";
    // The 1024^3 case is timed, and cublasGemmEx may win it; the others run on cuBLASLt.
    EXPECT_GT(served(d), 0) << "the lt backend served none of the GEMMs";
    EXPECT_GT(written(ref, in.c0), t.m * t.n / 2);
  }
  ozdgemm_release_handle(handle_);
}

TEST_F(Int8GemmBackend, LtBackendMatchesCublasBitwiseBatchedAndLooped) {
  backend_scope restore;
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  for (scaling_mode mode : {scaling_mode::fast, scaling_mode::accurate})
    for (gemm_batching batching : {gemm_batching::batched, gemm_batching::looped})
      for (const auto& shape : {std::vector<int64_t>{300, 200, 500},
                                std::vector<int64_t>{5, 3, 131056 + 77}}) {  // two k-blocks
        const int64_t m = shape[0], n = shape[1], k = shape[2];
        SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " "
                                        << (batching == gemm_batching::batched ? "batched"
                                                                               : "looped"));
        const auto ha = random_values(m * k, 2.0, 5), hb = random_values(n * k, 0.0, 6);
        const auto ref = ozdgemm::gpu_test::run_engine(handle_, int8_gemm_backend::cublas, batching,
                                                       mode, m, n, k, ha, hb);
        const lt_watch watch;
        const auto lt = ozdgemm::gpu_test::run_engine(handle_, int8_gemm_backend::lt, batching,
                                                      mode, m, n, k, ha, hb);
        const lt_counts d = watch.done("engine case");
        EXPECT_TRUE(same_bits(ref, lt));
        EXPECT_GT(d.matmuls, 0) << "cuBLASLt served none of the GEMMs";  // small: never timed
        int64_t nonzero = 0;
        for (double x : ref) nonzero += x != 0.0;
        EXPECT_GT(nonzero, m * n / 2) << "the comparison must be over real results";
      }
}

// 2048 x 2064 x 2048, s = 14, fast: one strided-batched INT8 GEMM of 14 x 2^33 multiply-adds,
// over the timing threshold. Its plan is made once (the second call makes none) and timed
// (cuBLASLt's candidates and cublasGemmEx), the faster serves both calls, and the bits are
// cublas's.
TEST_F(Int8GemmBackend, LtBackendTimesALargeShapeOnceAndMatches) {
  backend_scope restore;
  const api_case t{2048, 2064, 2048, CUBLAS_OP_N, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::fast};
  api_inputs in(t);
  const auto ref = run_api(handle_, int8_gemm_backend::cublas, t, in);
  const lt_watch w1;
  const auto first = run_api(handle_, int8_gemm_backend::lt, t, in);
  const lt_counts d1 = w1.done("first large call");
  const lt_watch w2;
  const auto second = run_api(handle_, int8_gemm_backend::lt, t, in);
  const lt_counts d2 = w2.done("second large call");
  EXPECT_TRUE(same_bits(ref, first));
  EXPECT_TRUE(same_bits(ref, second));
  EXPECT_EQ(d1.plans, 1) << "one GEMM shape: one plan";
  EXPECT_EQ(d1.timed, 1) << "a large shape is timed on its first call";
  EXPECT_EQ(d2.plans, 0) << "the plan is cached";
  EXPECT_EQ(d2.timed, 0) << "timing happens once per shape";
  EXPECT_GT(served(d1), 0);
  EXPECT_GT(served(d2), 0);
  EXPECT_EQ(d1.fallbacks + d2.fallbacks, 0);
  EXPECT_EQ(d2.cublas_chosen > 0, d1.cublas_chosen > 0) << "the cached plan keeps the choice";
  ozdgemm_release_handle(handle_);
}

// Two lt calls of case t after a cublas reference, with cublasGemmEx made to win the first
// call's timing by the test hook (whatever the GPU measures); the second reuses the plans.
// Checks what both tests below share: cublas's bits from both calls over real results, and no
// GEMM on cuBLASLt or through a fallback in either.
struct cublas_won {
  lt_counts first, second;
};

cublas_won run_lt_with_cublas_winning(cublasHandle_t h, const api_case& t, const char* what) {
  api_inputs in(t);
  const auto ref = run_api(h, int8_gemm_backend::cublas, t, in);
  lt_prefer_cublas_next_for_testing(1);
  const lt_watch w1;
  const auto first = run_api(h, int8_gemm_backend::lt, t, in);
  const lt_counts d1 = w1.done(what);
  lt_prefer_cublas_next_for_testing(0);
  const lt_watch w2;
  const auto second = run_api(h, int8_gemm_backend::lt, t, in);
  const lt_counts d2 = w2.done("the plans reused");
  EXPECT_TRUE(same_bits(ref, first));
  EXPECT_TRUE(same_bits(ref, second));
  EXPECT_GT(written(ref, in.c0), t.m * t.n / 2);
  EXPECT_EQ(d1.matmuls, 0) << "the shape's GEMMs go to cublasGemmEx";
  EXPECT_EQ(d2.matmuls, 0);
  EXPECT_EQ(d1.fallbacks, 0) << "a choice, not a fallback";
  EXPECT_EQ(d2.fallbacks, 0);
  EXPECT_EQ(d2.plans, 0) << "the plans are cached";
  EXPECT_EQ(d2.timed, 0) << "timing happens once per shape";
  EXPECT_EQ(d2.cublas_chosen, d1.cublas_chosen);
  return {d1, d2};
}

// A timed shape that cublasGemmEx wins is handed to cublasGemmEx by its plan: cublas's bits,
// counted as chosen and not as a fallback, and the next call reuses the plan the same way.
TEST_F(Int8GemmBackend, LtBackendHandsATimedShapeToCublasGemmExWhenItWins) {
  backend_scope restore;
  const api_case t{2048, 2112, 2048, CUBLAS_OP_N, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::fast};
  const cublas_won r = run_lt_with_cublas_winning(handle_, t, "timing chose cublasGemmEx");
  EXPECT_EQ(r.first.plans, 1);
  EXPECT_EQ(r.first.timed, 1);
  EXPECT_GT(r.first.cublas_chosen, 0);
  ozdgemm_release_handle(handle_);
}

// A long k: the first k-block overwrites C and is timed (cublasGemmEx made to win); the second
// accumulates, cannot be timed, and starts 131056 bytes into the operands (another alignment,
// so another plan): it follows the first block's choice, so that no k-block of the product
// runs on cuBLASLt. 80 x 80 x 2 k-blocks, s = 14: each block's batched GEMM is over 2^33.
TEST_F(Int8GemmBackend, LtBackendLaterKBlocksFollowTheTimedChoice) {
  backend_scope restore;
  const api_case t{80, 80, 2 * 131056, CUBLAS_OP_T, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::fast};
  const cublas_won r =
      run_lt_with_cublas_winning(handle_, t, "two k-blocks, timing chose cublasGemmEx");
  EXPECT_GE(r.first.plans, 1);
  EXPECT_EQ(r.first.timed, 1) << "only the first k-block overwrites C";
  EXPECT_GE(r.first.cublas_chosen, 2) << "both k-blocks";
  ozdgemm_release_handle(handle_);
}

// Graph capture: a captured call replays the bits of an eager cublas call, for a shape whose
// plan exists (made eagerly) and for shapes first seen under capture: a small one, and a large
// one, which gets the heuristic's first algorithm without timing (no synchronisation may
// happen under capture) and is timed by the next eager call that overwrites its C.
TEST_F(Int8GemmBackend, LtBackendUnderGraphCapture) {
  backend_scope restore;
  cudaStream_t st;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, st));
  const api_case big{2048, 2096, 2048, CUBLAS_OP_N, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::fast};
  const api_case cases[] = {
      big,  // plan made eagerly below
      {300, 200, 500, CUBLAS_OP_N, CUBLAS_OP_T, 5, 14, ozdgemm::scaling::accurate},
      {2048, 2080, 2048, CUBLAS_OP_N, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::fast},
  };
  // The eager call grows the workspace to the largest need (it cannot grow under capture).
  api_inputs big_in(big);
  (void)run_api(handle_, int8_gemm_backend::lt, big, big_in);
  const double alpha = 1.0, beta = 0.5;
  for (const api_case& t : cases) {
    SCOPED_TRACE(testing::Message() << t.m << "x" << t.n << "x" << t.k);
    api_inputs in(t);
    const auto ref = run_api(handle_, int8_gemm_backend::cublas, t, in);
    set_int8_gemm_setting(int8_gemm_backend::lt);
    device_buffer<double> c(in.c0);
    ozdgemm::options o;
    o.num_moduli = t.s;
    o.scaling = t.mode;
    const lt_watch watch;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    ASSERT_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    const ozdgemm_status_t status =
        ozdgemm::dgemm(handle_, t.ta, t.tb, t.m, t.n, t.k, &alpha, in.a.ptr, in.lda, in.b.ptr,
                       in.ldb, &beta, c.ptr, in.ldc, o);
    ASSERT_CUDA(cudaStreamEndCapture(st, &graph));
    ASSERT_EQ(status, OZDGEMM_STATUS_SUCCESS);
    const lt_counts captured = watch.done("captured call");
    EXPECT_EQ(captured.timed, 0) << "no timing under capture";
    // The eager big call's timing may have handed that shape to cublasGemmEx.
    EXPECT_GT(served(captured), 0) << "the lt backend served none of the GEMMs";
    ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    ASSERT_CUDA(cudaGraphLaunch(exec, st));
    ASSERT_CUDA(cudaStreamSynchronize(st));
    EXPECT_TRUE(same_bits(ref, c.to_host()));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  // The large shape first seen under capture is timed by the next eager call.
  const api_case& late = cases[2];
  api_inputs in(late);
  const auto ref = run_api(handle_, int8_gemm_backend::cublas, late, in);
  const lt_watch watch;
  const auto lt = run_api(handle_, int8_gemm_backend::lt, late, in);
  const lt_counts d = watch.done("eager call after capture");
  EXPECT_TRUE(same_bits(ref, lt));
  EXPECT_EQ(d.plans, 1) << "the provisional plan is replaced, once";
  EXPECT_EQ(d.timed, 1);
  EXPECT_GT(served(d), 0);
  ozdgemm_release_handle(handle_);
  cudaStreamDestroy(st);
}

// A cuBLASLt call that fails hands its GEMM to cublasGemmEx: same bits, nothing lost.
TEST_F(Int8GemmBackend, LtFailureFallsBackToCublasWithTheSameBits) {
  backend_scope restore;
  const api_case t{300, 200, 500, CUBLAS_OP_N, CUBLAS_OP_N, 1, 14, ozdgemm::scaling::accurate};
  api_inputs in(t);
  const auto ref = run_api(handle_, int8_gemm_backend::cublas, t, in);
  lt_fail_next_for_testing(1 << 20);  // every GEMM of the call
  const lt_watch watch;
  const auto failed = run_api(handle_, int8_gemm_backend::lt, t, in);
  const lt_counts d = watch.done("failing cuBLASLt");
  lt_fail_next_for_testing(0);
  EXPECT_TRUE(same_bits(ref, failed));
  EXPECT_EQ(d.matmuls, 0);
  EXPECT_GT(d.fallbacks, 0);
  EXPECT_EQ(d.cublas_chosen, 0) << "a failure is not a choice";
  // One failure only (the accurate mode's bound GEMM; the modulus GEMMs follow in one
  // strided batch): the call mixes both backends, still the same bits.
  lt_fail_next_for_testing(1);
  const lt_watch mixed_watch;
  const auto mixed = run_api(handle_, int8_gemm_backend::lt, t, in);
  const lt_counts m = mixed_watch.done("one failing cuBLASLt call");
  EXPECT_TRUE(same_bits(ref, mixed));
  EXPECT_GE(m.fallbacks, 1);
  EXPECT_GT(m.matmuls, 0);
  ozdgemm_release_handle(handle_);
}

// The lt backend's workspace counts against OZDGEMM_MAX_WORKSPACE: a cap that fits the cublas
// backend's workspace but not the lt one refuses the call (ALLOC_FAILED, C untouched); the lt
// workspace exactly succeeds, with cublas's bits.
TEST_F(Int8GemmBackend, LtWorkspaceIsCountedByTheWorkspaceCap) {
  backend_scope restore;
  struct cap_scope {
    ~cap_scope() { set_workspace_cap(0); }
  } cap_restore;
  const api_case t{384, 384, 384, CUBLAS_OP_N, CUBLAS_OP_N, 0, 14, ozdgemm::scaling::accurate};
  api_inputs in(t);
  const auto ref = run_api(handle_, int8_gemm_backend::cublas, t, in);
  ozdgemm_release_handle(handle_);  // the workspace grows from nothing below
  const size_t need_cublas = emulation_workspace_bytes(
      t.m, t.n, t.k, moduli_setting::fixed(t.s), scaling_mode::accurate, int8_gemm_backend::cublas);
  const size_t need_lt = emulation_workspace_bytes(t.m, t.n, t.k, moduli_setting::fixed(t.s),
                                                   scaling_mode::accurate, int8_gemm_backend::lt);
  ASSERT_GT(need_lt, need_cublas);
  set_int8_gemm_setting(int8_gemm_backend::lt);
  set_workspace_cap(need_lt - 1);
  device_buffer<double> c(in.c0);
  const double alpha = 1.0, beta = 0.5;
  ozdgemm::options o;
  EXPECT_EQ(ozdgemm::dgemm(handle_, t.ta, t.tb, t.m, t.n, t.k, &alpha, in.a.ptr, in.lda, in.b.ptr,
                           in.ldb, &beta, c.ptr, in.ldc, o),
            OZDGEMM_STATUS_ALLOC_FAILED);
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(same_bits(c.to_host(), in.c0)) << "a refused call wrote C";
  set_workspace_cap(need_lt);
  const auto lt = run_api(handle_, int8_gemm_backend::lt, t, in);
  EXPECT_TRUE(same_bits(ref, lt));
  ozdgemm_release_handle(handle_);
}

}  // namespace
